#include "scheduler/analysis/LoopNestView.h"

#include "scheduler/analysis/Floors.h"
#include "scheduler/analysis/Instances.h"

#include "support/Format.h"

#include <sstream>

namespace dfl {
namespace {

/// `Yo += 2, Yi += 2`: the dims a directive moves together.
std::string steps(const std::vector<std::pair<Dim, int64_t>> &s) {
  std::string out;
  for (const auto &[d, n] : s)
    out += (out.empty() ? "" : ", ") + std::string(dimName(d)) + " += " + std::to_string(n);
  return out;
}

/// `N=1 C=37 ...`: the dims of an extent the layer has (bound above 1).
std::string extent(const DimVector &e, const Layer &layer) {
  std::string out;
  for (size_t d = 0; d < kNumDims; ++d)
    if (layer.bounds[d] > 1)
      out += (out.empty() ? "" : " ") + std::string(dimName(static_cast<Dim>(d))) + "=" + std::to_string(e[d]);
  return out.empty() ? "1" : out;
}

class LoopPrinter {
public:
  LoopPrinter(const Network &net, const Hardware &hw, std::ostringstream &os) : net_(net), hw_(hw), os_(os) {}

  /// `split`: the segment split into instances the layer runs in (null:
  /// none); `bound`: the layer's lower bound in its segment.
  void layer(const LayerScheduleModel *ls, const LayerResult &lr, const SegmentResult *split, const LayerFloor &bound) {
    const Layer &layer = net_.layers[static_cast<size_t>(lr.layer)];
    os_ << "\nlayer " << layer.name << ": " << layer.kindName() << ", "
        << formatScaled(lr.work) << (layer.macs ? " MACs" : " ops") << "\n";
    const size_t nl = hw_.levels.size();
    depth_ = 1;
    line(hw_.levels[nl - 1].name + "  " + extent(layer.bounds, layer), "");
    ++depth_;
    if (split) {
      // One instance after the other (docs/directives.md §9); the levels
      // below are the largest piece's.
      line("for instance along " + std::string(dimName(split->splitDim)),
           "x" + std::to_string(split->instances) + "  largest piece " + extent(lr.levels[nl - 1].extent, layer));
      ++depth_;
    }
    for (size_t l = nl - 1; l-- > 0;) {
      const LevelDirectives *d = nullptr;
      if (ls)
        for (const LevelDirectives &ld : ls->levels)
          if (ld.level == static_cast<int>(l))
            d = &ld;
      const LevelResult &r = lr.levels[l];
      if (!d || !r.known) {
        // A partial schedule: the levels inside still show what they hold.
        line(hw_.levels[l].name + "  (not given)", "");
        ++depth_;
        continue;
      }
      // Updates walk the stacked tiles through the level outside, outermost
      // first; their trip counts need that level's tile.
      const bool outerKnown = l + 2 == nl || lr.levels[l + 1].known;
      for (size_t i = d->updates.size(); i-- > 0;) {
        line("for " + steps(d->updates[i].steps),
             outerKnown && i < r.trips.size() ? "x" + std::to_string(r.trips[i]) : "x?");
        ++depth_;
      }
      for (const StackDirective &s : d->stacks) {
        line("par " + steps(s.shifts), "x" + std::to_string(s.repl));
        ++depth_;
      }
      line(hw_.levels[l].name + "  " + extent(r.extent, layer), holds(l, r, layer));
      ++depth_;
    }
    // The innermost level's units compute their tiles, a point a cycle.
    line(layer.macs ? "MAC" : "op", "");
    depth_ = 1;
    line(boundText(lr, bound), "");
  }

private:
  /// `bound 26.1 uJ, 4321 cycles, compute binds; this schedule +12.3 % energy,
  /// +5.0 % cycles` (docs/directives.md §14): the gaps of a complete layer only.
  std::string boundText(const LayerResult &lr, const LayerFloor &f) const {
    std::string out = "bound " + formatEnergy(f.energyPj) + ", " + formatFixed(f.latencyCycles, 0) + " cycles, " +
                      bindingName(hw_, f.binding) + " binds";
    auto gap = [](double v, double b) {
      const std::optional<double> g = gapAbove(v, b);
      return g ? (*g >= 0 ? "+" : "") + formatFixed(100 * *g, 1) + " %" : std::string("-");
    };
    if (lr.complete && lr.valid)
      out += "; this schedule " + gap(lr.energyPj, f.energyPj) + " energy, " + gap(lr.latencyCycles, f.latencyCycles) +
             " cycles";
    return out;
  }

  /// `ifm 592, wgt 296, ofm 16 words: 1.8 KiB of 128 KiB (1.4 %)`; per
  /// buffer where the level has several (`wspad: wgt 1 words: 2 B of 448 B
  /// (0.4 %); ...`), and the roles that bypass it (`wgt bypasses`).
  std::string holds(size_t l, const LevelResult &r, const Layer &layer) const {
    const Level &lv = hw_.levels[l];
    std::vector<std::string> parts;
    for (size_t b = 0; b < lv.buffers.size(); ++b) {
      const Buffer &buf = lv.buffers[b];
      std::string out;
      for (TensorRole role : layer.roles()) {
        if (!buf.holds(role))
          continue;
        const TileResult &t = r.tiles[static_cast<size_t>(role)];
        out += (out.empty() ? "" : ", ") + std::string(roleName(role)) + " " + formatNumber(static_cast<double>(t.words));
        if (t.shr > 1)
          out += "/" + std::to_string(t.shr);
      }
      const int64_t bytes = lv.buffers.size() == 1 ? r.occupancyBytes : r.bufferBytes[b];
      out = (buf.implicit ? "" : buf.name + ": ") + (out.empty() ? "nothing" : out + " words") + ": " +
            formatBytes(static_cast<double>(bytes));
      if (const auto &cap = buf.capacityBytes)
        out += " of " + formatBytes(static_cast<double>(*cap)) + " (" +
               formatFixed(100.0 * static_cast<double>(bytes) / static_cast<double>(*cap), 1) + " %)";
      parts.push_back(out);
    }
    std::string out = joinList(parts, "; ", "; ");
    if (lv.bypasses())
      out += "; " + bypassText(lv);
    if (lv.units() > 1)
      out += ", " + std::to_string(r.units) + " of " + std::to_string(lv.units()) + " units";
    return out;
  }

  void line(const std::string &loop, const std::string &note) {
    std::string s = std::string(2 * depth_, ' ') + loop;
    os_ << (note.empty() ? s : padRight(s, 44) + "  " + note) << "\n";
  }

  const Network &net_;
  const Hardware &hw_;
  std::ostringstream &os_;
  size_t depth_ = 1;
};

} // namespace

std::string scheduleLoopsText(const Model &model, const Schedule &schedule, const ScheduleResult &result) {
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  std::ostringstream os;
  os << "schedule for " << net.name << " on " << hw.name
     << ": loops outermost first (for: a level's update, par: its stack over units; x: trip count, ?: unknown)\n";
  const ScheduleFloors floors = scheduleFloors(net, hw, result);
  for (const LayerResult &lr : result.layers) {
    const LayerScheduleModel *ls = nullptr;
    for (const LayerScheduleModel &m : schedule.layers)
      if (m.layer == lr.layer)
        ls = &m;
    size_t k = 0;
    LoopPrinter(net, hw, os).layer(ls, lr, splitSegmentOf(result, lr.layer, k),
                                   floors.layers[static_cast<size_t>(lr.layer)]);
  }
  return os.str();
}

} // namespace dfl
