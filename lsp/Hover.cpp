#include "lsp/Hover.h"

#include "lsp/Compilation.h"
#include "lsp/Positions.h"
#include "scheduler/analysis/Report.h"

#include "support/Format.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace dfl::lsp {
namespace {

std::string shapeText(const TensorShape &s) {
  return "[C=" + std::to_string(s.C) + ", X=" + std::to_string(s.X) + ", Y=" + std::to_string(s.Y) + "]";
}

std::string layerHover(const Network &net, const Layer &l) {
  std::ostringstream os;
  os << "**" << l.name << "** = " << l.kindName() << " (network " << net.name << ")\n\n";
  os << "ifm " << shapeText(l.ifmShape) << " → ofm " << shapeText(l.ofmShape);
  if (l.hasWeights())
    os << ", weights " << l.wgtSize << " words";
  os << "\n\nloop bounds:";
  for (Dim d : {Dim::N, Dim::C, Dim::K, Dim::Xi, Dim::Yi, Dim::Xo, Dim::Yo, Dim::R, Dim::S})
    os << " " << dimName(d) << "=" << (d == Dim::N ? net.batch : at(l.bounds, d));
  if (l.macs)
    os << "\n\nMACs: " << l.macs * net.batch << " (batch of " << net.batch << ")";
  if (l.ops)
    os << "\n\nops: " << l.ops * net.batch << " (batch of " << net.batch << ")";
  return os.str();
}

std::string hardwareLevelHover(const Hardware &hw, const Level &lv) {
  std::ostringstream os;
  os << "**" << lv.name << "** (level of " << hw.name << ")\n\n";
  os << "capacity: " << (lv.capacityBytes ? std::to_string(*lv.capacityBytes) + " B" : "unbounded") << "\n\n";
  // With `buffer` blocks the energies and ports are the buffers' (§7, §8).
  const bool buffers = !lv.buffers.front().implicit;
  if (buffers) {
    os << "buffers:";
    for (const Buffer &b : lv.buffers) {
      os << "\n- **" << b.name << "**: holds " << rolesText(b.roles) << ", "
         << (b.capacityBytes ? std::to_string(*b.capacityBytes) + " B" : "unbounded") << ", "
         << formatNumber(b.readEnergyPj) << " pJ/word";
      if (b.bandwidthBytesPerCycle)
        os << ", " << formatNumber(*b.bandwidthBytesPerCycle) << " B/cycle per unit";
    }
    os << "\n\n";
  }
  if (lv.bypasses())
    os << "bypass: " << bypassText(lv) << " this level\n\n";
  os << "array: " << lv.rows << " x " << lv.cols << " (" << lv.units() << " units)\n\n";
  if (!buffers) {
    if (lv.readEnergyPj == lv.writeEnergyPj)
      os << "access energy: " << formatNumber(lv.readEnergyPj) << " pJ/word\n\n";
    else
      os << "access energy: " << formatNumber(lv.readEnergyPj) << " pJ/word read, " << formatNumber(lv.writeEnergyPj)
         << " pJ/word written\n\n";
  }
  if (lv.busEnergyPj > 0)
    os << "array bus: " << formatNumber(lv.busEnergyPj) << " pJ/word to a unit inside\n\n";
  if (lv.staticEnergyPj > 0)
    os << "static: " << formatNumber(lv.staticEnergyPj) << " pJ/cycle per unit\n\n";
  if (!buffers)
    os << "bandwidth: "
       << (lv.bandwidthBytesPerCycle ? formatNumber(*lv.bandwidthBytesPerCycle) + " B/cycle per unit" : "unbounded")
       << "\n\n";
  std::vector<std::string> transfers;
  for (Transfer t : kTransfers)
    if (lv.can(t))
      transfers.push_back(transferName(t));
  os << "transfers: " << joinList(transfers, ", ", ", ");
  return os.str();
}

std::string scheduleLevelHover(const Model &m, const Schedule &s, const LayerResult &lr, int levelIdx) {
  const Network &net = m.networks[s.network];
  const Hardware &hw = m.hardware[s.hardware];
  const Layer &layer = net.layers[lr.layer];
  const Level &lv = hw.levels[levelIdx];
  std::ostringstream os;
  os << "**" << lv.name << "** for layer " << layer.name << " (" << net.name << " on " << hw.name << ")\n\n";
  const LevelResult *r = nullptr;
  for (const LevelResult &x : lr.levels)
    if (x.level == levelIdx)
      r = &x;
  if (!r || !r->known) {
    os << "not given: `dflc` fills this level in";
    return os.str();
  }
  os << "| | ";
  std::vector<TensorRole> roles = layer.roles();
  for (TensorRole role : roles)
    os << roleName(role) << " | ";
  os << "\n|---|";
  for (size_t i = 0; i < roles.size(); ++i)
    os << "---|";
  auto row = [&](const char *label, auto value) {
    os << "\n| " << label << " | ";
    for (TensorRole role : roles)
      os << value(static_cast<size_t>(role)) << " | ";
  };
  row("tile (words)", [&](size_t i) { return r->tiles[i].present ? std::to_string(r->tiles[i].words) : "-"; });
  // Accesses and energy count every level's trips: unknown in a partial layer.
  const bool counted = lr.complete && lr.valid;
  if (counted) {
    row("reads", [&](size_t i) { return formatNumber(r->accesses.reads[i]); });
    row("writes", [&](size_t i) { return formatNumber(r->accesses.writes[i]); });
  }
  os << "\n\noccupancy: " << r->occupancyBytes << " B";
  if (lv.capacityBytes)
    os << " of " << *lv.capacityBytes << " B (" << percent(double(r->occupancyBytes), double(*lv.capacityBytes)) << ")";
  // Per buffer where the level has several (the check is per buffer, §5).
  if (!lv.buffers.front().implicit)
    for (size_t b = 0; b < lv.buffers.size(); ++b) {
      const Buffer &buf = lv.buffers[b];
      os << "\n- " << buf.name << " (" << rolesText(buf.roles) << "): " << r->bufferBytes[b] << " B";
      if (buf.capacityBytes)
        os << " of " << *buf.capacityBytes << " B (" << percent(double(r->bufferBytes[b]), double(*buf.capacityBytes))
           << ")";
    }
  if (lv.bypasses())
    os << "\n\n" << bypassText(lv) << " this level: routed past it, neither held nor counted here";
  os << "\n\nunits: " << r->units << " of " << lv.units() << " (array " << lv.rows << " x " << lv.cols << ")";
  if (!r->trips.empty())
    os << "\n\ntrip counts (innermost first): " << tripCountsText(r->trips);
  if (counted)
    os << "\n\nenergy: " << formatNumber(r->energyPj) << " pJ (" << percent(r->energyPj, lr.energyPj) << " of the layer)";
  else
    os << "\n\naccesses and energy: unknown until every level of " << layer.name << " is given";
  return os.str();
}

} // namespace

std::string percent(double part, double whole) { return formatFixed(whole > 0 ? 100.0 * part / whole : 0.0, 1) + "%"; }

std::optional<Hover> findHover(const Compilation &c, Position pos) {
  if (!c.analyzed)
    return std::nullopt;
  const Model &m = c.model;
  auto scheduleAt = [&](SourceRange declRange) -> std::pair<const Schedule *, const ScheduleResult *> {
    for (const CheckedSchedule &cs : c.checked)
      if (m.schedules[cs.schedule].range == declRange)
        return {&m.schedules[cs.schedule], &cs.result};
    return {nullptr, nullptr};
  };
  auto levelHover = [&](SourceRange sched, const std::string &layerName, const std::string &levelName)
      -> std::optional<std::string> {
    auto [s, r] = scheduleAt(sched);
    if (!s)
      return std::nullopt;
    int li = m.networks[s->network].findLayer(layerName), lv = m.hardware[s->hardware].findLevel(levelName);
    if (li < 0 || lv < 0 || static_cast<size_t>(li) >= r->layers.size())
      return std::nullopt;
    return scheduleLevelHover(m, *s, r->layers[li], lv);
  };

  if (const Occurrence *o = occurrenceAt(c, pos)) {
    std::optional<std::string> text;
    using K = Occurrence::Kind;
    if (o->kind == K::Tensor) {
      if (const Network *net = findNetwork(m, o->scope)) {
        auto ref = net->names.find(o->name);
        if (ref != net->names.end() && ref->second.isInput) {
          const Input &in = net->inputs.at(ref->second.index);
          text = "**" + in.name + "**: input of " + net->name + " " + shapeText(in.shape) + ", batch " +
                 std::to_string(net->batch);
        } else if (ref != net->names.end()) {
          text = layerHover(*net, net->layers.at(ref->second.index));
          // In a schedule: what this layer costs there, once its directives are complete.
          auto [sched, result] = o->schedule.valid() ? scheduleAt(o->schedule)
                                                     : std::pair<const Schedule *, const ScheduleResult *>{};
          const LayerResult *lr = result && static_cast<size_t>(ref->second.index) < result->layers.size()
                                      ? &result->layers[ref->second.index]
                                      : nullptr;
          if (lr && lr->complete && lr->valid) {
            const Hardware &hw = m.hardware[sched->hardware];
            *text += "\n\nin this schedule: energy " + formatNumber(lr->energyPj) + " pJ, latency " + formatNumber(lr->latencyCycles) +
                     " cycles (bound by " + (lr->bindingLevel < 0 ? "compute" : hw.levels[lr->bindingLevel].name) +
                     "), utilization " + percent(lr->utilization, 1.0) +
                     (lr->unit >= 0 ? ", on vector unit " + hw.vectors[static_cast<size_t>(lr->unit)].name : "");
          }
        }
      }
    } else if (o->kind == K::Network) {
      if (const Network *net = findNetwork(m, o->scope))
        text = "**network " + net->name + "**: " + std::to_string(net->layers.size()) + " layers, batch " +
               std::to_string(net->batch) + ", " + std::to_string(net->totalMacs()) + " MACs";
    } else if (o->kind == K::Hardware) {
      if (const Hardware *hw = findHardware(m, o->scope)) {
        std::vector<std::string> levels;
        for (const Level &l : hw->levels)
          levels.push_back(l.name);
        text = "**hardware " + hw->name + "**: " + std::to_string(hw->wordBits) + "-bit words, " +
               (hw->wgtBits ? std::to_string(*hw->wgtBits) + "-bit weights, " : "") +
               (hw->psumBits ? std::to_string(*hw->psumBits) + "-bit partial sums, " : "") +
               formatNumber(hw->frequencyHz / 1e6) + " MHz, levels " + joinList(levels, ", ", ", ");
      }
    } else if (!o->scheduleLayer.empty()) {
      text = levelHover(o->schedule, o->scheduleLayer, o->name);
    } else if (const Hardware *hw = findHardware(m, o->scope)) {
      int li = hw->findLevel(o->name);
      if (li >= 0) {
        text = hardwareLevelHover(*hw, hw->levels[li]);
        // Which layers this level binds, in every checked schedule on this hardware.
        std::vector<std::string> bound;
        for (const CheckedSchedule &cs : c.checked)
          if (&m.hardware[m.schedules[cs.schedule].hardware] == hw)
            for (const LayerResult &lr : cs.result.layers)
              if (lr.bindingLevel == li)
                bound.push_back(m.networks[m.schedules[cs.schedule].network].layers[lr.layer].name);
        if (!bound.empty())
          *text += "\n\nbinds the latency of: " + joinList(bound, ", ", ", ");
      }
    }
    if (text)
      return Hover{*text, toLspRange(c.sm, o->range)};
    return std::nullopt;
  }
  // Inside a level block of a schedule (on a directive): that level's numbers.
  if (!c.rootAst)
    return std::nullopt;
  size_t off = offsetAt(c.sm.text(c.root), pos);
  for (const ast::TopDecl &decl : c.rootAst->decls)
    if (auto *s = std::get_if<ast::ScheduleDecl>(&decl))
      for (const ast::ScheduleItem &item : s->items)
        if (auto *ls = std::get_if<ast::LayerSchedule>(&item))
          for (const ast::LevelSchedule &lv : ls->levels)
            if (contains(lv.range, c.root, off)) {
              SourceRange r = lv.range;
              for (const ast::Directive &d : lv.directives)
                if (contains(d.range, c.root, off))
                  r = d.range;
              if (auto text = levelHover(s->range, ls->layer.name, lv.level.name))
                return Hover{*text, toLspRange(c.sm, r)};
            }
  return std::nullopt;
}

} // namespace dfl::lsp
