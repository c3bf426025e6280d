#include "scheduler/kapla/SolverReport.h"

#include "support/Format.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace dfl {
namespace {

using json = nlohmann::ordered_json;

json priceOrNull(const std::optional<double> &pj) { return pj ? json(*pj) : json(nullptr); }

/// The distinct whole schedules evaluated (one per pair of totals), best
/// first by the objective, at most `best`.
std::vector<const Alternative *> bestChains(const Solution &solution, Objective objective, size_t best) {
  std::vector<const Alternative *> all;
  for (const Alternative &a : solution.alternatives)
    if (std::none_of(all.begin(), all.end(), [&](const Alternative *b) {
          return b->energyPj == a.energyPj && b->latencyCycles == a.latencyCycles;
        }))
      all.push_back(&a);
  std::stable_sort(all.begin(), all.end(), [&](const Alternative *a, const Alternative *b) {
    return objectiveValue(objective, a->energyPj, a->latencyCycles) <
           objectiveValue(objective, b->energyPj, b->latencyCycles);
  });
  if (all.size() > best)
    all.resize(best);
  return all;
}

bool isChosen(const Alternative &a, const Solution &solution) {
  return a.energyPj == solution.result.energyPj && a.latencyCycles == solution.result.latencyCycles;
}

/// The chain's segments of two or more layers.
std::vector<Segment> multiLayerSegments(const Network &net, const Schedule &s) {
  std::vector<Segment> out;
  for (const Segment &seg : segmentsOf(s, net.layers.size()))
    if (seg.layers.size() > 1)
      out.push_back(seg);
  return out;
}

/// A segment's kind as the schedule runs it.
SegmentKind kindOf(const Segment &seg) {
  return seg.pipelined ? SegmentKind::Spatial : seg.instances > 1 ? SegmentKind::Instances : SegmentKind::Temporal;
}

json splitJson(Dim dim, int64_t instances) {
  return instances > 1 ? json{{"dim", dimName(dim)}, {"instances", instances}} : json(nullptr);
}

/// `Yo/4`: a split as the tables show it.
std::string splitText(const InstanceSplit &s) { return std::string(dimName(s.dim)) + "/" + std::to_string(s.instances); }

std::string span(const Network &net, int first, int last) {
  return net.layers[static_cast<size_t>(first)].name + " .. " + net.layers[static_cast<size_t>(last)].name;
}

} // namespace

const char *segmentKindName(SegmentKind kind) {
  switch (kind) {
  case SegmentKind::Spatial: return "spatial";
  case SegmentKind::Temporal: return "temporal";
  case SegmentKind::Instances: return "instances";
  case SegmentKind::Single: break;
  }
  return "layer_by_layer";
}

json segmentChoicesJson(const Network &net, const std::vector<SegmentCosts> &costs) {
  json out = json::array();
  for (const SegmentCosts &c : costs) {
    json row = {{"first", net.layers[static_cast<size_t>(c.first)].name},
                {"last", net.layers[static_cast<size_t>(c.last)].name},
                {"layers", c.last - c.first + 1},
                {"chosen", segmentKindName(c.chosen)},
                {"layer_by_layer_pj", c.layerByLayerPj},
                {"temporal_pj", priceOrNull(c.temporalPj)},
                {"spatial_pj", priceOrNull(c.spatialPj)},
                {"spatial_bound_pj", priceOrNull(c.spatialBoundPj)},
                {"instances_pj", priceOrNull(c.instancesPj)},
                {"split", c.instancesPj ? splitJson(c.split.dim, c.split.instances) : json(nullptr)}};
    if (!c.temporalPj)
      row["temporal_why"] = c.temporalWhy;
    if (!c.instancesPj)
      row["instances_why"] = c.instancesWhy;
    if (!c.spatialPj)
      row["spatial_why"] = c.spatialWhy;
    out.push_back(std::move(row));
  }
  return out;
}

json chainsJson(const Network &net, const Solution &solution, Objective objective, size_t best) {
  json chains = json::array();
  for (const Alternative *a : bestChains(solution, objective, best)) {
    json segments = json::array();
    for (const Segment &seg : multiLayerSegments(net, a->schedule))
      segments.push_back({{"first", net.layers[static_cast<size_t>(seg.layers.front())].name},
                          {"last", net.layers[static_cast<size_t>(seg.layers.back())].name},
                          {"kind", segmentKindName(kindOf(seg))},
                          {"split", splitJson(seg.splitDim, seg.instances)}});
    chains.push_back({{"energy_pj", a->energyPj},
                      {"latency_cycles", a->latencyCycles},
                      {"found_by", objectiveName(a->foundBy)},
                      {"chosen", isChosen(*a, solution)},
                      {"segments", std::move(segments)}});
  }
  return {{"evaluated", solution.alternatives.size()}, {"shown", chains.size()}, {"best", std::move(chains)}};
}

std::string solverChoicesText(const Network &net, const Hardware &hw, const Solution &solution, Objective objective,
                              size_t best) {
  std::ostringstream os;
  auto energy = [](const std::optional<double> &pj) { return pj ? formatEnergy(*pj) : std::string("-"); };
  if (solution.segmentCosts.empty())
    os << "segment choices: none (every layer runs alone)\n";
  else {
    auto nameOf = [&](const SegmentCosts &c) {
      return span(net, c.first, c.last) + " (" + std::to_string(c.last - c.first + 1) + ")";
    };
    size_t width = std::string("segment").size();
    for (const SegmentCosts &c : solution.segmentCosts)
      width = std::max(width, nameOf(c).size());
    width += 2;
    os << "segment choices: the energy of each way to run the segment's layers\n"
       << "  " << padRight("segment", width) << padRight("chosen", 16) << padLeft("layer by layer", 16)
       << padLeft("temporal", 14) << padLeft("spatial", 16) << padLeft("instances", 24) << "\n";
    for (const SegmentCosts &c : solution.segmentCosts) {
      std::string name = nameOf(c);
      std::string spatial = c.spatialPj ? formatEnergy(*c.spatialPj)
                            : c.spatialBoundPj ? ">= " + formatEnergy(*c.spatialBoundPj)
                                               : std::string("-");
      os << "  " << padRight(name, width) << padRight(segmentKindName(c.chosen), 16)
         << padLeft(formatEnergy(c.layerByLayerPj), 16) << padLeft(energy(c.temporalPj), 14) << padLeft(spatial, 16)
         << padLeft(c.instancesPj ? energy(c.instancesPj) + " (" + splitText(c.split) + ")" : std::string("-"), 24)
         << "\n";
      if (!c.temporalPj)
        os << "      no temporal price: " << c.temporalWhy << "\n";
      if (!c.spatialPj)
        os << "      no spatial price: " << c.spatialWhy << "\n";
      if (!c.instancesPj)
        os << "      no instances price: " << c.instancesWhy << "\n";
    }
  }
  std::vector<const Alternative *> chains = bestChains(solution, objective, best);
  const size_t n = solution.alternatives.size();
  os << "chains: " << n << (n == 1 ? " whole schedule" : " whole schedules") << " evaluated, the best "
     << chains.size() << " by " << objectiveName(objective) << " (* written)\n"
     << "     " << padLeft("energy", 12) << "  " << padLeft("latency", 10) << "  segments of two or more layers"
     << " (report.json lists them)\n";
  for (const Alternative *a : chains) {
    std::map<SegmentKind, size_t> count;
    size_t layers = 0;
    for (const Segment &seg : multiLayerSegments(net, a->schedule))
      ++count[kindOf(seg)], layers += seg.layers.size();
    std::vector<std::string> kinds;
    for (SegmentKind k : {SegmentKind::Temporal, SegmentKind::Instances, SegmentKind::Spatial})
      if (count[k])
        kinds.push_back(std::to_string(count[k]) + " " + segmentKindName(k));
    os << (isChosen(*a, solution) ? "  *  " : "     ") << padLeft(formatEnergy(a->energyPj), 12) << "  "
       << padLeft(formatFixed(a->latencyCycles / hw.frequencyHz * 1e3, 3) + " ms", 10) << "  "
       << (kinds.empty() ? "none"
                         : joinList(kinds, ", ", ", ") + ", " + std::to_string(layers) + " of " +
                               std::to_string(net.layers.size()) + " layers")
       << "\n";
  }
  return os.str();
}

} // namespace dfl
