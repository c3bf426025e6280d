#include "scheduler/analysis/Report.h"

#include "scheduler/analysis/Evaluation.h"
#include "scheduler/analysis/Floors.h"
#include "scheduler/analysis/IntrinsicUnits.h"

#include "support/FiniteJson.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace dfl {
std::string tripCountsText(const std::vector<int64_t> &trips) {
  std::vector<std::string> out;
  for (int64_t t : trips)
    out.push_back(t ? std::to_string(t) : "?");
  return joinList(out, ", ", ", ");
}

namespace {

using json = nlohmann::ordered_json;

std::string cell(std::string s, size_t w, bool right = true) {
  return right ? padLeft(std::move(s), w) : padRight(std::move(s), w);
}

/// A double that is an exact count prints as an integer: diffs stay stable.
json count(double v) {
  if (std::fabs(v - std::round(v)) < 1e-6 && std::fabs(v) < 9e15)
    return static_cast<int64_t>(std::llround(v));
  return v;
}

/// The layers that take the largest shares of `total`, largest first, while
/// they add up to half of it (at most three): `fc1 57.1 %, fc2 25.0 %`.
std::string dominant(const Network &net, const ScheduleResult &r, double LayerResult::*of, double total) {
  std::vector<const LayerResult *> order;
  for (const LayerResult &lr : r.layers)
    order.push_back(&lr);
  std::stable_sort(order.begin(), order.end(), [&](auto *x, auto *y) { return x->*of > y->*of; });
  std::string out;
  double sum = 0;
  for (size_t i = 0; i < order.size() && i < 3 && sum < total / 2 && total > 0; ++i) {
    sum += order[i]->*of;
    out += (out.empty() ? "" : ", ") + net.layers[static_cast<size_t>(order[i]->layer)].name + " " +
           formatFixed(100 * (order[i]->*of) / total, 1) + " %";
  }
  return out;
}

} // namespace

std::string segmentKindText(const SegmentResult &s) {
  if (s.pipelined)
    return "spatial";
  if (s.layers.size() < 2)
    return "one layer";
  return s.instances > 1 ? "temporal, " + std::string(dimName(s.splitDim)) + "/" + std::to_string(s.instances)
                         : "temporal";
}

namespace {

/// What a complete schedule comes to (docs/cli.md, `dflc check`): its
/// segments and their kind, the layers that dominate energy and latency, and
/// how busy the PEs are.
std::string storyText(const Network &net, const ScheduleResult &r, EnergyUnit unit) {
  std::ostringstream os;
  size_t spatial = 0, temporal = 0, split = 0;
  for (const SegmentResult &s : r.segments) {
    if (s.pipelined)
      ++spatial;
    else if (s.layers.size() > 1)
      ++temporal, split += s.instances > 1;
  }
  const size_t single = r.segments.size() - spatial - temporal;
  os << "segments: " << spatial << " spatially pipelined, " << temporal << " temporal"
     << (split ? " (" + std::to_string(split) + " split into instances)" : std::string()) << ", " << single
     << " of one layer\n";
  for (size_t i = 0; i < r.segments.size(); ++i) {
    const SegmentResult &s = r.segments[i];
    if (s.layers.size() < 2)
      continue;
    std::string names = net.layers[static_cast<size_t>(s.layers.front())].name + " .. " +
                        net.layers[static_cast<size_t>(s.layers.back())].name;
    const std::string kind = segmentKindText(s);
    os << "  " << padRight(std::to_string(i), 4) << padRight(kind, 10) << " "
       << padRight(names + " (" + std::to_string(s.layers.size()) + " layers)", 44) << " "
       << padLeft(formatFixed(s.energyPj / unit.pj, 3), 12) << " " << unit.name << " "
       << padLeft(formatFixed(s.latencyCycles, 0), 12) << " cycles\n";
  }
  double latency = 0;
  for (const LayerResult &lr : r.layers)
    latency += lr.latencyCycles;
  os << "energy mostly in: " << dominant(net, r, &LayerResult::energyPj, r.energyPj) << "\n";
  os << "time mostly in: " << dominant(net, r, &LayerResult::latencyCycles, latency) << " (of the layers' own latencies)\n";
  // Utilization: per layer, and over the whole run weighted by time.
  std::vector<double> util;
  double busy = 0;
  for (const LayerResult &lr : r.layers) {
    util.push_back(lr.utilization);
    busy += lr.utilization * lr.latencyCycles;
  }
  std::sort(util.begin(), util.end());
  if (!util.empty())
    os << "PE utilization: median layer " << formatFixed(50 * (util[(util.size() - 1) / 2] + util[util.size() / 2]), 1)
       << " %, time-weighted "
       << formatFixed(latency > 0 ? 100 * busy / latency : 0, 1) << " %\n";
  return os.str();
}

/// "C=16, K=16": the unit's dims above 1.
std::string unitText(const DimVector &unit) {
  std::string out;
  for (Dim d : kIndependentDims)
    if (at(unit, d) > 1)
      out += (out.empty() ? "" : ", ") + std::string(dimName(d)) + "=" + std::to_string(at(unit, d));
  return out.empty() ? "1" : out;
}

/// The embedding a layer is scheduled with (docs/embedding.md,
/// "Intrinsic-aware scheduling"), as JSON: null without an intrinsic.
json embeddingJson(const Network &net, const Layer &l, const Hardware &hw) {
  auto u = intrinsicUnitFor(net, l, hw);
  if (!u)
    return nullptr;
  json j = {{"name", u->intrinsic}, {"level", hw.levels[static_cast<size_t>(u->level)].name}, {"embedded", u->embedded}};
  // Only when a work limit cut the search: other reports stay as they were.
  if (u->limitHit)
    j["search_limit"] = {{"nodes", u->nodes}, {"failures", u->failures}};
  if (!u->embedded) {
    j["reason"] = u->reason;
    return j;
  }
  json unit = json::object();
  for (Dim d : kIndependentDims)
    unit[dimName(d)] = at(u->unit, d);
  j["model"] = u->model;
  j["operands_swapped"] = u->operandsSwapped;
  j["mapping"] = u->dimMapping;
  j["unit"] = unit;
  j["utilization"] = u->utilization();
  j["macs"] = u->macs;
  j["macs_min"] = u->macsMin;
  return j;
}

} // namespace

namespace {

/// Level l's buffers for report.json: which roles each holds, its occupancy
/// and capacity; and the roles that bypass the level (§1 "Buffers", §6 "Bypass").
json buffersJson(const Hardware &hw, size_t l, const LevelResult &lv) {
  const Level &level = hw.levels[l];
  json buffers = json::array();
  for (size_t b = 0; b < level.buffers.size(); ++b) {
    const Buffer &buf = level.buffers[b];
    buffers.push_back({{"name", buf.name},
                       {"holds", roleNames(buf.roles)},
                       {"occupancy_bytes", lv.bufferBytes[b]},
                       {"capacity_bytes", buf.capacityBytes ? json(*buf.capacityBytes) : json(nullptr)}});
  }
  return buffers;
}

json bypassedJson(const Level &level) { return json(roleNames(kAllRoles & ~level.heldRoles())); }

/// The numbers of the levels a partial layer's schedule gives that do not
/// depend on the levels left to the solver: tiles, occupancy, stacked units and
/// trip counts (an outermost update's steps over an extent still to be chosen
/// are unknown, "?"). Accesses and energy need every level.
std::string givenLevelsText(const Hardware &hw, const Layer &l, const LayerResult &lr) {
  std::ostringstream os;
  for (size_t i = 0; i + 1 < lr.levels.size(); ++i) {
    const LevelResult &lv = lr.levels[i];
    if (!lv.known)
      continue;
    const Level &level = hw.levels[i];
    std::vector<std::string> tiles;
    for (TensorRole role : l.roles())
      tiles.push_back(std::string(roleName(role)) + " " + std::to_string(lv.tiles[static_cast<size_t>(role)].words));
    os << "  " << level.name << ": tiles " << joinList(tiles, ", ", ", ") << " words; " << lv.occupancyBytes << " B";
    if (level.capacityBytes)
      os << " of " << *level.capacityBytes << " B";
    os << "; " << lv.units << " of " << level.units() << " units";
    if (!lv.trips.empty())
      os << "; trips " << tripCountsText(lv.trips) << " (innermost first)";
    os << "\n";
  }
  return os.str();
}

/// The unit of the per-layer table: from its largest figure, the total.
EnergyUnit tableUnit(const ScheduleResult &r) {
  double largest = r.energyPj;
  for (const LayerResult &lr : r.layers)
    largest = std::max(largest, lr.energyPj);
  return energyUnitFor(largest);
}

} // namespace

std::string scheduleStoryText(const Network &net, const ScheduleResult &r) {
  return r.complete && r.valid ? storyText(net, r, tableUnit(r)) : "";
}

std::string scheduleReportText(const Model &model, const Schedule &schedule, const ScheduleResult &r) {
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  std::ostringstream os;
  os << "schedule for " << net.name << " on " << hw.name << ": "
     << (r.valid ? (r.complete ? "valid" : "valid so far, incomplete") : "INVALID") << "\n";
  size_t nameW = 5;
  for (const Layer &l : net.layers)
    nameW = std::max(nameW, l.name.size());
  const EnergyUnit unit = tableUnit(r);
  auto uj = [&](double pj) { return formatFixed(pj / unit.pj, 3); };
  std::string u = std::string("[") + unit.name + "]";
  os << cell("layer", nameW, false) << "  " << cell("energy", 12) << "  " << cell("MAC", 10);
  for (const Level &lv : hw.levels)
    os << "  " << cell(lv.name, 10);
  os << "  " << cell("NoC", 10) << "  " << cell("bus", 10) << "  " << cell("static", 10) << "  " << cell("cycles", 12) << "  " << cell("bound", 7) << "  " << cell("util", 6)
     << "\n";
  os << cell("", nameW, false) << "  " << cell(u, 12) << "  " << cell(u, 10);
  for (size_t i = 0; i < hw.levels.size(); ++i)
    os << "  " << cell(u, 10);
  os << "  " << cell(u, 10) << "  " << cell(u, 10) << "  " << cell(u, 10) << "  " << cell("", 12) << "  " << cell("", 7) << "  " << cell("[%]", 6) << "\n";
  for (const LayerResult &lr : r.layers) {
    const Layer &l = net.layers[lr.layer];
    os << cell(l.name, nameW, false);
    if (!lr.complete || !lr.valid || lr.levels.empty()) {
      os << "  " << cell(lr.valid ? "incomplete" : "invalid", 12) << "\n";
      if (lr.valid)
        os << givenLevelsText(hw, l, lr);
      continue;
    }
    os << "  " << cell(uj(lr.energyPj), 12) << "  " << cell(uj(lr.energyMacPj), 10);
    for (const LevelResult &lv : lr.levels)
      os << "  " << cell(uj(lv.energyPj), 10);
    os << "  " << cell(uj(lr.energyNocPj), 10) << "  " << cell(uj(lr.energyBusPj), 10) << "  "
       << cell(uj(lr.energyStaticPj), 10) << "  " << cell(formatFixed(lr.latencyCycles, 0), 12) << "  "
       << cell(lr.bindingLevel < 0 ? "compute" : hw.levels[lr.bindingLevel].name, 7) << "  "
       << cell(formatFixed(lr.utilization * 100, 1), 6) << "\n";
  }
  if (r.complete && r.valid) {
    os << cell("total", nameW, false) << "  " << cell(uj(r.energyPj), 12) << "  " << cell(uj(r.energyMacPj), 10);
    for (double e : r.energyLevelPj)
      os << "  " << cell(uj(e), 10);
    os << "  " << cell(uj(r.energyNocPj), 10) << "  " << cell(uj(r.energyBusPj), 10) << "  "
       << cell(uj(r.energyStaticPj), 10) << "  " << cell(formatFixed(r.latencyCycles, 0), 12) << "\n";
    os << evaluationSummary(evaluationOf(model, schedule, r)) << ", " << r.segments.size() << " segments\n";
    os << storyText(net, r, unit);
  }
  // Which layers a vector unit ran (their MAC column: its operations).
  std::vector<std::string> onVector;
  for (const LayerResult &lr : r.layers)
    if (lr.unit >= 0)
      onVector.push_back(net.layers[lr.layer].name + " on " + hw.vectors[static_cast<size_t>(lr.unit)].name);
  if (!onVector.empty())
    os << "vector units ran " << joinList(onVector, ", ", ", ") << " (their MAC column: the unit's operations)\n";
  if (int level = intrinsicLevel(hw); level >= 0) {
    const Level &lv = hw.levels[static_cast<size_t>(level)];
    os << "intrinsic " << lv.intrinsic << " at level " << lv.name << " (" << lv.rows << " x " << lv.cols
       << " units, one call per step):\n";
    for (const LayerResult &lr : r.layers) {
      const Layer &l = net.layers[lr.layer];
      auto u = intrinsicUnitFor(net, l, hw);
      os << "  " << cell(l.name, nameW, false) << "  ";
      const std::string cut = u->limitHit ? "; the search stopped at its work limit (" + std::to_string(u->nodes) +
                                                " nodes): the best of those found"
                                          : "";
      if (!u->embedded) {
        os << "not embedded (" << u->reason << "): 1-element tiles" << cut << "\n";
        continue;
      }
      os << joinList(u->dimMapping, "; ", "; ") << "; unit [" << unitText(u->unit) << "]; utilization "
         << formatFixed(100 * u->utilization(), 1) << " %" << cut << "\n";
    }
  }
  return os.str();
}

namespace {

/// A floor (lower bound) and what binds its latency (none for the run's,
/// which its segments' terms bind in turn).
json boundJson(const Hardware &hw, const LayerFloor &f, bool binding) {
  json j = {{"energy_pj", f.energyPj}, {"cycles", f.latencyCycles}};
  if (binding)
    j["binding"] = bindingName(hw, f.binding);
  return j;
}

/// How far the schedule's figures are above the bound: 0.25 is 25 % above
/// (chosen / bound - 1); null where the bound is 0.
json gapJson(const LayerFloor &f, double energyPj, double latencyCycles) {
  auto gap = [](double v, double bound) {
    const std::optional<double> g = gapAbove(v, bound);
    return g ? json(*g) : json(nullptr);
  };
  return {{"energy", gap(energyPj, f.energyPj)}, {"cycles", gap(latencyCycles, f.latencyCycles)}};
}

} // namespace

std::string floorsText(const Network &net, const Hardware &hw, const ScheduleResult &r) {
  if (!r.complete || !r.valid)
    return "";
  const ScheduleFloors floors = scheduleFloors(net, hw, r);
  size_t nameW = 5;
  for (const Layer &l : net.layers)
    nameW = std::max(nameW, l.name.size());
  const EnergyUnit unit = energyUnitFor(r.energyPj);
  auto gap = [](double v, double bound) {
    const std::optional<double> g = gapAbove(v, bound);
    return g ? formatFixed(100 * *g, 1) : std::string("-");
  };
  std::ostringstream os;
  os << "lower bounds (what every schedule pays, docs/directives.md §14) and the gaps above them:\n";
  os << cell("layer", nameW, false) << "  " << cell("energy", 12) << "  " << cell("bound", 12) << "  " << cell("gap", 7)
     << "  " << cell("cycles", 12) << "  " << cell("bound", 12) << "  " << cell("gap", 7) << "  binds\n";
  const std::string u = std::string("[") + unit.name + "]";
  os << cell("", nameW, false) << "  " << cell(u, 12) << "  " << cell(u, 12) << "  " << cell("[%]", 7) << "  "
     << cell("", 12) << "  " << cell("", 12) << "  " << cell("[%]", 7) << "\n";
  auto row = [&](const std::string &name, double e, double c, const LayerFloor &f, const std::string &binds) {
    os << cell(name, nameW, false) << "  " << cell(formatFixed(e / unit.pj, 3), 12) << "  "
       << cell(formatFixed(f.energyPj / unit.pj, 3), 12) << "  " << cell(gap(e, f.energyPj), 7) << "  "
       << cell(formatFixed(c, 0), 12) << "  " << cell(formatFixed(f.latencyCycles, 0), 12) << "  "
       << cell(gap(c, f.latencyCycles), 7) << (binds.empty() ? "" : "  " + binds) << "\n";
  };
  for (const LayerResult &lr : r.layers) {
    const LayerFloor &f = floors.layers[static_cast<size_t>(lr.layer)];
    row(net.layers[lr.layer].name, lr.energyPj, lr.latencyCycles, f, bindingName(hw, f.binding));
  }
  row("total", r.energyPj, r.latencyCycles, floors.total, "");
  return os.str();
}

std::string scheduleReportJson(const Model &model, const Schedule &schedule, const ScheduleResult &r) {
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  const ScheduleFloors floors = scheduleFloors(net, hw, r);
  json layers = json::array();
  for (const LayerResult &lr : r.layers) {
    const Layer &l = net.layers[lr.layer];
    json j = {{"name", l.name}, {"complete", lr.complete}, {"valid", lr.valid}};
    if (lr.unit >= 0)   // absent: the MAC array ran it
      j["unit"] = hw.vectors[static_cast<size_t>(lr.unit)].name;
    if (!lr.missing.empty())
      j["missing"] = lr.missing;
    if (json e = embeddingJson(net, l, hw); !e.is_null())
      j["intrinsic"] = e;
    if (lr.complete && lr.valid) {
      json levels = json::array();
      for (const LevelResult &lv : lr.levels) {
        json tiles = json::object();
        for (TensorRole role : l.roles()) {
          const TileResult &t = lv.tiles[static_cast<size_t>(role)];
          if (!t.present)
            continue;
          tiles[roleName(role)] = {{"words", t.words},        {"shr", t.shr}, {"distinct_words", t.distinctWords},
                                   {"copies", count(t.rep)},  {"loads", count(t.loads)},
                                   {"words_per_unit", count(t.wordsPerUnit)}};
        }
        json acc = json::object();
        for (TensorRole role : l.roles()) {
          size_t ri = static_cast<size_t>(role);
          acc[roleName(role)] = {{"reads", count(lv.accesses.reads[ri])},
                                 {"writes", count(lv.accesses.writes[ri])},
                                 {"same_level", count(lv.accesses.sameLevel[ri])},
                                 {"fills", count(lv.accesses.fills[ri])},
                                 {"write_backs", count(lv.accesses.writeBacks[ri])}};
        }
        json extent = json::object();
        for (size_t d = 0; d < kNumDims; ++d)
          extent[dimName(static_cast<Dim>(d))] = lv.extent[d];
        levels.push_back({{"level", hw.levels[lv.level].name},
                          {"extent", extent},
                          {"units", hw.chipUnits(static_cast<size_t>(lv.level))},
                          {"stacked", lv.units},
                          {"units_in_use", lv.unitsInUse},
                          {"trip_counts", lv.trips},
                          {"occupancy_bytes", lv.occupancyBytes},
                          {"capacity_bytes", hw.levels[lv.level].capacityBytes
                                                 ? json(*hw.levels[lv.level].capacityBytes)
                                                 : json(nullptr)},
                          {"tiles", tiles},
                          {"accesses", acc},
                          {"traffic_words", count(lv.trafficWords)},
                          {"traffic_bytes", count(lv.trafficBytes)},
                          {"cycles", lv.cycles},
                          {"energy_pj", lv.energyPj},
                          {"neighbor_energy_pj", lv.neighborEnergyPj},
                          {"bus_energy_pj", lv.busEnergyPj},
                          {"remote_reads", count(lv.remoteReads)},
                          {"remote_energy_pj", lv.remoteEnergyPj},
                          {"buffers", buffersJson(hw, static_cast<size_t>(lv.level), lv)},
                          {"bypassed", bypassedJson(hw.levels[lv.level])}});
      }
      j["work"] = count(lr.work);
      j["energy_pj"] = {{"total", lr.energyPj},
                        {"mac", lr.energyMacPj},
                        {"noc", lr.energyNocPj},
                        {"bus", lr.energyBusPj},
                        {"static", lr.energyStaticPj}};
      j["noc_hops"] = lr.hops;
      j["latency_cycles"] = lr.latencyCycles;
      j["compute_cycles"] = lr.computeCycles;
      j["bound_by"] = lr.bindingLevel < 0 ? "compute" : hw.levels[lr.bindingLevel].name;
      const LayerFloor &f = floors.layers[static_cast<size_t>(lr.layer)];
      j["bound"] = boundJson(hw, f, true);
      j["gap"] = gapJson(f, lr.energyPj, lr.latencyCycles);
      j["utilization"] = lr.utilization;
      j["levels"] = levels;
    } else if (lr.valid) {
      // What the given levels of a partial layer fix (givenLevelsText).
      json given = json::array();
      for (size_t i = 0; i + 1 < lr.levels.size(); ++i) {
        const LevelResult &lv = lr.levels[i];
        if (!lv.known)
          continue;
        json tiles = json::object(), trips = json::array();
        for (TensorRole role : l.roles())
          tiles[roleName(role)] = {{"words", lv.tiles[static_cast<size_t>(role)].words}};
        for (int64_t t : lv.trips)
          trips.push_back(t ? json(t) : json(nullptr));
        given.push_back({{"level", hw.levels[i].name},
                         {"units", hw.chipUnits(i)},
                         {"stacked", lv.units},
                         {"trip_counts", trips},
                         {"occupancy_bytes", lv.occupancyBytes},
                         {"capacity_bytes", hw.levels[i].capacityBytes ? json(*hw.levels[i].capacityBytes)
                                                                      : json(nullptr)},
                         {"tiles", tiles},
                         {"buffers", buffersJson(hw, i, lv)},
                         {"bypassed", bypassedJson(hw.levels[i])}});
      }
      j["given_levels"] = given;
    }
    layers.push_back(j);
  }
  json segments = json::array();
  for (const SegmentResult &s : r.segments) {
    json names = json::array();
    for (int l : s.layers)
      names.push_back(net.layers[l].name);
    segments.push_back({{"layers", names},
                        {"pipelined", s.pipelined},
                        {"chunks", s.chunks},
                        {"split", s.instances > 1 ? json{{"dim", dimName(s.splitDim)}, {"instances", s.instances}}
                                                  : json(nullptr)},
                        {"latency_cycles", s.latencyCycles},
                        {"dram_cycles", s.dramCycles},
                        {"energy_pj", s.energyPj}});
  }
  json levelEnergy = json::object();
  for (size_t l = 0; l < hw.levels.size() && l < r.energyLevelPj.size(); ++l)
    levelEnergy[hw.levels[l].name] = r.energyLevelPj[l];
  json out = {{"network", net.name},
              {"hardware", hw.name},
              {"batch", net.batch},
              {"complete", r.complete},
              {"valid", r.valid},
              {"units", {{"energy", "pJ"}, {"latency", "cycles"}, {"accesses", "words"}}},
              {"totals",
               {{"energy_pj", r.energyPj},
                {"mac_pj", r.energyMacPj},
                {"levels_pj", levelEnergy},
                {"noc_pj", r.energyNocPj},
                {"bus_pj", r.energyBusPj},
                {"static_pj", r.energyStaticPj},
                {"latency_cycles", r.latencyCycles},
                {"latency_seconds", r.latencyCycles / hw.frequencyHz},
                {"bound", r.complete && r.valid ? boundJson(hw, floors.total, false) : json(nullptr)},
                {"gap", r.complete && r.valid ? gapJson(floors.total, r.energyPj, r.latencyCycles) : json(nullptr)}}},
              {"segments", segments},
              {"layers", layers}};
  return dumpReport(out);
}

} // namespace dfl
