// The solver: exhaustive is optimal in the space, KAPLA stays close to it,
// user-written levels survive verbatim, and the same input gives the same result.
#include "scheduler/analysis/LayerAnalysis.h"
#include "scheduler/kapla/InterLayerSolver.h"
#include "scheduler/kapla/LayerObjective.h"
#include "scheduler/kapla/Parallel.h"
#include "frontend/Loader.h"
#include "model/ScheduleWriter.h"
#include "scheduler/kapla/SegmentChains.h"
#include "scheduler/kapla/Solver.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <limits>

using namespace dfl;
using dfl::test::compile;

namespace {

Solution solve(const Model &model, const Schedule &given, const std::string &solver) {
  SolveFailure failure;
  auto s = makeSolver(solver, 5000000)->solve(model, given, SolverOptions{}, failure);
  EXPECT_TRUE(s.has_value()) << failure;
  return s ? *s : Solution{};
}

Schedule fresh() {
  Schedule s;
  s.network = 0;
  s.hardware = 0;
  return s;
}

} // namespace

TEST(Solver, KaplaIsValidAndCloseToExhaustive) {
  auto c = compile(test::kSmallConv);
  ASSERT_EQ(c.diagnostics(), "");
  Solution k = solve(c.model, fresh(), "kapla");
  Solution e = solve(c.model, fresh(), "exhaustive");
  ASSERT_TRUE(k.result.valid && k.result.complete);
  ASSERT_TRUE(e.result.valid && e.result.complete);
  EXPECT_EQ(e.stats.cappedLayers, 0);   // the yardstick saw the whole space
  EXPECT_EQ(e.stats.provedLayers, 1);   // and proved its result optimal
  // Exhaustive is optimal in the space KAPLA searches: never worse.
  EXPECT_LE(e.result.energyPj, k.result.energyPj * (1 + 1e-12));
  // The bound docs/solver.md states for KAPLA: within 5 % of exhaustive.
  EXPECT_LE(k.result.energyPj, e.result.energyPj * 1.05)
      << "KAPLA " << k.result.energyPj << " pJ, exhaustive " << e.result.energyPj << " pJ";
  // A lower bound any schedule must pay: the MACs (N*K*Xo*Yo*C*R*S =
  // 2*4*4*2*2*9 = 1152 at 1 pJ), and every ifm, wgt and ofm word crossing DRAM
  // once (2*2*8 + 4*2*9 + 2*4*8 = 32 + 72 + 64 = 168 words at 200 pJ).
  EXPECT_GE(e.result.energyPj, 1152 + 168 * 200.0);
  // The solver evaluated fewer candidates than exhaustive search, by far.
  EXPECT_LT(k.stats.candidates * 10, e.stats.candidates);
}

// Weights that bypass the global buffer: KAPLA's ranking of the tensors at a
// level's outer boundary (the accesses at the level above) counts nothing for
// them, so the register file's passes fill it with ofm tiles and the weights
// cross DRAM again for every row: 3.17 uJ, 1.69x the exhaustive yardstick's
// 1.88 uJ. Ranked also by the accesses where each role is held (docs/solver.md,
// "With a bypass"): 2.32 uJ, 1.24x. The rest of the gap is the bottom-up
// passes' (the optimum stacks C over the rows of the register file, a tile
// the global buffer's rows then keep the weights for): issue 36's exact search.
TEST(Solver, KaplaRanksBypassingWeightsByTheirFills) {
  auto c = compile(R"(network n {
  batch N = 4;
  input x [C=16, X=4, Y=4];
  c = conv(x, K=64, R=1);
}
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 128 B; array = 4 x 4; access_energy = 1 pJ; transfer = multicast, systolic; }
  level GBUF { holds = ifm, ofm; capacity = 2 KiB; access_energy = 6 pJ; bus_energy = 2 pJ; }
  level DRAM { access_energy = 200 pJ; bandwidth = 8 B/cycle; }
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  SolveFailure failure;
  auto e = makeSolver("exhaustive", 200000)->solve(c.model, fresh(), SolverOptions{}, failure);
  ASSERT_TRUE(e.has_value()) << failure;
  Solution k = solve(c.model, fresh(), "kapla");
  ASSERT_TRUE(k.result.valid && k.result.complete);
  EXPECT_LE(e->result.energyPj, k.result.energyPj * (1 + 1e-12));
  EXPECT_LE(k.result.energyPj, e->result.energyPj * 1.3)
      << "KAPLA " << k.result.energyPj << " pJ, exhaustive " << e->result.energyPj << " pJ";
  // What any schedule pays: the MACs (N*K*C*X*Y = 4*64*16*16 = 65,536 at
  // 1 pJ) and every word crossing DRAM once (ifm 4*16*16 = 1,024, wgt
  // 64*16 = 1,024, ofm 4*64*16 = 4,096: 6,144 words at 200 pJ).
  EXPECT_GE(k.result.energyPj, 65536 + 6144 * 200.0);
}

// Per-operand scratchpads (eyeriss_pspad's, MobileNet's point_conv4): KAPLA's
// greedy steps, ranked by one boundary's accesses, stopped at C=1 K=8 register
// tiles, 349.9 uJ, 2.4x the best of the random search's 2,000 plans drawn
// within the pads (146.8 uJ, which the exhaustive search, seeded with it,
// does not improve on). The descent now also polishes the best of 128 such
// plans (docs/solver.md, "Sampled starts"): 162.5 uJ with the one-step
// moves, which stop at K stacked 3-fold (the weights, bypassing the global
// buffer, fetched 3 times from DRAM); with the stack jump, which stacks K
// over the whole dim, 147.0 uJ: within 1 % of that independent search's best.
TEST(Solver, KaplaPolishesSampledStartsOnPerOperandBuffers) {
  auto c = compile(R"(network n {
  input x [C=128, X=28, Y=28];
  c = conv(x, K=256, R=1);
}
hardware h {
  word = 16 bit; frequency = 200 MHz; mac { energy = 0.9984 pJ; }
  level REGF {
    array = 12 x 14;
    buffer ispad { holds = ifm; capacity = 24 B; access_energy = 0.21616 pJ; fill_energy = 0 pJ; }
    buffer wspad { holds = wgt; capacity = 448 B; access_energy = 0.933918 pJ; fill_energy = 0 pJ; }
    buffer pspad { holds = ofm; capacity = 48 B; access_energy = 0.305696 pJ; fill_energy = 0 pJ; }
    neighbor_energy = 1.9968 pJ;
    transfer = multicast, systolic;
  }
  level GBUF { holds = ifm, ofm; capacity = 108 KiB; access_energy = 5.9904 pJ; fill_energy = 0 pJ; bus_energy = 1.9968 pJ; }
  level DRAM { access_energy = 199.68 pJ; bandwidth = 8 B/cycle; }
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  Solution k = solve(c.model, fresh(), "kapla");
  SolveFailure failure;
  auto r = makeSolver("random", 0)->solve(c.model, fresh(), SolverOptions{}, failure);   // 2,000 plans
  ASSERT_TRUE(r.has_value()) << failure;
  ASSERT_TRUE(k.result.valid && k.result.complete);
  EXPECT_LE(k.result.energyPj, r->result.energyPj * 1.01)
      << "KAPLA " << k.result.energyPj << " pJ, random " << r->result.energyPj << " pJ";
  // What any schedule pays: the MACs (128*256*28*28 = 25,690,112 at 0.9984
  // pJ) and every word crossing DRAM once (ifm 128*784 = 100,352, wgt
  // 256*128 = 32,768, ofm 256*784 = 200,704: 333,824 words at 199.68 pJ).
  EXPECT_GE(k.result.energyPj, 25690112 * 0.9984 + 333824 * 199.68);
}

// The branch and bound finds the optimum of the space KAPLA and the random
// search draw from: without KAPLA's incumbent it reaches the same energy (the
// bound alone prunes safely), and no random sample of the space beats it.
TEST(Solver, ExhaustiveIsTheOptimumOfTheSpace) {
  auto c = compile(test::kSmallConv);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  const Hardware &hw = c.model.hardware[0];
  auto run = [&](IntraLayerSearch search, bool seed, int64_t cap, IntraLayerStats &stats) {
    IntraLayerOptions o;
    o.search = search;
    o.seedWithKapla = seed;
    o.maxCandidates = cap;
    SolveFailure why;
    auto sol = solveLayer(net, 0, hw, nullptr, o, stats, why);
    EXPECT_TRUE(sol.has_value()) << why;
    return sol ? sol->result.energyPj : 0.0;
  };
  IntraLayerStats seeded, unseeded, kapla, random;
  double best = run(IntraLayerSearch::Exhaustive, true, 0, seeded);
  double bound = run(IntraLayerSearch::Exhaustive, false, 0, unseeded);
  EXPECT_TRUE(seeded.provedOptimal && unseeded.provedOptimal);
  EXPECT_EQ(best, bound);
  EXPECT_GT(unseeded.prunedByBound, 0);
  // The bottom-up enumeration this search replaced finished here with the
  // same optimum (56.304 nJ: the same space) while DRAM still served padding;
  // that schedule reads the padded ifm (2*2*6*4 = 96 words) once from DRAM,
  // 64 of them padding, which DRAM no longer serves (docs/directives.md §6):
  // 56304 - 64*200 = 43504 pJ. That schedule is still in the space, which
  // partial tiles (docs/directives.md §4) have widened, so the optimum is at
  // most that, and at least what every schedule pays (the MACs and every word
  // crossing DRAM once: 1152 + 168*200 pJ, see above).
  EXPECT_LE(best, 56304 - 64 * 200.0 + 1e-6);
  EXPECT_GE(best, 1152 + 168 * 200.0);
  EXPECT_LE(best, run(IntraLayerSearch::Kapla, false, 0, kapla) * (1 + 1e-12));
  EXPECT_LE(best, run(IntraLayerSearch::Random, false, 20000, random) * (1 + 1e-12));
}

// Four levels: the bound of a partial plan leaves out two boundary terms
// below the node level; the optimum does not depend on the incumbent.
TEST(Solver, ExhaustiveOnFourLevels) {
  auto c = compile(R"(network n {
  batch N = 1;
  input x [C=2, X=4, Y=2];
  c = conv(x, K=4, R=3, pad=1);
}
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 32 B; array = 2 x 1; access_energy = 1 pJ; transfer = multicast, systolic; }
  level LBUF { capacity = 256 B; array = 2; access_energy = 3 pJ; transfer = multicast; }
  level GBUF { capacity = 1 KiB; array = 2; access_energy = 6 pJ; transfer = multicast, sharing; }
  level DRAM { access_energy = 200 pJ; bandwidth = 8 B/cycle; }
  noc { hop_energy = 2 pJ; topology = mesh; }
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  double energy[2];
  for (bool seed : {true, false}) {
    IntraLayerOptions o;
    o.search = IntraLayerSearch::Exhaustive;
    o.seedWithKapla = seed;
    IntraLayerStats stats;
    SolveFailure why;
    auto sol = solveLayer(c.model.networks[0], 0, c.model.hardware[0], nullptr, o, stats, why);
    ASSERT_TRUE(sol.has_value()) << why;
    EXPECT_TRUE(stats.provedOptimal);
    EXPECT_GT(stats.prunedByBound, 0);
    energy[seed] = sol->result.energyPj;
  }
  EXPECT_EQ(energy[0], energy[1]);
}

TEST(Solver, UserLevelsSurviveVerbatim) {
  auto c = compile(std::string(test::kSmallConv) + R"(schedule for n on h {
  layer c {
    REGF {
      tensor ifm [N=1, C=1, Xi=3, Yi=1];
      tensor wgt [K=1, C=1, R=3, S=1];
      tensor ofm [N=1, K=1, Xo=1, Yo=1];
      stack K += 1 repl 2;
      update S += 1, Yi += 1;
    }
  }
})");
  ASSERT_EQ(c.diagnostics(), "");
  Solution s = solve(c.model, c.model.schedules[0], "kapla");
  ASSERT_TRUE(s.result.valid && s.result.complete);
  const LevelDirectives &given = c.model.schedules[0].layers[0].levels[0];
  const LevelDirectives &got = s.schedule.layers[0].levels[0];
  ASSERT_EQ(got.level, 0);
  ASSERT_EQ(got.tensors.size(), given.tensors.size());
  for (size_t i = 0; i < given.tensors.size(); ++i)
    EXPECT_EQ(got.tensors[i].sizes, given.tensors[i].sizes);
  ASSERT_EQ(got.stacks.size(), 1u);
  EXPECT_EQ(got.stacks[0].repl, 2);
  EXPECT_EQ(got.stacks[0].shifts, given.stacks[0].shifts);
  ASSERT_EQ(got.updates.size(), 1u);
  EXPECT_EQ(got.updates[0].steps, given.updates[0].steps);
}

// A template that fixes its PE level's dataflow in part (a weight per PE, C
// and K stacked, no ifm or ofm tiles): every search completes that level,
// the template's stacks first and in order (E0813), and the result checks.
TEST(Solver, FixedDataflowIsCompleted) {
  auto c = compile(std::string(test::kSmallConv) + R"(hardware ws {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF {
    capacity = 32 B; array = 2 x 2; access_energy = 1 pJ; transfer = multicast;
    tensor wgt [K=1, C=1, R=1, S=1];
    stack C += 1 repl 2;
    stack K += 1 repl 2;
  }
  level GBUF { capacity = 1 KiB; array = 2; access_energy = 6 pJ; transfer = multicast; }
  level DRAM { access_energy = 200 pJ; bandwidth = 8 B/cycle; }
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  Schedule onWs = fresh();
  onWs.hardware = 1;
  const LevelDirectives &fixed = c.model.hardware[1].levels[0].fixed;
  for (const char *solver : {"kapla", "exhaustive"}) {
    SCOPED_TRACE(solver);
    Solution s = solve(c.model, onWs, solver);
    ASSERT_TRUE(s.result.valid && s.result.complete);
    const LevelDirectives &got = s.schedule.layers[0].levels[0];
    ASSERT_GE(got.stacks.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(got.stacks[i].repl, fixed.stacks[i].repl);
      EXPECT_EQ(got.stacks[i].shifts, fixed.stacks[i].shifts);
    }
    EXPECT_EQ(got.tensors.size(), 3u);
  }
}

TEST(Solver, Deterministic) {
  auto c = compile(test::kSmallConv);
  Solution a = solve(c.model, fresh(), "kapla"), b = solve(c.model, fresh(), "kapla");
  EXPECT_EQ(writeSchedule(c.model, a.schedule, {}, ""), writeSchedule(c.model, b.schedule, {}, ""));
  EXPECT_EQ(a.result.energyPj, b.result.energyPj);
}

// ---- inter-layer: spatially pipelined segments (KAPLA §IV-B) ---------------------

namespace {

/// A stdlib network on a stdlib template, as `dflc NET HW` loads them.
struct Loaded {
  std::unique_ptr<SourceManager> sm = std::make_unique<SourceManager>();
  std::unique_ptr<DiagnosticsEngine> diags = std::make_unique<DiagnosticsEngine>(*sm);
  Model model;
};

std::unique_ptr<Loaded> loadStdlib(const std::string &net, const std::string &hw) {
  auto l = std::make_unique<Loaded>();
  const std::string &root = dfl::test::kStdlibRoot;
  LoadedFiles files = loadFiles({root + "/stdlib/nets/" + net + ".dfl", root + "/stdlib/hw/" + hw + ".dfl"},
                                LoadOptions{{root}}, *l->sm, *l->diags);
  l->model = analyze(files.files, *l->diags);
  EXPECT_FALSE(l->diags->hasErrors()) << net << " on " << hw;
  return l;
}

/// The layer-wise solution (every layer alone on all nodes, no segments): the
/// context the inter-layer solver starts from.
/// Every layer solved alone on all nodes, no segments (the inter-layer
/// solver's starting point).
Solution layerwise(const Model &model) {
  SolverOptions o;
  o.pipelining = false;
  SolveFailure failure;
  auto s = makeSolver("kapla", 5000000)->solve(model, fresh(), o, failure);
  EXPECT_TRUE(s.has_value()) << failure;
  return s ? *s : Solution{};
}

Solution solveWith(const Model &model, SolverOptions o) {
  SolveFailure failure;
  auto s = makeSolver("kapla")->solve(model, fresh(), o, failure);
  EXPECT_TRUE(s.has_value()) << failure;
  return s ? *s : Solution{};
}

// Three 1x1/3x3 convs in a chain on four nodes whose 256 B buffers cannot hold
// a whole-batch tile with all channels: the conservative check has something
// to prune (see ConservativePruningDropsNothingValid for the numbers).
const char *kChain = R"(network chain {
  batch N = 8;
  input x [C=4, X=4, Y=4];
  a = conv(x, K=8, R=3, pad=1);
  b = conv(a, K=8, R=1);
  c = conv(b, K=4, R=1);
}
hardware quad {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 32 B; array = 2 x 2; access_energy = 1 pJ; transfer = multicast; }
  level GBUF { capacity = 256 B; array = 2 x 2; access_energy = 6 pJ; bandwidth = 8 B/cycle; transfer = multicast; }
  level DRAM { access_energy = 200 pJ; bandwidth = 8 B/cycle; }
  noc { hop_energy = 2 pJ; }
  pipeline { temporal = true; spatial = true; }
}
)";

} // namespace

TEST(InterLayer, NodeRegionsFollowWork) {
  auto c = compile(kChain);
  ASSERT_EQ(c.diagnostics(), "");
  Solution base = layerwise(c.model);
  InterLayerSolver inter(c.model, base.schedule, base.result, InterLayerOptions{});
  // MACs per sample: a 8*4*4*4*9 = 4608, b 8*8*16 = 1024, c 4*8*16 = 512. One
  // node each, the one spare node to the largest share (4608/6144 of 1 = 0.75).
  EXPECT_EQ(inter.allocateNodes(0, 2), (std::vector<int64_t>{2, 1, 1}));
  // Two spare nodes: a 2*4608/5632 = 1.64, b 0.36; a gets 1, then the
  // larger remainder (a's 0.64) the last one.
  EXPECT_EQ(inter.allocateNodes(0, 1), (std::vector<int64_t>{3, 1}));
}

TEST(InterLayer, ConservativePruningDropsNothingValid) {
  auto c = compile(kChain);
  ASSERT_EQ(c.diagnostics(), "");
  Solution base = layerwise(c.model);
  InterLayerSolver inter(c.model, base.schedule, base.result, InterLayerOptions{});
  // Batch tiles tried: 1 and 8 (8 is both the middle choice and the batch).
  ASSERT_EQ(inter.batchTiles(), (std::vector<int64_t>{1, 8}));
  // Channel splits: the forwarded channel dims are a's K = b's C = 8 and b's
  // K = c's C = 8; 2 and 4 divide 8.
  ASSERT_EQ(inter.channelSplits(0, 2), (std::vector<int64_t>{1, 2, 4}));
  ASSERT_EQ(inter.schemes(0, 2, inter.allocateNodes(0, 2)).size(), 6u);
  // Segment a..c with N=8: b receives from a and forwards to c, so b's node
  // tile has C=8 and K=8, the other dims at least 1: ifm N*C 8*8 + wgt K*C 8*8
  // + ofm N*K 8*8 = 192 words = 384 B > 256 B. Pruned.
  EXPECT_FALSE(inter.mayFit({0, 2, inter.allocateNodes(0, 2), 8}));
  // The same with the channels forwarded in halves: b's tile C=4, K=4:
  // 8*4 + 4*4 + 8*4 = 80 words = 160 B; a (K=4) 8*1 + 4*1 + 8*4 = 44 words,
  // c (C=4) 8*4 + 1*4 + 8*1 = 44 words. Kept: the finer channel granularity
  // is what makes the whole batch per chunk possible here.
  EXPECT_TRUE(inter.mayFit({0, 2, inter.allocateNodes(0, 2), 8, 2}));
  // With N=1: b needs 1*8 + 8*8 + 1*8 = 80 words = 160 B; a (K=8) 1 + 8 + 8 =
  // 17 words, c (C=8) 8 + 8 + 1 = 17: kept.
  EXPECT_TRUE(inter.mayFit({0, 2, inter.allocateNodes(0, 2), 1}));
  // Segment b..c with N=8: b's C is free (a is outside): 8*1 + 8*1 + 8*8 = 80
  // words, c 8*8 + 1*8 + 8*1 = 80 words, 160 B each: kept.
  EXPECT_TRUE(inter.mayFit({1, 2, inter.allocateNodes(1, 2), 8}));
  // The property, over every scheme (batch tile x channel split): the check
  // prunes only schemes for which the exhaustive intra-layer search (the
  // whole space, no cap on layers this small) finds no valid schedule.
  InterLayerOptions exhaustive;
  exhaustive.intra.search = IntraLayerSearch::Exhaustive;
  InterLayerSolver yardstick(c.model, base.schedule, base.result, exhaustive);
  int pruned = 0, kept = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      for (const SpatialSegment &s : inter.schemes(i, j, inter.allocateNodes(i, j))) {
        if (inter.mayFit(s)) {
          ++kept;
          continue;
        }
        ++pruned;
        InterLayerStats stats;
        EXPECT_FALSE(yardstick.solveSpatial(s, stats).has_value())
            << "pruned " << i << ".." << j << " N=" << s.batchTile << " split " << s.channelSplit;
      }
  EXPECT_GT(pruned, 0);
  EXPECT_GT(kept, 0);
}

TEST(InterLayer, ParetoFrontOfAHandMadeSet) {
  // Two access counts and a buffer, as SchemeEstimate::paretoVector gives them.
  std::vector<std::vector<double>> points = {
      {10, 5, 100},   // 0: kept (least buffer of all but 4, which has more of the first count)
      {10, 5, 200},   // 1: 0 is as good everywhere and better in buffer: dropped
      {8, 9, 300},    // 2: kept (least first count)
      {8, 9, 300},    // 3: equal to 2: neither dominates the other, both kept
      {12, 5, 50},    // 4: kept (least buffer)
      {12, 9, 300},   // 5: 2 is better in the first count, equal elsewhere: dropped
      {13, 6, 60},    // 6: 4 is better everywhere: dropped
  };
  EXPECT_EQ(paretoFront(points), (std::vector<size_t>{0, 2, 3, 4}));
  EXPECT_EQ(paretoFront({}), (std::vector<size_t>{}));
  EXPECT_EQ(paretoFront({{1, 2}}), (std::vector<size_t>{0}));
}

TEST(InterLayer, ChannelGranularityRechecksValid) {
  // Segment a..c of the chain with the channels forwarded in halves and the
  // whole batch per chunk (the scheme the check above keeps). The solver's
  // schedule must pass E0814: a's ofm tile K=4 = b's ifm tile C=4, b's K=4 =
  // c's C=4, N=8 everywhere, and the same steps on both ends.
  auto c = compile(kChain);
  ASSERT_EQ(c.diagnostics(), "");
  Solution base = layerwise(c.model);
  InterLayerSolver inter(c.model, base.schedule, base.result, InterLayerOptions{});
  InterLayerStats stats;
  auto s = inter.solveSpatial({0, 2, inter.allocateNodes(0, 2), 8, 2}, stats);
  // On 256 B nodes the consumers lack room for what their dependences hold
  // (E0824): then the solver refuses the scheme, and what must hold here is
  // that E0824 is all it breaks, E0814 not.
  const bool short_ = !s.has_value();
  if (short_) {
    ASSERT_EQ(stats.prunedBuffer, 1);
    ASSERT_TRUE(inter.shortOfBuffer().has_value());
  }
  const Schedule &solved = short_ ? *inter.shortOfBuffer() : s->first;
  const ScheduleResult r = short_ ? analyzeSchedule(c.model, solved) : s->second;
  ASSERT_TRUE(r.complete);
  for (const Issue &i : r.issues)
    EXPECT_EQ(i.id, diag::err_segment_buffer);
  const size_t top = c.model.hardware[0].levels.size() - 2;
  EXPECT_EQ(at(r.layers[0].levels[top].extent, Dim::K), 4);
  EXPECT_EQ(at(r.layers[1].levels[top].extent, Dim::C), 4);
  EXPECT_EQ(at(r.layers[1].levels[top].extent, Dim::K), 4);
  EXPECT_EQ(at(r.layers[2].levels[top].extent, Dim::C), 4);
  for (int x = 0; x < 3; ++x)
    EXPECT_EQ(at(r.layers[x].levels[top].extent, Dim::N), 8);
  // Forwarded in two chunks (the producers walk K in two steps of 4).
  ASSERT_EQ(r.segments.size(), 1u);
  EXPECT_EQ(r.segments[0].chunks, 2);
  // As `dflc check` sees it: the schedule written out and read back.
  std::string text = writeSchedule(c.model, solved, {}, "");
  auto again = compile(std::string(kChain) + text);
  ASSERT_EQ(again.diagnostics(), "") << text;
  ASSERT_EQ(again.model.schedules.size(), 1u);
  ScheduleResult checked = analyzeSchedule(again.model, again.model.schedules[0]);
  EXPECT_TRUE(checked.complete) << text;
  EXPECT_EQ(checked.valid, r.valid) << text;
  EXPECT_EQ(checked.issues.size(), r.issues.size()) << text;
  EXPECT_EQ(checked.energyPj, r.energyPj);
}

TEST(InterLayer, LowerBoundNeverAboveRealCost) {
  // Property over stdlib layers: alone (the layer-wise schedules) and in every
  // spatial segment of two or three layers that the solver can schedule, with
  // every scheme (batch tile x channel split). The scheme's estimate is not a
  // bound, but never below the bound either (it adds to the same terms).
  for (const char *net : {"alexnet", "mobilenet", "resnet18", "lstm"}) {
    auto l = loadStdlib(net, "eyeriss_multinode");
    Solution base = layerwise(l->model);
    ASSERT_TRUE(base.result.valid && base.result.complete) << net;
    InterLayerSolver inter(l->model, base.schedule, base.result, InterLayerOptions{});
    const int n = static_cast<int>(base.result.layers.size());
    for (int x = 0; x < n; ++x)
      EXPECT_LE(inter.lowerBoundPj(x, x), base.result.layers[x].energyPj) << net << " layer " << x;
    int checked = 0, split = 0;
    for (int i = 0; i + 1 < n && i < 24; ++i)
      for (int j = i + 1; j < n && j <= i + 2; ++j)
        for (const SpatialSegment &s : inter.schemes(i, j, inter.allocateNodes(i, j))) {
          if (!inter.mayFit(s))
            continue;
          EXPECT_GE(inter.estimate(s).energyPj, inter.lowerBoundPj(i, j));
          InterLayerStats stats;
          auto real = inter.solveSpatial(s, stats);
          if (!real)
            continue;
          double e = 0;
          for (int x = i; x <= j; ++x)
            e += real->second.layers[x].energyPj;
          EXPECT_LE(inter.lowerBoundPj(i, j), e)
              << net << " segment " << i << ".." << j << " N=" << s.batchTile << " split " << s.channelSplit;
          ++checked;
          split += s.channelSplit > 1;
        }
    EXPECT_GT(checked, 0) << net;
    if (std::string(net) != "lstm") {
      EXPECT_GT(split, 0) << net;   // channel granularities were among them
    }
  }
}

TEST(InterLayer, TopFourIsNeverWorseThanTopOne) {
  for (const char *net : {"alexnet", "googlenet", "mobilenet"}) {
    auto l = loadStdlib(net, "eyeriss_multinode");
    for (Objective obj : {Objective::Energy, Objective::Latency}) {
      SolverOptions one, four;
      one.topK = 1;
      four.topK = 4;
      one.objective = four.objective = obj;
      Solution a = solveWith(l->model, one), b = solveWith(l->model, four);
      ASSERT_TRUE(a.result.valid && b.result.valid) << net;
      EXPECT_LE(objectiveValue(obj, b.result.energyPj, b.result.latencyCycles),
                objectiveValue(obj, a.result.energyPj, a.result.latencyCycles) * (1 + 1e-12))
          << net << " " << objectiveName(obj);
      EXPECT_GE(b.stats.interLayer.chains, a.stats.interLayer.chains);
    }
  }
}

TEST(InterLayer, SpatialSegmentsRecheckValidAndDeterministic) {
  // MobileNetV2 for latency: spatial pipelining overlaps the layers of a
  // segment, so the solver picks pipelined segments (asserted: otherwise this
  // test would check nothing). AlexNet's, at batch 1, no longer win: its
  // layers are DRAM-bound, and pipelined layers share the DRAM channel (§8).
  // Temporal segments off: with their layers solved as the segment prices
  // them they beat spatial pipelining here (175,863 against 227,759 cycles).
  auto l = loadStdlib("mobilenet_v2", "eyeriss_multinode");
  l->model.hardware[0].temporalPipelining = false;
  SolverOptions o;
  o.objective = Objective::Latency;
  Solution s = solveWith(l->model, o);
  ASSERT_TRUE(s.result.valid && s.result.complete);
  int pipelined = 0;
  for (const Segment &seg : s.schedule.segments)
    pipelined += seg.pipelined ? 1 : 0;
  EXPECT_GT(pipelined, 0);
  // Re-checking the schedule gives the solver's numbers exactly, through the
  // E0814/E0815 rules (matched granularity, regions within the array).
  ScheduleResult again = analyzeSchedule(l->model, s.schedule);
  EXPECT_TRUE(again.valid) << (again.issues.empty() ? "" : again.issues[0].args[0]);
  EXPECT_EQ(again.energyPj, s.result.energyPj);
  EXPECT_EQ(again.latencyCycles, s.result.latencyCycles);
  const size_t top = l->model.hardware[0].levels.size() - 2;
  for (const SegmentResult &seg : again.segments) {
    if (!seg.pipelined)
      continue;
    int64_t nodes = 0;
    for (int x : seg.layers)
      nodes += again.layers[x].levels[top].units;
    EXPECT_LE(nodes, l->model.hardware[0].levels[top].units());
  }
  // Same input, same schedule.
  Solution t = solveWith(l->model, o);
  EXPECT_EQ(writeSchedule(l->model, s.schedule, {}, ""), writeSchedule(l->model, t.schedule, {}, ""));
  EXPECT_EQ(s.stats.interLayer.candidates, t.stats.interLayer.candidates);
}

// ---- inter-layer: room for a temporal segment's intermediates (E0819) -------------

namespace {

// Two 1x1 convs on one node with a 512 B buffer, only temporal segments. a's
// output (the intermediate) is 4*4*4 = 64 words = 128 B; a alone needs ifm
// 16*16 + wgt 4*16 + ofm 64 = 384 words = 768 B whole, b ifm 64 + wgt 64 +
// ofm 256 = 384 words too: neither fits whole, and each layer's schedule
// alone holds as much of its tensors as helps — 448 B (asserted below), more
// than the 512 - 128 = 384 B the intermediate leaves. So the segment a, b
// fails E0819 with the layer-wise schedules.
const char *kFull = R"(network pair {
  batch N = 1;
  input x [C=16, X=4, Y=4];
  a = conv(x, K=4, R=1);
  b = conv(a, K=16, R=1);
}
hardware one {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 32 B; array = 2 x 2; access_energy = 1 pJ; transfer = multicast; }
  level GBUF { capacity = 512 B; array = 1; access_energy = 6 pJ; bandwidth = 8 B/cycle; }
  level DRAM { access_energy = 200 pJ; bandwidth = 8 B/cycle; }
  pipeline { temporal = true; }
}
)";

/// Each layer solved alone by `search` (no reserve), no segments.
Schedule layerByLayer(const Model &model, IntraLayerSearch search) {
  Schedule s = fresh();
  IntraLayerOptions o;
  o.search = search;
  for (size_t x = 0; x < model.networks[0].layers.size(); ++x) {
    IntraLayerStats stats;
    SolveFailure why;
    auto sol = solveLayer(model.networks[0], static_cast<int>(x), model.hardware[0], nullptr, o, stats, why);
    EXPECT_TRUE(sol.has_value()) << why;
    if (sol)
      s.layers.push_back(sol->schedule);
  }
  return s;
}

} // namespace

TEST(InterLayer, ReserveIsHonouredByEverySearch) {
  auto c = compile(kFull);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  const Hardware &hw = c.model.hardware[0];
  const size_t top = hw.levels.size() - 2;
  for (IntraLayerSearch search : {IntraLayerSearch::Kapla, IntraLayerSearch::Exhaustive, IntraLayerSearch::Random})
    for (int64_t reserve : {int64_t{0}, int64_t{128}, int64_t{256}})
      for (int x = 0; x < 2; ++x) {
        IntraLayerOptions o;
        o.search = search;
        o.reservedTopBytes = reserve;
        IntraLayerStats stats;
        SolveFailure why;
        auto sol = solveLayer(net, x, hw, nullptr, o, stats, why);
        ASSERT_TRUE(sol.has_value()) << why;
        EXPECT_LE(sol->result.levels[top].occupancyBytes, 512 - reserve)
            << "layer " << x << " search " << static_cast<int>(search) << " reserve " << reserve;
        if (reserve == 0 && search != IntraLayerSearch::Random) {   // the premise of the next test
          EXPECT_GT(sol->result.levels[top].occupancyBytes, 384) << "layer " << x;
        }
      }
}

TEST(InterLayer, ReserveMakesTemporalSegmentFit) {
  auto c = compile(kFull);
  ASSERT_EQ(c.diagnostics(), "");
  for (const char *solver : {"kapla", "exhaustive"}) {
    IntraLayerSearch search = std::string(solver) == "kapla" ? IntraLayerSearch::Kapla : IntraLayerSearch::Exhaustive;
    // The layer-wise schedules: valid alone, but not as the segment a, b (E0819).
    Schedule alone = layerByLayer(c.model, search);
    ScheduleResult aloneResult = analyzeSchedule(c.model, alone);
    ASSERT_TRUE(aloneResult.valid && aloneResult.complete) << solver;
    Schedule together = alone;
    Segment seg;
    seg.layers = {0, 1};
    together.segments.push_back(seg);
    ASSERT_FALSE(analyzeSchedule(c.model, together).valid) << solver;
    // The solver re-solves both layers with a reserve of 128 B (a quarter of
    // the buffer, a multiple of its sixteenths: no rounding here) and keeps the segment. Keeping a on chip saves
    // its DRAM write-back and b's DRAM fill, 64 words each at 200 pJ: 25.6 nJ;
    // the reserve costs the layers less than that (KAPLA: a 87 744 -> 90 432 pJ,
    // b 89 088 -> 88 512 pJ; exhaustive 87 744 -> 88 512 pJ each: the layers'
    // DRAM traffic stays, only GBUF-level reuse is lost), so the chain with
    // the segment is strictly below the layer-by-layer energy.
    SolveFailure failure;
    auto s = makeSolver(solver, 5000000)->solve(c.model, fresh(), SolverOptions{}, failure);
    ASSERT_TRUE(s.has_value()) << failure;
    ASSERT_EQ(s->schedule.segments.size(), 1u) << solver;
    EXPECT_EQ(s->schedule.segments[0].layers, (std::vector<int>{0, 1}));
    EXPECT_FALSE(s->schedule.segments[0].pipelined);
    EXPECT_EQ(s->stats.interLayer.temporalReserved, 1);
    ScheduleResult again = analyzeSchedule(c.model, s->schedule);
    ASSERT_TRUE(again.valid && again.complete) << solver;
    EXPECT_EQ(again.energyPj, s->result.energyPj);
    EXPECT_LT(s->result.energyPj, aloneResult.energyPj) << solver;
    // Exactly: both layers as solved with the 128 B reserve, less the saving.
    double reservedPj = 0;
    for (int x = 0; x < 2; ++x) {
      IntraLayerOptions o;
      o.search = search;
      o.reservedTopBytes = 128;
      IntraLayerStats stats;
      SolveFailure why;
      auto sol = solveLayer(c.model.networks[0], x, c.model.hardware[0], nullptr, o, stats, why);
      ASSERT_TRUE(sol.has_value()) << why;
      reservedPj += sol->result.energyPj;
    }
    EXPECT_NEAR(s->result.energyPj, reservedPj - 25600, 1e-6 * reservedPj) << solver;
  }
}

// ---- the solve budget: a deadline, a candidate cap, a cancel flag ------------------

namespace {

/// Solves with `solver` under `budget`; the failure, if any, in `failure`.
std::optional<Solution> solveUnder(const Model &model, const std::string &solver, SolveBudget budget,
                                   SolveFailure &failure, size_t *progressCalls = nullptr) {
  SolverOptions o;
  o.budget = std::move(budget);
  if (progressCalls)
    o.progress = [progressCalls](size_t, size_t) { ++*progressCalls; };
  return makeSolver(solver)->solve(model, fresh(), o, failure);
}

/// A complete, valid schedule as `dflc check` sees it: analyzed again from scratch.
void expectValidComplete(const Model &model, const Solution &s, const std::string &what) {
  ScheduleResult again = analyzeSchedule(model, s.schedule);
  EXPECT_TRUE(again.valid && again.complete) << what;
  EXPECT_EQ(s.schedule.layers.size(), model.networks[0].layers.size()) << what;
}

} // namespace

TEST(SolverBudget, UnlimitedIsComplete) {
  auto l = loadStdlib("alexnet", "eyeriss_multinode");
  SolveFailure failure;
  auto s = solveUnder(l->model, "kapla", SolveBudget{}, failure);
  ASSERT_TRUE(s.has_value()) << failure;
  EXPECT_EQ(s->stats.status, SolveStatus::Complete);
  EXPECT_EQ(s->stats.limit, SolveLimit::None);
  EXPECT_EQ(s->stats.limitedLayers, 0);
}

TEST(SolverBudget, SpentDeadlineStillYieldsAValidSchedule) {
  // A deadline already past: every layer stops at its first valid candidate
  // (the incumbent), and the schedule is complete and valid — Feasible.
  auto l = loadStdlib("alexnet", "eyeriss_multinode");
  const int64_t layers = static_cast<int64_t>(l->model.networks[0].layers.size());
  for (const char *solver : {"kapla", "exhaustive"}) {
    SolveBudget b;
    b.deadline = SolveBudget::Clock::now();
    SolveFailure failure;
    auto s = solveUnder(l->model, solver, b, failure);
    ASSERT_TRUE(s.has_value()) << solver << ": " << failure;
    EXPECT_EQ(s->stats.status, SolveStatus::Feasible) << solver;
    EXPECT_EQ(s->stats.limit, SolveLimit::Time) << solver;
    EXPECT_EQ(s->stats.limitedLayers, layers) << solver;   // every layer's search was stopped
    EXPECT_EQ(s->stats.provedLayers, 0) << solver;         // so none proves anything
    EXPECT_TRUE(s->result.valid && s->result.complete) << solver;
    expectValidComplete(l->model, *s, solver);
  }
}

TEST(SolverBudget, CandidateCapOfOneStillYieldsAValidSchedule) {
  auto l = loadStdlib("mobilenet", "eyeriss_multinode");
  SolveFailure failure;
  auto full = solveUnder(l->model, "kapla", SolveBudget{}, failure);
  ASSERT_TRUE(full.has_value()) << failure;
  SolveBudget b;
  b.maxCandidates = 1;
  auto s = solveUnder(l->model, "kapla", b, failure);
  ASSERT_TRUE(s.has_value()) << failure;
  EXPECT_EQ(s->stats.status, SolveStatus::Feasible);
  EXPECT_EQ(s->stats.limit, SolveLimit::Candidates);
  expectValidComplete(l->model, *s, "cap 1");
  // Each layer went on only to its first valid candidate: a few per layer,
  // against the hundreds the descent scores unlimited.
  EXPECT_GE(s->stats.candidates, static_cast<int64_t>(l->model.networks[0].layers.size()));
  EXPECT_LT(s->stats.candidates * 10, full->stats.candidates);
  // The budget's best is no better than the unlimited solve's (same space, less searched).
  EXPECT_GE(s->result.energyPj, full->result.energyPj * (1 - 1e-12));
}

TEST(SolverBudget, CancelledUpFrontScoresNothing) {
  // Nothing is wanted: no layer is solved and no candidate scored, and the
  // failure says the limit stopped it, not that no schedule exists.
  auto l = loadStdlib("alexnet", "eyeriss_multinode");
  std::atomic<bool> cancel{true};
  int64_t scored = 0;
  SolveBudget b;
  b.cancel = &cancel;
  b.onCandidate = [&](int64_t n) { scored = n; };
  SolveFailure failure;
  size_t progress = 0;
  auto s = solveUnder(l->model, "kapla", b, failure, &progress);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(failure.status(), SolveStatus::NoneWithinLimit);
  EXPECT_EQ(failure.reason, SolveFailure::Reason::NoneWithinLimit);
  EXPECT_EQ(failure.limit, SolveLimit::Cancelled);
  EXPECT_EQ(failure.layer, 0);
  EXPECT_EQ(scored, 0);
  EXPECT_EQ(progress, 0u);   // zero layers completed
  EXPECT_NE(failure.describe().find("cancelled"), std::string::npos) << failure;
}

TEST(SolverBudget, CancellationStopsWithinALayer) {
  // One conv: solved in full it scores thousands of candidates (asserted). The flag
  // set at the 50th stops the search inside the layer, a handful after.
  auto c = compile(R"(network big {
  batch N = 4;
  input x [C=16, X=14, Y=14];
  c = conv(x, K=32, R=3, pad=1);
}
)" + std::string(R"(hardware grid {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; transfer = multicast; }
  level GBUF { capacity = 32 KiB; array = 4 x 4; access_energy = 6 pJ; bandwidth = 8 B/cycle; transfer = multicast; }
  level DRAM { access_energy = 200 pJ; bandwidth = 8 B/cycle; }
}
)"));
  ASSERT_EQ(c.diagnostics(), "");
  for (const char *solver : {"kapla", "exhaustive", "random"}) {
    SolveFailure failure;
    int64_t fullCandidates = 0;
    SolveBudget count;
    count.onCandidate = [&](int64_t n) { fullCandidates = n; };
    solveUnder(c.model, solver, count, failure);
    ASSERT_GT(fullCandidates, 500) << solver;
    std::atomic<bool> cancel{false};
    int64_t scored = 0;
    SolveBudget b;
    b.cancel = &cancel;
    b.onCandidate = [&](int64_t n) {
      scored = n;
      if (n == 50)
        cancel = true;
    };
    size_t progress = 0;
    auto s = solveUnder(c.model, solver, b, failure, &progress);
    EXPECT_GE(scored, 50) << solver;
    EXPECT_LE(scored, 60) << solver;   // stopped where it scores candidates, inside the one layer
    // Cancelled: the best found so far if any was valid (the caller discards it), else nothing.
    if (s) {
      EXPECT_EQ(s->stats.limit, SolveLimit::Cancelled) << solver;
      EXPECT_EQ(s->stats.status, SolveStatus::Feasible) << solver;
      expectValidComplete(c.model, *s, solver);
    } else {
      EXPECT_EQ(failure.limit, SolveLimit::Cancelled) << solver;
      EXPECT_EQ(progress, 0u) << solver;
    }
  }
}

TEST(SolverBudget, FailuresAreTyped) {
  // The E0821 case: one ifm, one wgt and one ofm word (6 B) do not fit a 4 B
  // register file. The failure names the layer, the level and both numbers.
  auto c = compile(R"(network n {
  batch N = 1;
  input x [C=2, X=4, Y=4];
  c = conv(x, K=2, R=1);
}
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 4 B; array = 2 x 2; access_energy = 1 pJ; }
  level GBUF { capacity = 1 KiB; access_energy = 10 pJ; }
  level DRAM { access_energy = 100 pJ; }
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  SolveFailure failure;
  ASSERT_FALSE(solveUnder(c.model, "kapla", SolveBudget{}, failure).has_value());
  EXPECT_EQ(failure.reason, SolveFailure::Reason::DoesNotFit);
  EXPECT_EQ(failure.status(), SolveStatus::Infeasible);
  EXPECT_EQ(failure.layer, 0);
  EXPECT_EQ(failure.layerName, "c");
  EXPECT_EQ(failure.level, 0);
  EXPECT_EQ(failure.levelName, "REGF");
  EXPECT_EQ(failure.neededBytes, 6);
  EXPECT_EQ(failure.availableBytes, 4);
  EXPECT_EQ(failure.describe(), "layer 'c' does not fit level REGF: even its smallest tiles need 6 B of 4 B");
  // The random search names the same rule with the same numbers (it used to
  // say only "no valid schedule among 2000 random samples").
  SolveFailure random;
  ASSERT_FALSE(solveUnder(c.model, "random", SolveBudget{}, random).has_value());
  EXPECT_EQ(random.reason, SolveFailure::Reason::DoesNotFit);
  EXPECT_EQ(random.describe(), failure.describe());
}

TEST(SolverBudget, LimitDuringTheInterLayerStepsKeepsTheBestChainSoFar) {
  // A cap just past what the layers alone take: it is reached while the
  // inter-layer solver works, which stops between its steps and returns the
  // best valid schedule so far — never worse than the layer-wise one.
  auto l = loadStdlib("googlenet", "eyeriss_multinode");
  SolveFailure failure;
  auto full = solveUnder(l->model, "kapla", SolveBudget{}, failure);
  ASSERT_TRUE(full.has_value()) << failure;
  const int64_t layerPhase = full->stats.candidates - full->stats.interLayer.intra.candidates;
  ASSERT_GT(full->stats.interLayer.intra.candidates, 100);   // the premise: the inter-layer steps score candidates
  SolveBudget b;
  b.maxCandidates = layerPhase + 50;
  auto s = solveUnder(l->model, "kapla", b, failure);
  ASSERT_TRUE(s.has_value()) << failure;
  EXPECT_EQ(s->stats.status, SolveStatus::Feasible);
  EXPECT_EQ(s->stats.limit, SolveLimit::Candidates);
  EXPECT_EQ(s->stats.limitedLayers, 0);   // every layer alone finished its search
  expectValidComplete(l->model, *s, "cap in the inter-layer steps");
  EXPECT_LT(s->stats.candidates, full->stats.candidates);
  // No better than the unlimited solve; no worse than the layers alone (its first incumbent).
  EXPECT_GE(s->result.energyPj, full->result.energyPj * (1 - 1e-12));
  SolveBudget spent;
  spent.maxCandidates = layerPhase;   // reached exactly when the layers are done: the layer-wise schedule
  auto layerwiseOnly = solveUnder(l->model, "kapla", spent, failure);
  ASSERT_TRUE(layerwiseOnly.has_value()) << failure;
  EXPECT_TRUE(layerwiseOnly->schedule.segments.empty());
  EXPECT_LE(s->result.energyPj, layerwiseOnly->result.energyPj * (1 + 1e-12));
}

TEST(SegmentChains, CheapestChainsByHand) {
  // Three layers of cost 1 each; layers 0..1 as a temporal segment cost 1.5,
  // 1..2 as a spatial one 1.8; nothing else is a segment. The chains and
  // their costs: {T 0..1, 2} 2.5, {0, S 1..2} 2.8, {0, 1, 2} 3.
  auto single = [](int) { return 1.0; };
  SegmentCost temporal = [](int i, int j) { return i == 0 && j == 1 ? std::optional<double>(1.5) : std::nullopt; };
  SegmentCost spatial = [](int i, int j) { return i == 1 && j == 2 ? std::optional<double>(1.8) : std::nullopt; };
  std::vector<Chain> chains = cheapestChains(3, 2, 5, single, temporal, spatial);
  ASSERT_EQ(chains.size(), 3u);
  EXPECT_EQ(chains[0], (Chain{{0, 1, SegmentKind::Temporal}, {2, 2, SegmentKind::Single}}));
  EXPECT_EQ(chains[1], (Chain{{0, 0, SegmentKind::Single}, {1, 2, SegmentKind::Spatial}}));
  EXPECT_EQ(chains[2],
            (Chain{{0, 0, SegmentKind::Single}, {1, 1, SegmentKind::Single}, {2, 2, SegmentKind::Single}}));
  // k = 1: the cheapest alone; segments longer than maxLen = 1: singles only.
  EXPECT_EQ(cheapestChains(3, 2, 1, single, temporal, spatial), std::vector<Chain>{chains[0]});
  EXPECT_EQ(cheapestChains(3, 1, 5, single, temporal, spatial), std::vector<Chain>{chains[2]});
}

// Partial tiles (docs/directives.md §4, docs/solver.md): a 1x1 conv whose
// every dim is prime, C=37 -> K=61 on a 31x31 map, on eyeriss_multinode
// (16 x 16 nodes of 8 x 8 PEs), solved for latency by each search. With
// exact tiles only, no dim can be stacked (37, 61 and 31 exceed every array
// side, 8 and 16, and have no other divisor): 1 PE, 2,168,977 cycles.
// Lower bound, by hand: the MACs 37*61*31*31 = 2,168,977 over 16,384 PEs take
// 132.4 cycles; DRAM must deliver every word once, ifm 37*31*31 = 35,557, wgt
// 61*37 = 2,257, ofm 61*31*31 = 58,621: 96,435 words of 2 B at 51.2 B/cycle
// (nn_dataflow's multi_node.json), 3,767.0 cycles. What must hold: every
// search comes within 5 % of that bound, so the compute time is at most
// 1.05 * 3,767.0 = 3,955.3 cycles and the utilization (MACs over all PEs times
// the compute cycles) at least 2,168,977 / (16,384 * 3,955.3) = 0.0334.
TEST(Solver, PartialTilesKeepThePrimeLayerBusy) {
  std::ifstream in(dfl::test::kStdlibRoot + "/stdlib/hw/eyeriss_multinode.dfl");
  std::stringstream hw;
  hw << in.rdbuf();
  auto c = compile(R"(network primes {
  batch N = 1;
  input x [C=37, X=31, Y=31];
  l = conv(x, K=61, R=1);
}
)" + hw.str());
  ASSERT_EQ(c.diagnostics(), "");
  const double lowerBound = 96435.0 * 2 / 51.2;
  for (IntraLayerSearch search : {IntraLayerSearch::Kapla, IntraLayerSearch::Exhaustive, IntraLayerSearch::Random}) {
    IntraLayerOptions o;
    o.objective = Objective::Latency;
    o.search = search;
    if (search == IntraLayerSearch::Exhaustive) {
      o.seedWithKapla = false;   // the branch and bound's own space, not KAPLA's answer
      o.maxCandidates = 50000;
    }
    IntraLayerStats stats;
    SolveFailure why;
    auto sol = solveLayer(c.model.networks[0], 0, c.model.hardware[0], nullptr, o, stats, why);
    ASSERT_TRUE(sol.has_value()) << why;
    EXPECT_DOUBLE_EQ(sol->result.work, 2168977);
    EXPECT_GE(sol->result.latencyCycles, lowerBound * (1 - 1e-9));
    EXPECT_LE(sol->result.latencyCycles, lowerBound * 1.05) << "search " << static_cast<int>(search);
    EXPECT_GE(sol->result.utilization, 0.0334) << "search " << static_cast<int>(search);
  }
}

// ---- objectives a chip designer uses (docs/solver.md, "Constraints and the
// energy-latency front")

namespace {

struct StdlibModel {
  std::unique_ptr<SourceManager> sm = std::make_unique<SourceManager>();
  std::unique_ptr<DiagnosticsEngine> diags = std::make_unique<DiagnosticsEngine>(*sm);
  Model model;
};

StdlibModel loadStdlib(const std::string &net, const std::string &hw, int64_t batch) {
  StdlibModel m;
  const std::string &root = dfl::test::kStdlibRoot;
  LoadedFiles files = loadFiles({root + "/stdlib/nets/" + net + ".dfl", root + "/stdlib/hw/" + hw + ".dfl"},
                                LoadOptions{{root}}, *m.sm, *m.diags);
  m.model = analyze(files.files, *m.diags, AnalyzeOptions{false, batch});
  EXPECT_FALSE(m.diags->hasErrors());
  return m;
}

Alternative point(double e, double l) {
  Alternative a;
  a.energyPj = e, a.latencyCycles = l;
  return a;
}

} // namespace

TEST(Objectives, FrontByHand) {
  // (5,1) fastest; (3,3) beats (4,3) on energy at equal latency, and its
  // duplicate is one point; (1,9) cheapest; (2,10) is dominated by (1,9).
  std::vector<Alternative> all = {point(4, 3), point(5, 1), point(3, 3), point(2, 10), point(3, 3), point(1, 9)};
  std::vector<Alternative> front = energyLatencyFront(all);
  ASSERT_EQ(front.size(), 3u);
  EXPECT_EQ(front[0].energyPj, 5);
  EXPECT_EQ(front[0].latencyCycles, 1);
  EXPECT_EQ(front[1].energyPj, 3);
  EXPECT_EQ(front[1].latencyCycles, 3);
  EXPECT_EQ(front[2].energyPj, 1);
  EXPECT_EQ(front[2].latencyCycles, 9);
}

TEST(Objectives, ConstraintsPickTheBestThatMeetsThem) {
  // At batch 16 the MLP's cheapest schedule is not its fastest (at 64 it is:
  // the front is one point).
  StdlibModel m = loadStdlib("mlp", "eyeriss_multinode", 16);
  SolverOptions o;
  o.keepAlternatives = true;
  SolveFailure failure;
  auto all = makeSolver("kapla")->solve(m.model, fresh(), o, failure);
  ASSERT_TRUE(all) << failure;
  ASSERT_EQ(all->stats.objectivesSolved.size(), 3u);
  EXPECT_EQ(all->stats.alternativesEvaluated, static_cast<int64_t>(all->alternatives.size()));
  // The front: every alternative is dominated by or equal to a point of it,
  // no point dominates another, by latency ascending.
  std::vector<Alternative> front = energyLatencyFront(all->alternatives);
  ASSERT_GE(front.size(), 2u);   // the MLP trades energy for latency
  for (size_t i = 1; i < front.size(); ++i) {
    EXPECT_LT(front[i - 1].latencyCycles, front[i].latencyCycles);
    EXPECT_GT(front[i - 1].energyPj, front[i].energyPj);
  }
  for (const Alternative &a : all->alternatives)
    EXPECT_TRUE(std::any_of(front.begin(), front.end(), [&](const Alternative &f) {
      return f.energyPj <= a.energyPj && f.latencyCycles <= a.latencyCycles;
    }));
  // The unconstrained schedule is the energy solve's: the cheapest point.
  EXPECT_EQ(all->result.energyPj, front.back().energyPj);

  // A bound between the fastest and the cheapest point: the cheapest
  // alternative within it (the same solves run, so the same alternatives).
  const double bound = (front.front().latencyCycles + front.back().latencyCycles) / 2;
  double expected = std::numeric_limits<double>::infinity();
  for (const Alternative &a : all->alternatives)
    if (a.latencyCycles <= bound)
      expected = std::min(expected, a.energyPj);
  SolverOptions c;
  c.maxLatencyCycles = bound;
  auto met = makeSolver("kapla")->solve(m.model, fresh(), c, failure);
  ASSERT_TRUE(met) << failure;
  EXPECT_EQ(met->stats.status, SolveStatus::Complete);
  EXPECT_TRUE(met->result.valid && met->result.complete);
  EXPECT_LE(met->result.latencyCycles, bound);
  EXPECT_EQ(met->result.energyPj, expected);

  // A bound nothing meets: the closest, reported as unmet.
  c.maxLatencyCycles = front.front().latencyCycles / 2;
  auto unmet = makeSolver("kapla")->solve(m.model, fresh(), c, failure);
  ASSERT_TRUE(unmet);
  EXPECT_EQ(unmet->stats.status, SolveStatus::Unmet);
  EXPECT_EQ(unmet->result.latencyCycles, front.front().latencyCycles);
  EXPECT_EQ(unmet->result.energyPj, front.front().energyPj);   // ties at that latency: the cheapest
}

TEST(Objectives, NoPipeliningSolvesLayerByLayer) {
  StdlibModel m = loadStdlib("alexnet", "eyeriss_multinode", 64);
  SolverOptions o;
  SolveFailure failure;
  auto piped = makeSolver("kapla")->solve(m.model, fresh(), o, failure);
  o.pipelining = false;
  auto alone = makeSolver("kapla")->solve(m.model, fresh(), o, failure);
  ASSERT_TRUE(piped && alone) << failure;
  EXPECT_FALSE(piped->schedule.segments.empty());   // the hardware allows segments and they pay off
  EXPECT_TRUE(alone->schedule.segments.empty());
  for (const SegmentResult &s : alone->result.segments)
    EXPECT_EQ(s.layers.size(), 1u);
  EXPECT_EQ(alone->stats.interLayer.chains, 0);
  // Layer by layer is the inter-layer step's starting point, which it never makes worse.
  EXPECT_LE(piped->result.energyPj, alone->result.energyPj);
}

// ---- temporal segments: the analysis' cost, batch chunks (docs/directives.md §9)

TEST(InterLayer, TemporalCostIsTheAnalysis) {
  // The solver's exact cost of a temporal segment is the analysis' own: for
  // every temporal segment of up to 8 layers, with the layers the solver runs
  // it with (as solved alone, or re-solved for batch chunks or a reserve), the
  // energy temporalCost returns is what analyzeSchedule charges those layers
  // in the layer-wise schedule with that one segment. (It used to re-implement
  // the forwarding: min(producer writes, consumer reads) words saved and the
  // NoC hops kept, which on eyeriss_multinode missed every forwarded word's
  // DRAM hops.)
  for (const char *net : {"mlp", "alexnet"}) {
    StdlibModel m = loadStdlib(net, "eyeriss_multinode", 64);
    Solution base = layerwise(m.model);
    ASSERT_TRUE(base.result.valid && base.result.complete) << net;
    InterLayerSolver inter(m.model, base.schedule, base.result, InterLayerOptions{});
    const int n = static_cast<int>(base.result.layers.size());
    int costed = 0, chunked = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n && j - i < 8; ++j) {
        InterLayerStats stats;
        std::optional<double> cost = inter.temporalCost(i, j, stats);
        if (!cost)
          continue;
        Schedule s = base.schedule;
        inter.useReserved(s, i, j);
        Segment seg;
        for (int l = i; l <= j; ++l)
          seg.layers.push_back(l);
        s.segments = {seg};
        ScheduleResult r = analyzeSchedule(m.model, s);
        ASSERT_TRUE(r.valid && r.complete) << net << " segment " << i << ".." << j;
        double e = 0;
        for (int l = i; l <= j; ++l)
          e += r.layers[static_cast<size_t>(l)].energyPj;
        EXPECT_NEAR(*cost, e, 1e-9 * e) << net << " segment " << i << ".." << j;
        ++costed;
        for (const SegmentResult &sr : r.segments)
          chunked += sr.layers.size() > 1 && sr.chunks > 1;
      }
    EXPECT_GT(costed, 0) << net;
    if (std::string(net) == "alexnet") {
      EXPECT_GT(chunked, 0);   // batch chunks were among them
    }
  }
}

TEST(InterLayer, SegmentPricingIsTheAnalysis) {
  // What the solver scores a temporal segment's layer by (pricedOnChip with
  // segmentPricing) is what the analysis charges it in that segment: for
  // every segment of 2..4 layers among MobileNet-v2's first 12 on tpu_v1
  // (1x1 expands, depthwise convs, a residual add), each layer with its
  // layer-wise schedule, priced alone, equals its energy and cycles in the
  // layer-wise schedule with that one segment at the whole batch.
  StdlibModel m = loadStdlib("mobilenet_v2", "tpu_v1", 1);
  Solution base = layerwise(m.model);
  ASSERT_TRUE(base.result.valid && base.result.complete);
  InterLayerSolver inter(m.model, base.schedule, base.result, InterLayerOptions{});
  const Network &net = m.model.networks.front();
  const Hardware &hw = m.model.hardware.front();
  int priced = 0, outputs = 0;
  for (int i = 0; i < 12; ++i)
    for (int j = i + 1; j < 12 && j - i < 4; ++j) {
      Schedule s = base.schedule;
      Segment seg;
      for (int l = i; l <= j; ++l)
        seg.layers.push_back(l);
      s.segments = {seg};
      ScheduleResult r = analyzeSchedule(m.model, s);
      if (!r.valid || !r.complete)
        continue;   // the intermediates do not fit beside these tiles (E0819)
      for (int l = i; l <= j; ++l) {
        const OnChipPricing p = inter.segmentPricing(i, j, l);
        outputs += p.output;
        const LayerResult alone = base.result.layers[static_cast<size_t>(l)];
        const LayerResult mine = pricedOnChip(net, l, hw, alone, p);
        const LayerResult &theirs = r.layers[static_cast<size_t>(l)];
        EXPECT_NEAR(mine.energyPj, theirs.energyPj, 1e-9 * theirs.energyPj) << i << ".." << j << " layer " << l;
        EXPECT_NEAR(mine.latencyCycles, theirs.latencyCycles, 1e-9 * theirs.latencyCycles) << i << ".." << j;
        ++priced;
      }
    }
  EXPECT_GT(priced, 20);
  EXPECT_GT(outputs, 10);
}

TEST(InterLayer, SegmentPricedLayersCostLessInTheSegment) {
  // MobileNet-v2's first six layers on tpu_v1 as one temporal segment at
  // batch 1. Alone, DRAM binds block_1_expand (its input and output cross
  // it), so a plan on 1,536 of the 65,536 PEs is as fast as any; in the
  // segment those words stay on chip, compute binds, and the chip's idle
  // power makes the narrow plan the expensive one. Solved as the segment
  // prices it, the segment must cost less than with the layers' own
  // schedules (before the pricing the solver kept those: 8.6 -> 9.4 mJ on
  // the whole network).
  StdlibModel m = loadStdlib("mobilenet_v2", "tpu_v1", 1);
  Solution base = layerwise(m.model);
  ASSERT_TRUE(base.result.valid && base.result.complete);
  InterLayerSolver inter(m.model, base.schedule, base.result, InterLayerOptions{});
  InterLayerStats stats;
  std::vector<LayerScheduleModel> replaced;
  bool reserved = false;
  const int64_t batch = m.model.networks.front().batch;
  std::optional<double> own = inter.temporalVariant(0, 5, batch, {}, replaced, reserved, stats, false);
  std::optional<double> priced = inter.temporalVariant(0, 5, batch, {}, replaced, reserved, stats, true);
  ASSERT_TRUE(own && priced);
  EXPECT_LT(*priced, 0.9 * *own) << *priced << " vs " << *own;
  EXPECT_FALSE(replaced.empty());
}

TEST(InterLayer, SplitCostIsTheAnalysis) {
  // The same for segments split into instances: the energy instancesCost
  // returns is what analyzeSchedule charges the layers it runs them with,
  // split as it says. VGG-16 at batch 1: its first stages' intermediates
  // (224 x 224 x 64 words) do not fit the chip whole, so splits are priced.
  StdlibModel m = loadStdlib("vgg16", "eyeriss_multinode", 1);
  Solution base = layerwise(m.model);
  ASSERT_TRUE(base.result.valid && base.result.complete);
  InterLayerSolver inter(m.model, base.schedule, base.result, InterLayerOptions{});
  int costed = 0;
  for (int i = 0; i < 7; ++i)
    for (int j = i + 1; j < 7 && j - i < 3; ++j) {
      InterLayerStats stats;
      InstanceSplit split;
      std::string why;
      std::optional<double> cost = inter.instancesCost(i, j, split, why, stats);
      if (!cost)
        continue;
      EXPECT_TRUE(why.empty());
      Schedule s = base.schedule;
      Segment seg;
      for (int l = i; l <= j; ++l)
        seg.layers.push_back(l);
      inter.useSplit(s, seg, i, j);
      EXPECT_EQ(seg.splitDim, split.dim);
      EXPECT_EQ(seg.instances, split.instances);
      s.segments = {seg};
      ScheduleResult r = analyzeSchedule(m.model, s);
      ASSERT_TRUE(r.valid && r.complete) << "segment " << i << ".." << j;
      double e = 0;
      for (int l = i; l <= j; ++l)
        e += r.layers[static_cast<size_t>(l)].energyPj;
      EXPECT_NEAR(*cost, e, 1e-9 * e) << "segment " << i << ".." << j;
      ++costed;
    }
  EXPECT_GT(costed, 0);
}

TEST(InterLayer, TemporalSegmentInBatchChunks) {
  // c1's whole output, 4 samples x 8 x 4 x 4 = 512 words = 1 KiB, fills the
  // two 512 B node buffers by itself: as one temporal segment over the whole
  // batch nothing else would fit (E0819). In batch chunks of one sample it
  // keeps 128 words = 256 B of it, so the segment exists only in chunks.
  const char *text = R"(network two {
  batch N = 4;
  input x [C=2, X=4, Y=4];
  c1 = conv(x, K=8, R=1);
  c2 = conv(c1, K=4, R=1);
}
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 2 x 2; access_energy = 1 pJ; transfer = multicast; }
  level GBUF { capacity = 512 B; array = 1 x 2; access_energy = 10 pJ; bandwidth = 16 B/cycle; transfer = multicast; }
  level DRAM { access_energy = 500 pJ; bandwidth = 16 B/cycle; }
  pipeline { temporal = true; spatial = false; }
}
)";
  auto c = compile(text);
  ASSERT_EQ(c.diagnostics(), "");
  Solution alone = layerwise(c.model);
  Solution s = solveWith(c.model, SolverOptions{});
  ASSERT_TRUE(s.result.valid && s.result.complete);
  ASSERT_EQ(s.schedule.segments.size(), 1u);
  EXPECT_EQ(s.schedule.segments[0].layers, (std::vector<int>{0, 1}));
  // The segment runs in 4 chunks of one sample (of the batch tiles 1, 8 and
  // the batch, 1 is the one below the batch that divides it), and the forwarded tensor
  // touches DRAM on neither side: c1 writes none of its 512 outputs, c2 reads
  // none of its inputs.
  const SegmentResult *seg = nullptr;
  for (const SegmentResult &sr : s.result.segments)
    if (sr.layers.size() == 2)
      seg = &sr;
  ASSERT_NE(seg, nullptr);
  EXPECT_EQ(seg->chunks, 4);
  const size_t dram = c.model.hardware[0].levels.size() - 1;
  EXPECT_EQ(s.result.layers[0].levels[dram].accesses.writes[static_cast<size_t>(TensorRole::Ofm)], 0);
  EXPECT_EQ(s.result.layers[1].levels[dram].accesses.reads[static_cast<size_t>(TensorRole::Ifm)], 0);
  EXPECT_LT(s.result.energyPj, alone.result.energyPj);
  ScheduleResult again = analyzeSchedule(c.model, s.schedule);
  ASSERT_TRUE(again.valid && again.complete);
  EXPECT_EQ(again.energyPj, s.result.energyPj);
}

// The order the segment costs are taken in on threads (Parallel.h): from
// `parts` equal stretches in turn. 10 items in 4 parts: stretches of
// ceil(10/4) = 3, {0,1,2} {3,4,5} {6,7,8} {9}, their first items, then their
// second, then their third.
TEST(Parallel, SpreadOrderTakesTheStretchesInTurn) {
  EXPECT_EQ(spreadOrder(10, 4), (std::vector<size_t>{0, 3, 6, 9, 1, 4, 7, 2, 5, 8}));
  EXPECT_EQ(spreadOrder(5, 1), (std::vector<size_t>{0, 1, 2, 3, 4}));   // one part: the list's order
  EXPECT_EQ(spreadOrder(3, 8), (std::vector<size_t>{0, 1, 2}));         // more parts than items
  EXPECT_TRUE(spreadOrder(0, 4).empty());
}

// A priced solve (a temporal segment's layer, OnChipPricing) prices the
// unpriced analyses an earlier solve of the same shape kept beside its memo
// entries instead of analysing those plans again (docs/solver.md, "Speed"):
// it must be the priced solve that analyses every plan itself — the same
// directives, energy, latency and counts.
TEST(AnalysisMemo, PricedFromKeptUnpricedAnalysesIsThePricedSolve) {
  StdlibModel m = loadStdlib("resnet20", "eyeriss_multinode", 64);
  const Network &net = m.model.networks[0];
  const Hardware &hw = m.model.hardware[0];
  const int64_t nodeBytes = hw.levels[hw.levels.size() - 2].capacityBytes.value_or(0);
  ASSERT_GT(nodeBytes, 0);
  // conv1's consumer and its own consumer: an ifm read on chip, an output
  // kept there; alone and with 15/16 of the node buffer reserved (accept() then
  // reads the node level's bytes).
  for (auto [x, reserve] : {std::pair{1, int64_t{0}}, {2, int64_t{0}}, {1, nodeBytes * 15 / 16}, {2, nodeBytes * 15 / 16}}) {
    IntraLayerOptions o;
    o.keepUnpriced = true;
    o.onChip.reads[static_cast<size_t>(TensorRole::Ifm)] = 1;
    o.onChip.output = x == 1;
    o.reservedTopBytes = reserve;
    SolveFailure why;
    intra::AnalysisMemo alone;   // the priced solve by itself
    o.analyses = &alone;
    IntraLayerStats analysed;
    auto priced = solveLayer(net, x, hw, nullptr, o, analysed, why);
    ASSERT_TRUE(priced) << why;
    intra::AnalysisMemo shared;   // after the unpriced solve of the same layer
    o.analyses = &shared;
    IntraLayerOptions unpriced = o;
    unpriced.onChip = {};
    IntraLayerStats first, second;
    ASSERT_TRUE(solveLayer(net, x, hw, nullptr, unpriced, first, why)) << why;
    auto again = solveLayer(net, x, hw, nullptr, o, second, why);
    ASSERT_TRUE(again) << why;
    EXPECT_EQ(analysed.repriced, 0);
    EXPECT_GT(second.repriced, 0) << "no plan of the unpriced solve met again";
    EXPECT_EQ(printLayerBlock(net, hw, again->schedule, 0), printLayerBlock(net, hw, priced->schedule, 0));
    EXPECT_EQ(again->result.energyPj, priced->result.energyPj);
    EXPECT_EQ(again->result.latencyCycles, priced->result.latencyCycles);
    EXPECT_EQ(second.candidates, analysed.candidates);
    EXPECT_EQ(second.rejected, analysed.rejected);
    // Each field the summary reads, priced from the record as from the whole
    // result (the node level's bytes too, which only a reserve that the
    // descent's own estimate misses would test above).
    std::vector<Issue> issues;
    const LayerResult whole = analyzeLayer(net, x, hw, &priced->schedule, issues);
    const size_t top = hw.levels.size() - 2;
    const LayerResult a = pricedOnChip(net, x, hw, whole, o.onChip);
    const LayerResult b = pricedOnChip(net, x, hw, intra::UnpricedResult(whole, issues.empty(), top).result(top), o.onChip);
    EXPECT_EQ(a.energyPj, b.energyPj);
    EXPECT_EQ(a.latencyCycles, b.latencyCycles);
    EXPECT_EQ(a.complete, b.complete);
    ASSERT_EQ(a.levels.size(), b.levels.size());
    for (size_t lv = 0; lv < a.levels.size(); ++lv) {
      EXPECT_EQ(a.levels[lv].accesses.reads, b.levels[lv].accesses.reads) << lv;
      EXPECT_EQ(a.levels[lv].accesses.writes, b.levels[lv].accesses.writes) << lv;
    }
    EXPECT_EQ(a.levels[top].bufferBytes, b.levels[top].bufferBytes);
    EXPECT_GT(a.levels[top].bufferBytes[static_cast<size_t>(TensorRole::Ifm)], 0);
    EXPECT_EQ(a.levels[top].units, b.levels[top].units);
  }
}

// The memo shared by a network's solves (docs/solver.md, "the analyses are
// kept"): past its bound a new key gets no entry (the solve then keeps its
// own), while the keys it holds are still found, their entries unchanged.
TEST(AnalysisMemo, PastItsBoundNewKeysGetNoEntryAndKeptOnesAreFound) {
  using Found = intra::AnalysisMemo::Found;
  intra::AnalysisMemo memo(2);
  auto [a, foundA] = memo.entry("plan a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(foundA, Found::New);
  EXPECT_EQ(memo.entry("plan a").second, Found::Busy);   // made, not yet filled
  a->analysed.score.value = 7;
  intra::AnalysisMemo::filled(*a);
  auto [b, foundB] = memo.entry("plan b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(foundB, Found::New);
  EXPECT_NE(a, b);
  auto [c, foundC] = memo.entry("plan c");   // a third key: the bound of 2 is reached
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(foundC, Found::New);
  auto [again, foundAgain] = memo.entry("plan a");
  EXPECT_EQ(again, a);
  EXPECT_EQ(foundAgain, Found::Ready);
  EXPECT_EQ(again->analysed.score.value, 7);
  intra::AnalysisMemo unbounded;   // 0: no bound; grows past its first table of 1024 slots
  for (int i = 0; i < 3000; ++i)
    ASSERT_NE(unbounded.entry("plan " + std::to_string(i)).first, nullptr);
  EXPECT_EQ(unbounded.entry("plan 1234").second, Found::Busy);
}
