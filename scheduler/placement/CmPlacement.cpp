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
std::optional<bool> routable(const Setup &s, size_t edges, uint64_t nodeLimit,
                             std::chrono::steady_clock::time_point deadline) {
  auto *root = new PlacementSpace(s, edges, CmObjective::LongestRoute);
  Search::Options so;
  LimitStop stop(nodeLimit, deadline);
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

} // namespace

CmPlacement placeOnCores(const CmPartitioning &p, const CmHardware &hw, const CmPlacementOptions &options) {
  CmPlacement out;
  auto start = std::chrono::steady_clock::now();
  if (p.tiles.size() > static_cast<size_t>(hw.cores))
    return out;   // Infeasible, and not because of an edge: the caller reports the counts
  Setup s(p, hw);
  auto *root = new PlacementSpace(s, s.edges.size(), options.objective);
  if (root->status() != SS_FAILED)
    out.lowerBound = root->objective.min();
  Search::Options so;
  LimitStop stop(options.nodeLimit, start + options.timeLimit);
  so.stop = &stop;
  so.clone = false;   // the engine owns the root
  BAB<PlacementSpace> bab(root, so);
  std::unique_ptr<PlacementSpace> best;
  while (PlacementSpace *sol = bab.next())
    best.reset(sol);
  out.nodes = bab.statistics().node;
  out.failures = bab.statistics().fail;
  const bool stopped = bab.stopped();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!best) {
    out.status = stopped ? CmPlacement::Status::NoneWithinLimit : CmPlacement::Status::Infeasible;
    // The first edge that cannot join the routes before it, all the
    // searches within one more time limit.
    auto deadline = std::chrono::steady_clock::now() + options.timeLimit;
    if (!stopped)
      for (size_t k = 1; k <= s.edges.size(); ++k)
        if (auto ok = routable(s, k, options.nodeLimit, deadline); ok && !*ok) {
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
