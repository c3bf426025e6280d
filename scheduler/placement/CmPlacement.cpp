#include "scheduler/placement/CmPlacement.h"

#include "scheduler/embedding/GecodeLimitStop.h"
#include "support/Check.h"

#include <gecode/int.hh>
#include <gecode/minimodel.hh>
#include <gecode/search.hh>

#include <algorithm>
#include <limits>
#include <memory>

using namespace Gecode;

namespace dfl {

const char *cmObjectiveName(CmObjective o) { return o == CmObjective::Traffic ? "traffic" : "longest-route"; }

const char *cmPlacementStatusName(CmPlacement::Status s) {
  switch (s) {
  case CmPlacement::Status::Optimal: return "optimal";
  case CmPlacement::Status::Feasible: return "feasible";
  case CmPlacement::Status::NoneWithinLimit: return "none-within-limit";
  case CmPlacement::Status::Infeasible: return "infeasible";
  }
  return "?";
}

namespace {

/// The problem, shared by every clone of the space (never copied).
struct Setup {
  int cores = 0, tiles = 0;
  std::vector<std::vector<int>> hops;   // core x core, -1: no route
  std::vector<CmEdge> edges;
  std::vector<int> weight;              // per edge, scaled to stay in Gecode's int range
  IntArgs distance, fromInput, toOutput;   // -1 where no route: outside every hops variable's domain

  Setup(const CmPartitioning &p, const CmHardware &hw) : cores(static_cast<int>(hw.cores)), tiles(static_cast<int>(p.tiles.size())),
                                                         hops(hw.hopDistances()), edges(p.edges) {
    const auto n = static_cast<size_t>(cores);
    distance = IntArgs(cores * cores);
    fromInput = IntArgs(cores);
    toOutput = IntArgs(cores);
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < n; ++b)
        distance[static_cast<int>(a * n + b)] = hops[a][b];
      // The GCU's port is one hop from the core it attaches to.
      int in = hops[static_cast<size_t>(hw.inputCore)][a], out = hops[a][static_cast<size_t>(hw.outputCore)];
      fromInput[static_cast<int>(a)] = in < 0 ? -1 : in + 1;
      toOutput[static_cast<int>(a)] = out < 0 ? -1 : out + 1;
    }
    // Words x hops must fit Gecode's int: scale the weights down if needed
    // (the reported traffic is recomputed exactly from the cores).
    double worst = 0;
    for (const CmEdge &e : edges)
      worst += static_cast<double>(e.words) * (cores + 1);
    double scale = std::max(1.0, worst / 1e9);
    for (const CmEdge &e : edges)
      weight.push_back(std::max(1, static_cast<int>(static_cast<double>(e.words) / scale)));
  }

  /// Hops of edge e with its tiles on `core` (-1: no route).
  int64_t hopsOf(const CmEdge &e, const std::vector<int> &core) const {
    if (e.from == CmEdge::kGcuInput)
      return fromInput[core[static_cast<size_t>(e.to)]];
    if (e.to == CmEdge::kGcuOutput)
      return toOutput[core[static_cast<size_t>(e.from)]];
    return hops[static_cast<size_t>(core[static_cast<size_t>(e.from)])][static_cast<size_t>(core[static_cast<size_t>(e.to)])];
  }
};

class PlacementSpace : public IntMinimizeSpace {
  const Setup *s_;

public:
  IntVarArray core;   // per tile
  IntVarArray hops;   // per edge
  IntVar objective;

  /// The first `edges` edges of the setup; `optimize`: with the objective.
  PlacementSpace(const Setup &s, size_t edges, CmObjective objective)
      : s_(&s), core(*this, s.tiles, 0, s.cores - 1), hops(*this, static_cast<int>(edges), 1, s.cores + 1) {
    // Injective: one tile per core (a core's crossbar holds one matrix).
    distinct(*this, core, IPL_DOM);
    // Routed: each edge's endpoints are connected, at their shortest distance.
    for (size_t i = 0; i < edges; ++i) {
      const CmEdge &e = s.edges[i];
      IntVar h = hops[static_cast<int>(i)];
      if (e.from == CmEdge::kGcuInput)
        element(*this, s.fromInput, core[e.to], h);
      else if (e.to == CmEdge::kGcuOutput)
        element(*this, s.toOutput, core[e.from], h);
      else   // distance[from * cores + to] as a matrix: column `to`, row `from`
        element(*this, s.distance, core[e.to], s.cores, core[e.from], s.cores, h);
    }
    // The objective: words x hops, or the longest route.
    if (objective == CmObjective::Traffic) {
      IntArgs w(static_cast<int>(edges));
      int64_t top = 0;
      for (size_t i = 0; i < edges; ++i) {
        w[static_cast<int>(i)] = s.weight[i];
        top += static_cast<int64_t>(s.weight[i]) * (s.cores + 1);
      }
      this->objective = IntVar(*this, 0, static_cast<int>(std::min<int64_t>(top, Int::Limits::max)));
      linear(*this, w, hops, IRT_EQ, this->objective);
    } else {
      this->objective = IntVar(*this, 0, s.cores + 1);
      if (edges > 0)
        max(*this, hops, this->objective);
      else
        rel(*this, this->objective, IRT_EQ, 0);
    }
    // Tiles in topological order, each on the free core nearest (by words x
    // hops) to its placed neighbours: a good first placement for the bound.
    branch(*this, core, INT_VAR_NONE(), INT_VAL(&nearestCore));
  }
  PlacementSpace(PlacementSpace &o) : IntMinimizeSpace(o), s_(o.s_) {
    core.update(*this, o.core);
    hops.update(*this, o.hops);
    objective.update(*this, o.objective);
  }
  Space *copy() override { return new PlacementSpace(*this); }
  IntVar cost() const override { return objective; }

private:
  static int nearestCore(const Space &home, IntVar x, int tile) {
    const auto &sp = static_cast<const PlacementSpace &>(home);
    const Setup &s = *sp.s_;
    int best = x.min();
    int64_t bestCost = std::numeric_limits<int64_t>::max();
    for (IntVarValues v(x); v(); ++v) {
      int64_t c = 0;
      for (size_t i = 0; i < static_cast<size_t>(sp.hops.size()); ++i) {
        const CmEdge &e = s.edges[i];
        int other = e.from == tile ? e.to : e.to == tile ? e.from : -3;
        if (other == -3)
          continue;
        int d;
        if (other == CmEdge::kGcuInput)
          d = s.fromInput[v.val()];
        else if (other == CmEdge::kGcuOutput)
          d = s.toOutput[v.val()];
        else if (!sp.core[other].assigned())
          continue;
        else
          d = e.from == tile ? s.hops[static_cast<size_t>(v.val())][static_cast<size_t>(sp.core[other].val())]
                             : s.hops[static_cast<size_t>(sp.core[other].val())][static_cast<size_t>(v.val())];
        c += d < 0 ? int64_t(1) << 40 : int64_t(s.weight[i]) * d;
      }
      if (c < bestCost) {
        bestCost = c;
        best = v.val();
      }
    }
    return best;
  }
};

/// Whether the first `edges` edges can be routed together (nullopt: a limit
/// stopped the search first).
std::optional<bool> routable(const Setup &s, size_t edges, uint64_t nodeLimit, const CmPlacementOptions &options) {
  auto *root = new PlacementSpace(s, edges, CmObjective::LongestRoute);
  Search::Options so;
  WorkLimitStop stop(nodeLimit, options.failureLimit);
  so.stop = &stop;
  so.clone = false;
  DFS<PlacementSpace> dfs(root, so);
  std::unique_ptr<PlacementSpace> sol(dfs.next());
  if (sol)
    return true;
  if (dfs.stopped())
    return std::nullopt;
  return false;
}

/// The search's first placement without the search (nearestCore's rule):
/// tiles in order, each on the free core that adds least words x hops given
/// its placed neighbours. O(tiles x cores x degree) time, O(cores) memory.
std::vector<int> greedyPlacement(const Setup &s) {
  std::vector<std::vector<size_t>> incident(static_cast<size_t>(s.tiles));
  for (size_t i = 0; i < s.edges.size(); ++i) {
    const CmEdge &e = s.edges[i];
    if (e.from >= 0)
      incident[static_cast<size_t>(e.from)].push_back(i);
    if (e.to >= 0 && e.to != e.from)
      incident[static_cast<size_t>(e.to)].push_back(i);
  }
  std::vector<int> core(static_cast<size_t>(s.tiles), -1);
  std::vector<bool> used(static_cast<size_t>(s.cores), false);
  for (int t = 0; t < s.tiles; ++t) {
    int best = -1;
    int64_t bestCost = std::numeric_limits<int64_t>::max();
    for (int c = 0; c < s.cores; ++c) {
      if (used[static_cast<size_t>(c)])
        continue;
      int64_t cost = 0;
      for (size_t i : incident[static_cast<size_t>(t)]) {
        const CmEdge &e = s.edges[i];
        const int other = e.from == t ? e.to : e.from;
        int d;
        if (other == CmEdge::kGcuInput)
          d = s.fromInput[c];
        else if (other == CmEdge::kGcuOutput)
          d = s.toOutput[c];
        else if (core[static_cast<size_t>(other)] < 0)
          continue;
        else
          d = e.from == t ? s.hops[static_cast<size_t>(c)][static_cast<size_t>(core[static_cast<size_t>(other)])]
                          : s.hops[static_cast<size_t>(core[static_cast<size_t>(other)])][static_cast<size_t>(c)];
        cost += d < 0 ? int64_t(1) << 40 : int64_t(s.weight[i]) * d;
      }
      if (cost < bestCost)
        bestCost = cost, best = c;
    }
    core[static_cast<size_t>(t)] = best;
    used[static_cast<size_t>(best)] = true;
  }
  return core;
}

/// The objective of a placement (-1: an edge has no route) and its lower
/// bound without propagation: every edge at its shortest possible distance.
std::pair<int64_t, int64_t> objectiveOf(const Setup &s, const std::vector<int> &core, CmObjective objective) {
  int64_t cost = 0, bound = 0;
  for (size_t i = 0; i < s.edges.size(); ++i) {
    const CmEdge &e = s.edges[i];
    const int64_t h = s.hopsOf(e, core);
    if (h < 0)
      return {-1, 0};
    int64_t least = 1;   // distinct cores are a hop apart at least; a GCU port is one hop out
    if (e.from == CmEdge::kGcuInput || e.to == CmEdge::kGcuOutput) {
      least = std::numeric_limits<int64_t>::max();
      for (int c = 0; c < s.cores; ++c)
        if (int d = e.from == CmEdge::kGcuInput ? s.fromInput[c] : s.toOutput[c]; d >= 0)
          least = std::min<int64_t>(least, d);
    }
    if (objective == CmObjective::Traffic)
      cost += s.weight[i] * h, bound += s.weight[i] * least;
    else
      cost = std::max(cost, h), bound = std::max(bound, least);
  }
  return {cost, bound};
}

} // namespace

CmPlacement placeOnCores(const CmPartitioning &p, const CmHardware &hw, const CmPlacementOptions &options) {
  CmPlacement out;
  if (p.tiles.size() > static_cast<size_t>(hw.cores))
    return out;   // Infeasible, and not because of an edge: the caller reports the counts
  // The exact model's size, before it is built: an `element` table of
  // cores^2 entries per edge between tiles (cores per GCU edge), copied with
  // every space the search keeps.
  const int64_t cores = hw.cores;
  for (const CmEdge &e : p.edges)
    out.modelEntries += e.from < 0 || e.to < 0 ? cores : cores * cores;
  Setup s(p, hw);
  if (out.modelEntries > options.exactModelEntries) {
    out.greedy = true;
    out.core = greedyPlacement(s);
    auto [cost, bound] = objectiveOf(s, out.core, options.objective);
    if (cost < 0) {
      out.core.clear();
      out.status = CmPlacement::Status::NoneWithinLimit;
      return out;
    }
    out.status = cost == bound ? CmPlacement::Status::Optimal : CmPlacement::Status::Feasible;
    out.cost = cost;
    out.lowerBound = bound;
    for (const CmEdge &e : s.edges) {
      int64_t h = s.hopsOf(e, out.core);
      out.trafficHops += e.words * h;
      out.longestRoute = std::max(out.longestRoute, h);
    }
    return out;
  }
  auto *root = new PlacementSpace(s, s.edges.size(), options.objective);
  if (root->status() != SS_FAILED)
    out.lowerBound = root->objective.min();
  Search::Options so;
  std::optional<WorkLimitStop::Clock::time_point> deadline;
  if (options.timeLimit)
    deadline = WorkLimitStop::Clock::now() + *options.timeLimit;
  out.nodeLimit = std::min<uint64_t>(
      options.nodeLimit, std::max<uint64_t>(1, options.workLimit / static_cast<uint64_t>(std::max<int64_t>(1, out.modelEntries))));
  WorkLimitStop stop(out.nodeLimit, options.failureLimit, deadline);
  so.stop = &stop;
  so.clone = false;   // the engine owns the root
  BAB<PlacementSpace> bab(root, so);
  std::unique_ptr<PlacementSpace> best;
  while (PlacementSpace *sol = bab.next())
    best.reset(sol);
  out.nodes = bab.statistics().node;
  out.failures = bab.statistics().fail;
  const bool stopped = bab.stopped();
  out.timeLimitHit = stop.timedOut();
  if (!best) {
    out.status = stopped ? CmPlacement::Status::NoneWithinLimit : CmPlacement::Status::Infeasible;
    // The first edge that cannot join the routes before it, each search
    // within the work limits.
    if (!stopped)
      for (size_t k = 1; k <= s.edges.size(); ++k)
        if (auto ok = routable(s, k, out.nodeLimit, options); ok && !*ok) {
          out.blockingEdge = static_cast<int>(k - 1);
          break;
        }
    return out;
  }
  out.status = stopped ? CmPlacement::Status::Feasible : CmPlacement::Status::Optimal;
  for (int t = 0; t < s.tiles; ++t)
    out.core.push_back(best->core[t].val());
  out.cost = best->objective.val();
  if (out.status == CmPlacement::Status::Optimal)
    out.lowerBound = out.cost;
  for (const CmEdge &e : s.edges) {
    int64_t h = s.hopsOf(e, out.core);
    DFLC_CHECK(h >= 1) << "a placed edge has no route";
    out.trafficHops += e.words * h;
    out.longestRoute = std::max(out.longestRoute, h);
  }
  return out;
}

} // namespace dfl
