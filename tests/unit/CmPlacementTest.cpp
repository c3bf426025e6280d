// Core placement for computational-memory chips (scheduler/placement/) on
// hand-built tile graphs: distances against closed forms, and the placement's
// optimum against an independent brute-force enumeration, for both
// objectives, on a ring and on directed links.
#include "scheduler/placement/CmPlacement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>

using namespace dfl;

namespace {

CmHardware ring(int n) {
  CmHardware hw;
  hw.topology = CmTopology::Ring;
  hw.cores = n;
  for (int u = 0; u < n; ++u) {
    hw.links.emplace_back(u, (u + 1) % n);
    hw.links.emplace_back((u + 1) % n, u);
  }
  return hw;
}

/// A graph of `tiles` tiles (one partition each) with the given edges.
CmPartitioning graph(int tiles, std::vector<CmEdge> edges) {
  CmPartitioning p;
  for (int t = 0; t < tiles; ++t) {
    p.partitions.emplace_back();
    p.partitions.back().firstTile = t;
    p.tiles.push_back(CmTile{t, 0, 0, 0, 0, 0, 0});
  }
  p.edges = std::move(edges);
  return p;
}

/// The best objective over every injective assignment, with `dist` the
/// hops from one core to another (a GCU port: one more than its core's).
int64_t bruteForce(const CmPartitioning &p, const CmHardware &hw, const std::function<int(int, int)> &dist,
                   CmObjective objective) {
  std::vector<int> cores(static_cast<size_t>(hw.cores));
  std::iota(cores.begin(), cores.end(), 0);
  int64_t best = INT64_MAX;
  // Every permutation of the cores; its first `tiles` entries are an assignment.
  do {
    int64_t traffic = 0, longest = 0;
    bool ok = true;
    for (const CmEdge &e : p.edges) {
      int h = e.from == CmEdge::kGcuInput    ? 1 + dist(hw.inputCore, cores[static_cast<size_t>(e.to)])
              : e.to == CmEdge::kGcuOutput ? 1 + dist(cores[static_cast<size_t>(e.from)], hw.outputCore)
                                           : dist(cores[static_cast<size_t>(e.from)], cores[static_cast<size_t>(e.to)]);
      ok = ok && h >= 1 && h < 1000;
      traffic += e.words * h;
      longest = std::max<int64_t>(longest, h);
    }
    if (ok)
      best = std::min(best, objective == CmObjective::Traffic ? traffic : longest);
  } while (std::next_permutation(cores.begin(), cores.end()));
  return best;
}

} // namespace

TEST(CmPlacement, RingDistances) {
  // On a ring of 7 both ways: min(|i - j|, 7 - |i - j|).
  auto d = ring(7).hopDistances();
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j)
      EXPECT_EQ(d[static_cast<size_t>(i)][static_cast<size_t>(j)], std::min(std::abs(i - j), 7 - std::abs(i - j)));
}

TEST(CmPlacement, OptimalOnRingAgainstBruteForce) {
  CmHardware hw = ring(6);
  hw.inputCore = 0;
  hw.outputCore = 3;
  // A diamond with a skip: in -> 0 -> {1, 2} -> 3 -> out, and 0 -> 3.
  CmPartitioning p = graph(4, {{CmEdge::kGcuInput, 0, 50, false},
                               {0, 1, 40, false},
                               {0, 2, 30, false},
                               {1, 3, 20, false},
                               {2, 3, 25, true},
                               {0, 3, 70, false},
                               {3, CmEdge::kGcuOutput, 10, false}});
  auto dist = [](int a, int b) { return std::min(std::abs(a - b), 6 - std::abs(a - b)); };
  for (CmObjective o : {CmObjective::Traffic, CmObjective::LongestRoute}) {
    CmPlacementOptions opt;
    opt.objective = o;
    CmPlacement pl = placeOnCores(p, hw, opt);
    ASSERT_EQ(pl.status, CmPlacement::Status::Optimal) << cmObjectiveName(o);
    EXPECT_EQ(pl.cost, bruteForce(p, hw, dist, o)) << cmObjectiveName(o);
    EXPECT_EQ(pl.lowerBound, pl.cost);
    // Injective.
    std::vector<int> cores = pl.core;
    std::sort(cores.begin(), cores.end());
    EXPECT_EQ(std::adjacent_find(cores.begin(), cores.end()), cores.end());
  }
}

TEST(CmPlacement, DirectedLinksAgainstBruteForce) {
  // A directed ring 0 -> 1 -> 2 -> 3 -> 4 -> 0: from i to j is (j - i) mod 5.
  CmHardware hw;
  hw.topology = CmTopology::Links;
  hw.cores = 5;
  for (int u = 0; u < 5; ++u)
    hw.links.emplace_back(u, (u + 1) % 5);
  hw.inputCore = 2;
  hw.outputCore = 4;
  auto d = hw.hopDistances();
  auto dist = [](int a, int b) { return ((b - a) % 5 + 5) % 5; };
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j)
      EXPECT_EQ(d[static_cast<size_t>(i)][static_cast<size_t>(j)], dist(i, j));
  CmPartitioning p = graph(4, {{CmEdge::kGcuInput, 0, 8, false},
                               {0, 1, 5, false},
                               {1, 2, 9, false},
                               {0, 2, 4, false},
                               {2, 3, 6, false},
                               {3, CmEdge::kGcuOutput, 3, false}});
  CmPlacement pl = placeOnCores(p, hw);
  ASSERT_EQ(pl.status, CmPlacement::Status::Optimal);
  EXPECT_EQ(pl.cost, bruteForce(p, hw, dist, CmObjective::Traffic));
  EXPECT_EQ(pl.trafficHops, pl.cost);
}

TEST(CmPlacement, InfeasibleNamesTheEdge) {
  // Links 0 -> 1, 0 -> 2: nothing leaves cores 1 and 2, so of the chain
  // 0 -> 1 -> 2 the edge 1 -> 2 (index 1) cannot join 0 -> 1.
  CmHardware hw;
  hw.topology = CmTopology::Links;
  hw.cores = 3;
  hw.links = {{0, 1}, {0, 2}};
  CmPlacement pl = placeOnCores(graph(3, {{0, 1, 1, false}, {1, 2, 1, false}}), hw);
  EXPECT_EQ(pl.status, CmPlacement::Status::Infeasible);
  EXPECT_EQ(pl.blockingEdge, 1);
  // More tiles than cores: infeasible, and no edge to blame.
  CmPlacement many = placeOnCores(graph(4, {}), hw);
  EXPECT_EQ(many.status, CmPlacement::Status::Infeasible);
  EXPECT_EQ(many.blockingEdge, -1);
}

TEST(CmPlacement, GreedyAboveTheModelBound) {
  // in -> 0 -> 1 -> 2 -> out, 10 words each, on a ring of 6 (GCU at cores 0
  // and 3). With no room for the exact model (its size: 6 + 36 + 36 + 6 = 84
  // entries, the GCU edges a row each) the tiles are placed greedily, each on
  // the free core adding least words x hops, the lowest on a tie:
  //   tile 0: 10 (d(0, c) + 1), least at core 0;
  //   tile 1: 10 d(0, c), cores 1 and 5 tie: core 1;
  //   tile 2: 10 d(1, c) + 10 (d(c, 3) + 1): 30 at cores 2 and 3: core 2.
  // Traffic 10 (1 + 1 + 1 + 2) = 50, which is the optimum (in -> out is at
  // least 2 + d(0, 3) = 5 hops by the triangle inequality); the bound is
  // every edge at its shortest, 4 x 10 = 40, so the status is feasible.
  CmHardware hw = ring(6);
  hw.inputCore = 0;
  hw.outputCore = 3;
  CmPartitioning p = graph(3, {{CmEdge::kGcuInput, 0, 10, false},
                               {0, 1, 10, false},
                               {1, 2, 10, false},
                               {2, CmEdge::kGcuOutput, 10, false}});
  CmPlacementOptions opt;
  opt.exactModelEntries = 83;
  CmPlacement g = placeOnCores(p, hw, opt);
  EXPECT_TRUE(g.greedy);
  EXPECT_EQ(g.modelEntries, 84);
  EXPECT_EQ(g.core, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(g.cost, 50);
  EXPECT_EQ(g.trafficHops, 50);
  EXPECT_EQ(g.lowerBound, 40);
  EXPECT_EQ(g.status, CmPlacement::Status::Feasible);
  EXPECT_EQ(g.nodes, 0u);
  auto dist = [](int a, int b) { return std::min(std::abs(a - b), 6 - std::abs(a - b)); };
  EXPECT_EQ(g.cost, bruteForce(p, hw, dist, CmObjective::Traffic));
  // At its size the exact model runs: the same optimum, proven.
  opt.exactModelEntries = 84;
  CmPlacement e = placeOnCores(p, hw, opt);
  EXPECT_FALSE(e.greedy);
  EXPECT_EQ(e.status, CmPlacement::Status::Optimal);
  EXPECT_EQ(e.cost, 50);
}

TEST(CmPlacement, WorkLimitStopsAtTheSamePoint) {
  // Eight tiles in a chain with skips on a ring of 8: more than a few nodes
  // to prove. A node limit of 20 stops branch and bound after at most 21
  // nodes (the stop is asked before each), at the same node on every run.
  CmHardware hw = ring(8);
  hw.inputCore = 0;
  hw.outputCore = 4;
  std::vector<CmEdge> edges{{CmEdge::kGcuInput, 0, 7, false}, {7, CmEdge::kGcuOutput, 5, false}};
  for (int t = 0; t + 1 < 8; ++t)
    edges.push_back({t, t + 1, 10 + t, false});
  for (int t = 0; t + 3 < 8; ++t)
    edges.push_back({t, t + 3, 3 + t, true});
  CmPartitioning p = graph(8, edges);
  CmPlacementOptions opt;
  opt.nodeLimit = 20;
  CmPlacement a = placeOnCores(p, hw, opt), b = placeOnCores(p, hw, opt);
  EXPECT_LE(a.nodes, 21u);
  EXPECT_NE(a.status, CmPlacement::Status::Optimal);
  EXPECT_FALSE(a.timeLimitHit);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.core, b.core);
  EXPECT_EQ(a.cost, b.cost);
}
