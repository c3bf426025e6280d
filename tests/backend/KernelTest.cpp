// The simulator against its two referees: every layer's output equals the
// independent reference's (backend/Reference.h) bit for bit, and every count
// the analysis claims exact (LayerResult::exactCounts, docs/directives.md §4) equals
// the one the kernel counts while it runs the schedule. Schedules: written
// here by hand (counts derived in the comments), the solvers', the random
// solver's; and kernels broken on purpose, which must be caught.
#include "backend/KernelRun.h"
#include "backend/Reference.h"
#include "backend/Simulator.h"
#include "model/ScheduleWriter.h"
#include "scheduler/analysis/Analysis.h"
#include "scheduler/kapla/Solver.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace dfl::sim {
namespace {

/// The kernel's count of one role at one level.
const CountCheck *countOf(const LayerSim &s, int level, TensorRole r, const std::string &kind) {
  for (const CountCheck &c : s.counts)
    if (c.level == level && c.role == r && c.kind == kind)
      return &c;
  return nullptr;
}

/// The kernels' innermost units in their clipped code alone or with their
/// unclipped copy (KernelOptions::unclippedSteps: infinity gives every
/// kernel none, 0 both, or the copy alone where every step runs
/// unclipped), so that the tests below hold for both.
SimOptions withUnclipped(bool unclipped) {
  SimOptions o;
  o.unclippedSteps = unclipped ? 0 : std::numeric_limits<double>::infinity();
  return o;
}

/// Simulates the one schedule of `text` (network, hardware, schedule).
SimResult simulateText(const std::string &text, KernelFault fault = KernelFault::None, bool unclipped = false) {
  test::Compiled comp = test::compile(text);
  EXPECT_EQ(comp.diagnostics(), "");
  if (comp.model.schedules.empty())
    return {};
  SimOptions o = withUnclipped(unclipped);
  o.fault = fault;
  return simulate(comp.model, comp.model.schedules[0], o);
}

/// Every layer simulated: outputs equal, counts equal where claimed exact.
void expectSound(const SimResult &r, const std::string &what) {
  for (const LayerSim &l : r.layers) {
    SCOPED_TRACE(what + ", layer " + l.layer);
    EXPECT_EQ(l.skipped, "");
    EXPECT_TRUE(l.outputEqual) << "first difference at " << l.mismatchAt << ": kernel " << l.got << ", reference "
                               << l.want;
    for (const CountCheck &c : l.counts) {
      if (l.exactClaimed) {
        EXPECT_TRUE(c.equal) << c.kind << " of " << roleName(c.role) << " at level " << c.level << ": kernel "
                             << c.counted << ", analysis " << c.analysed;
      }
    }
    EXPECT_EQ(l.macs, l.analysedMacs);
  }
}

/// The one layer of `r`, sound, its counts claimed exact, with `macs` MACs;
/// null if `r` has not one layer.
const LayerSim *oneExactLayer(const SimResult &r, const std::string &what, int64_t macs) {
  EXPECT_EQ(r.layers.size(), 1u);
  if (r.layers.size() != 1)
    return nullptr;
  expectSound(r, what);
  EXPECT_TRUE(r.layers[0].exactClaimed);
  EXPECT_EQ(r.layers[0].macs, macs);
  return &r.layers[0];
}

using test::kTwoLevel;

// 1-D conv: C=2, 8 inputs, K=2, R=3 -> Xo=6: 72 MACs. The schedule of
// tests/unit/AnalysisTest.cpp, Conv1dTwoLevels.
const char *const kConv1d = R"(
network net { input x [C=2, X=8, Y=1]; l = conv(x, K=2, R=3, S=1); }
schedule for net on hw {
  layer l {
    REGF {
      tensor ifm [C=1, Xi=3]; tensor wgt [K=1, C=1, R=3]; tensor ofm [K=1, Xo=1];
      stack K += 1 repl 2; stack Xo += 1, Xi += 1 repl 2;
      update Xo += 2, Xi += 2; update C += 1;
    }
  }
}
)";

TEST(KernelTest, Conv1dTwoLevels) {
  SimResult r = simulateText(std::string(kConv1d) + kTwoLevel);
  ASSERT_EQ(r.layers.size(), 1u);
  expectSound(r, "conv1d");
  const LayerSim &l = r.layers[0];
  EXPECT_TRUE(l.exactClaimed);
  EXPECT_TRUE(l.countsEqual);
  // By hand: per channel the pair of PEs fetches Xi 0..3 (4 words), then only
  // the new Xi 3..5 and 5..7 (3 + 3) as it slides: 10; x C2 = 20 DRAM reads.
  ASSERT_TRUE(countOf(l, 1, TensorRole::Ifm, "reads"));
  EXPECT_EQ(countOf(l, 1, TensorRole::Ifm, "reads")->counted, 20);
  // Weights: 2 loads (update C) of 3 words per PE, 4 PEs: 24 REGF writes.
  EXPECT_EQ(countOf(l, 0, TensorRole::Wgt, "writes")->counted, 24);
  EXPECT_EQ(l.macs, 72);
}

TEST(KernelTest, IdenticalLayersShareOneKernel) {
  // a and b: the same conv of x (kConv1d's layer l) under the same
  // directives, c the same shape with another weight window: a and b
  // generate the same IR but for their tensors' names, so b runs a's
  // function (compiled once: compileMs 0) and its IR file is a's under its
  // own name; c compiles its own. The results whatever the compile threads.
  const std::string directives = R"( {
    REGF {
      tensor ifm [C=1, Xi=3]; tensor wgt [K=1, C=1, R=3]; tensor ofm [K=1, Xo=1];
      stack K += 1 repl 2; stack Xo += 1, Xi += 1 repl 2;
      update Xo += 2, Xi += 2; update C += 1;
    }
  }
)";
  const std::string text = R"(
network net { input x [C=2, X=8, Y=1]; a = conv(x, K=2, R=3, S=1); b = conv(x, K=2, R=3, S=1);
              c = conv(x, K=2, R=1, S=1); }
schedule for net on hw {
  layer a)" + directives + "  layer b" + directives + R"(  layer c {
    REGF {
      tensor ifm [C=1, Xi=1]; tensor wgt [K=1, C=1, R=1]; tensor ofm [K=1, Xo=1];
      stack K += 1 repl 2; stack Xo += 1, Xi += 1 repl 2;
      update Xo += 2, Xi += 2; update C += 1;
    }
  }
}
)" + kTwoLevel;
  test::Compiled comp = test::compile(text);
  ASSERT_EQ(comp.diagnostics(), "");
  std::vector<SimResult> runs;
  for (int threads : {0, 1, 2}) {
    SimOptions o;
    o.compileThreads = threads;
    runs.push_back(simulate(comp.model, comp.model.schedules[0], o));
    const SimResult &r = runs.back();
    ASSERT_EQ(r.layers.size(), 3u);
    expectSound(r, "threads " + std::to_string(threads));
    const LayerSim &a = r.layers[0], &b = r.layers[1], &c = r.layers[2];
    EXPECT_GT(a.compileMs, 0);
    EXPECT_EQ(b.compileMs, 0);
    EXPECT_GT(c.compileMs, 0);
    ASSERT_EQ(a.ir.size(), 1u);
    ASSERT_EQ(b.ir.size(), 1u);
    ASSERT_EQ(c.ir.size(), 1u);
    const std::string header = "; ModuleID = 'b'\nsource_filename = \"b\"\n";
    ASSERT_EQ(a.ir[0].rfind("; ModuleID = 'a'\nsource_filename = \"a\"\n", 0), 0u);
    EXPECT_EQ(b.ir[0], header + a.ir[0].substr(header.size()));
    EXPECT_NE(c.ir[0].substr(header.size()), a.ir[0].substr(header.size()));
  }
  // Refused at a's arrays while b's and c's kernels may still be queued: the
  // cache drops them (compiled or not) without running them.
  for (int threads : {0, 2}) {
    SimOptions o;
    o.compileThreads = threads;
    o.memoryLimitBytes = 500;   // the run's tensors fit (92 words: 368 B), a's kernel's arrays not
    try {
      simulate(comp.model, comp.model.schedules[0], o);
      ADD_FAILURE() << "no LimitError";
    } catch (const LimitError &e) {
      EXPECT_EQ(e.what, "its kernel's arrays");
      EXPECT_EQ(e.layer, 0);
    }
  }
  for (size_t i = 1; i < runs.size(); ++i)
    for (size_t l = 0; l < 3; ++l) {
      const LayerSim &x = runs[0].layers[l], &y = runs[i].layers[l];
      EXPECT_EQ(x.ir, y.ir);
      EXPECT_EQ(x.macs, y.macs);
      ASSERT_EQ(x.counts.size(), y.counts.size());
      for (size_t k = 0; k < x.counts.size(); ++k)
        EXPECT_EQ(x.counts[k].counted, y.counts[k].counted);
    }
}

TEST(KernelTest, BrokenKernelsAreCaught) {
  // One fill dropped: the PEs compute on stale inputs and count fewer writes.
  SimResult dropped = simulateText(std::string(kConv1d) + kTwoLevel, KernelFault::DropInnerFill);
  ASSERT_EQ(dropped.layers.size(), 1u);
  EXPECT_FALSE(dropped.layers[0].outputEqual);
  EXPECT_FALSE(dropped.layers[0].countsEqual);
  EXPECT_FALSE(dropped.ok());
  // The outermost loop one trip short: the last channel is never added.
  SimResult shortLoop = simulateText(std::string(kConv1d) + kTwoLevel, KernelFault::OuterLoopShort);
  ASSERT_EQ(shortLoop.layers.size(), 1u);
  EXPECT_FALSE(shortLoop.layers[0].outputEqual);
  EXPECT_GE(shortLoop.layers[0].mismatchAt, 0);
  EXPECT_FALSE(shortLoop.ok());
}

// A small multi-node template: 4 x 4 PEs (multicast, systolic), 2 x 2 nodes
// (multicast, reduction), DRAM.
const char *const kNodes = R"(
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; transfer = multicast, systolic; }
  level GBUF { capacity = 4 KiB; array = 2 x 2; access_energy = 10 pJ; transfer = multicast, reduction; }
  level DRAM { access_energy = 100 pJ; }
  noc { hop_energy = 1 pJ; }
}
)";

// Every layer kind the forward language has, with fused activations; gelu,
// silu, sigmoid, softmax (per group of channels, along Y) and layernorm as layers.
const char *const kLayers = R"(
network net {
  batch N = 2;
  input x [C=3, X=9, Y=9];
  input y [C=4, X=5, Y=5];
  c0 = conv(x, K=5, R=3, stride=2, pad=1);
  c1 = gelu(c0);
  p1 = maxpool(c1, R=2, stride=2, ceil=true);
  d1 = dwconv(c1, R=3, pad=1, dilation=1);
  a1 = avgpool(d1, R=2, stride=2);
  h1 = hardswish(a1);
  s1 = add(c1, d1);
  r1 = relu(s1);
  m1 = mul(r1, c1);
  k1 = concat(m1, y);
  c2 = conv(k1, K=6, R=3, pad=2, dilation=2);
  f1 = fc(h1, K=7);
  s2 = softmax(c2, groups=2);
  x2 = softmax(c2, axis=Y);
  l2 = layernorm(f1);
  u2 = silu(f1);
  g2 = sigmoid(f1);   // f1 read by l2 and u2 too: a sigmoid layer
}
)";

/// The solver's schedule of `text` (layer by layer or with segments).
Solution solved(const test::Compiled &comp, const std::string &solver, bool pipelining) {
  Schedule given;
  given.network = 0, given.hardware = 0;
  SolveFailure failure;
  SolverOptions o;
  o.pipelining = pipelining;
  auto sol = makeSolver(solver)->solve(comp.model, given, o, failure);
  EXPECT_TRUE(sol) << failure;
  return sol ? *sol : Solution{};
}

/// The kernel's count (0 where neither the kernel nor the analysis has one).
double counted(const LayerSim &s, int level, TensorRole r, const std::string &kind) {
  const CountCheck *c = countOf(s, level, r, kind);
  return c ? c->counted : 0;
}

TEST(KernelTest, SegmentKeepsItsTensorOnChip) {
  // Two 1-D convs (X=8 -> a: Xo=6 -> b: Xo=4), each on one PE with its
  // window sliding by 1, in one temporal segment: a's output stays on chip.
  const std::string text = std::string(test::kTwoConvs) + R"(schedule for n on h {
  SEGMENT
  layer a { REGF { tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1]; update Xo += 1, Xi += 1; } }
  layer b { REGF { tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1]; update Xo += 1, Xi += 1; } }
})";
  auto run = [&](const std::string &segment) {
    std::string t = text;
    t.replace(t.find("SEGMENT"), 7, segment);
    return simulateText(t);
  };
  const int dram = 1;
  for (bool together : {false, true}) {
    SCOPED_TRACE(together ? "segment a, b" : "layer by layer");
    SimResult r = run(together ? "segment a, b;" : "");
    ASSERT_EQ(r.layers.size(), 2u);
    expectSound(r, "segment");
    const LayerSim &a = r.layers[0], &b = r.layers[1];
    EXPECT_TRUE(a.exactClaimed && b.exactClaimed);
    // a: x read once (3 + 5 * 1 words), 3 weights, one ofm word per step.
    EXPECT_EQ(counted(a, dram, TensorRole::Ifm, "reads"), 8);
    EXPECT_EQ(counted(a, dram, TensorRole::Wgt, "reads"), 3);
    EXPECT_EQ(counted(a, dram, TensorRole::Ofm, "writes"), together ? 0 : 6);
    // b reads a (3 + 3 * 1 words) from DRAM unless the segment forwards it.
    EXPECT_EQ(counted(b, dram, TensorRole::Ifm, "reads"), together ? 0 : 6);
    EXPECT_EQ(counted(b, dram, TensorRole::Ofm, "writes"), 4);
  }
}

TEST(KernelTest, SolverSchedulesRunEveryLayerKind) {
  test::Compiled comp = test::compile(std::string(kLayers) + kNodes);
  ASSERT_EQ(comp.diagnostics(), "");
  for (const char *solver : {"kapla", "random"})
    for (bool pipelining : {false, true})
      for (bool unclipped : {false, true}) {
        Solution sol = solved(comp, solver, pipelining);
        SimResult r = simulate(comp.model, sol.schedule, withUnclipped(unclipped));
        EXPECT_EQ(r.layers.size(), comp.model.networks[0].layers.size());
        expectSound(r, std::string(solver) + (pipelining ? ", segments" : ", layer by layer") +
                           (unclipped ? ", unclipped copies" : ""));
      }
}

TEST(KernelTest, TrainingSchedulesRunTheBackwardLayers) {
  // Every backward layer kind a simulated network has: conv, dwconv and fc
  // data and weight gradients, pooling data gradients (a ceil-mode max pool's
  // reaches into padding, whose words are dropped).
  const char *net = R"(
network net {
  batch N = 2;
  input x [C=3, X=9, Y=9];
  c0 = conv(x, K=5, R=3, stride=2, pad=1);
  c1 = gelu(c0);
  p1 = maxpool(c1, R=2, stride=2, ceil=true);
  d1 = dwconv(p1, R=3, pad=1);
  a1 = avgpool(d1, R=3);
  f1 = fc(a1, K=7);
  u1 = silu(f1);
}
)";
  AnalyzeOptions train;
  train.train = true;
  test::Compiled comp = test::compile(std::string(net) + kNodes, train);
  ASSERT_EQ(comp.diagnostics(), "");
  Solution sol = solved(comp, "kapla", false);
  SimResult r = simulate(comp.model, sol.schedule, SimOptions{});
  EXPECT_EQ(r.layers.size(), comp.model.networks[0].layers.size());
  size_t backward = 0;
  for (const LayerSim &l : r.layers)
    backward += l.layer.find("__") != std::string::npos ? 1 : 0;
  // c0: wgrad only (x is an input); d1, f1: dgrad and wgrad; p1, a1 and the
  // unary layers c1 and u1: dgrad: 1 + 4 + 4.
  EXPECT_EQ(backward, 9u);
  expectSound(r, "training");
}

// Layer c0 of kLayers alone, under the schedule the solver gave it: partial
// tiles along Xo and Yo (Xo = Yo = (9 + 2 - 3)/2 + 1 = 5 in node tiles of 4),
// where the analysis once read fewer input words from DRAM than the input
// has (216 of 486) and now counts what the kernel counts (issue 12).
const char *const kPartialConv = R"(
network net { batch N = 2; input x [C=3, X=9, Y=9]; c0 = conv(x, K=5, R=3, stride=2, pad=1); }
schedule for net on hw {
  layer c0 {
    REGF {
      tensor ifm [N=2, C=1, Xi=3, Yi=1]; tensor wgt [K=5, C=1, R=1, S=1]; tensor ofm [N=2, K=5, Xo=2, Yo=1];
      stack Xo += 2, Xi += 4 repl 2; stack Yo += 1, Yi += 2 repl 4;
      update R += 1, Xi += 1; update S += 1, Yi += 1; update C += 1;
    }
    GBUF {
      tensor ifm [N=2, C=3, Xi=9, Yi=9]; tensor wgt [K=5, C=3, R=3, S=3]; tensor ofm [N=2, K=5, Xo=4, Yo=4];
      stack Xo += 4, Xi += 8 repl 2;
      update Yo += 4, Yi += 8;
    }
  }
}
)";

/// The kernel's count of one role at one level and the analysis' are both `words`.
void expectBoth(const LayerSim &l, int level, TensorRole r, const std::string &kind, double words) {
  const CountCheck *c = countOf(l, level, r, kind);
  ASSERT_TRUE(c) << kind << " of " << roleName(r) << " at level " << level;
  EXPECT_EQ(c->counted, words) << kind << " of " << roleName(r) << " at level " << level;
  EXPECT_EQ(c->analysed, words) << kind << " of " << roleName(r) << " at level " << level;
}

TEST(KernelTest, PartialWindowsCountedExactly) {
  for (bool unclipped : {false, true}) {
    SCOPED_TRACE(unclipped ? "unclipped copies" : "clipped only");
    SimResult r = simulateText(std::string(kPartialConv) + kNodes, KernelFault::None, unclipped);
    ASSERT_EQ(r.layers.size(), 1u);
    expectSound(r, "c0");
    EXPECT_TRUE(r.layers[0].exactClaimed);
    EXPECT_TRUE(r.layers[0].countsEqual);
    // By hand, DRAM: node 0's window is padded Xi 0..8, node 1's (its one real
    // output Xo 4) 8..10; the multicast reads their union 0..10, data 1..9: 9
    // columns. Rows: 0..8 (data 1..8), then the slide's new rows 9..10 (data
    // 9): 9. N2 x C3 x 9 x 9 = 486, every input word once.
    expectBoth(r.layers[0], 2, TensorRole::Ifm, "reads", 486);
    // GBUF fills: columns 9 + 3 (two nodes), rows 9 + 2 (the slide keeps row
    // 8): 6 x 12 x 11 = 792.
    expectBoth(r.layers[0], 1, TensorRole::Ifm, "writes", 792);
    // REGF fills: a PE with 2 real outputs fetches 3 + 1 + 1 columns over its
    // R trips, one with 1 output 1 + 1 + 1: 5 + 5 + 3 = 13 per PE row; rows
    // 4 + 1 real, each 1 word per S trip; 3 S x 3 C trips, N2:
    // 13 x 5 x 9 x 2 = 1170.
    expectBoth(r.layers[0], 0, TensorRole::Ifm, "writes", 1170);
  }
}

/// conv of x [C=3, X=4] with K=2, R=1 (24 MACs), its REGF holding one word
/// of each role under `regf` (stacks and updates), the levels above it as
/// `above` writes them, on hardware `hw`.
std::string oneWordConv(const std::string &regf, const std::string &above, const char *hw) {
  return R"(
network net { input x [C=3, X=4, Y=1]; l = conv(x, K=2, R=1, S=1); }
schedule for net on hw {
  layer l {
    REGF {
      tensor ifm [C=1, Xi=1]; tensor wgt [K=1, C=1, R=1]; tensor ofm [K=1, Xo=1];
      )" + regf + R"(
    }
    )" + above + R"(
  }
}
)" + hw;
}

// One word per role per PE (tpu_v1's PE level): conv of x [C=3, X=4] with
// K=2, R=1 (24 MACs) on 2 x 2 PEs, each holding one ifm, wgt and ofm word,
// under both orders of its two updates. Each PE's state record is then one
// key, and a role no update inside the innermost one moving it moves is
// not checked again (KernelCodegen: unmoved): the output under C innermost,
// the weights under Xo innermost. Counts by hand.
TEST(KernelTest, OneWordTilesCountedExactly) {
  auto schedule = [](const std::string &updates) {
    return oneWordConv("stack K += 1 repl 2; stack Xo += 1, Xi += 1 repl 2; " + updates, "", kTwoLevel);
  };
  const int regf = 0, dram = 1;
  for (bool cInner : {true, false})
    for (bool unclipped : {false, true}) {
      SCOPED_TRACE(std::string(cInner ? "C innermost" : "Xo innermost") + (unclipped ? ", unclipped copies" : ""));
      // The update written first is the innermost.
      SimResult r = simulateText(schedule(cInner ? "update C += 1; update Xo += 2, Xi += 2;"
                                                 : "update Xo += 2, Xi += 2; update C += 1;"),
                                 KernelFault::None, unclipped);
      const LayerSim *one = oneExactLayer(r, "one-word tiles", 24);
      ASSERT_TRUE(one);
      const LayerSim &l = *one;
      // 6 steps, each PE fetching its ifm word: 24; the 2 PEs of a column
      // share a read (multicast), 2 words a step: the input once, 12.
      expectBoth(l, regf, TensorRole::Ifm, "writes", 24);
      expectBoth(l, dram, TensorRole::Ifm, "reads", 12);
      // Weights: C innermost, every step a new word per PE (24), 2 words a
      // step from DRAM (12); Xo innermost, kept across the Xo steps: 12, 6.
      expectBoth(l, regf, TensorRole::Wgt, "writes", cInner ? 24 : 12);
      expectBoth(l, dram, TensorRole::Wgt, "reads", cInner ? 12 : 6);
      // Outputs: C innermost, one residency per PE and Xo step, each of the 8
      // words written back once. Xo innermost, a residency per step: 24
      // write-backs, each word's last 2 of 3 read back from DRAM.
      expectBoth(l, dram, TensorRole::Ofm, "writes", cInner ? 8 : 24);
      if (cInner)
        EXPECT_EQ(counted(l, dram, TensorRole::Ofm, "reads"), 0);
      else
        expectBoth(l, dram, TensorRole::Ofm, "reads", 16);
      // REGF: 24 MACs' reads plus the write-backs; writes the MACs' and the
      // partial sums read back.
      expectBoth(l, regf, TensorRole::Ofm, "reads", 24 + (cInner ? 8 : 24));
      expectBoth(l, regf, TensorRole::Ofm, "writes", 24 + (cInner ? 0 : 16));
    }
}

// The same one-word tiles without multicast: every PE reads its own words
// from DRAM. The kernel keeps one buffer of an input for the PEs along a
// stack that does not move it (the ifm along K, the weights along Xo), the
// first of them filling it for all (docs/simulator.md, "Kernels"); the
// counts are still each PE's. C innermost (the update written first), 6
// steps of 4 PEs: every PE takes a new ifm word and a new weight word each
// step, 24 written into the REGFs and 24 read from DRAM, each.
TEST(KernelTest, PesSharingAnInputsWordsStillCountTheirOwnReads) {
  std::string hw = kTwoLevel;
  const std::string multicast = " transfer = multicast;";
  hw.erase(hw.find(multicast), multicast.size());
  const std::string text = oneWordConv(
      "stack K += 1 repl 2; stack Xo += 1, Xi += 1 repl 2; update C += 1; update Xo += 2, Xi += 2;", "", hw.c_str());
  const int regf = 0, dram = 1;
  for (bool unclipped : {false, true}) {
    SCOPED_TRACE(unclipped ? "unclipped copies" : "clipped only");
    const LayerSim *one = oneExactLayer(simulateText(text, KernelFault::None, unclipped), "no multicast", 24);
    ASSERT_TRUE(one);
    for (TensorRole r : {TensorRole::Ifm, TensorRole::Wgt}) {
      expectBoth(*one, regf, r, "writes", 24);
      expectBoth(*one, dram, r, "reads", 24);
    }
  }
}

// The stacks' loops nest by their repl, the most units innermost, whatever
// order they are written in (KernelPlan): the same one-word tiles on 2 x 4
// PEs (K 2, Xo 4), no multicast, C innermost, written both ways. Every PE
// takes a new ifm and weight word at each of the 3 C steps: 8 x 3 = 24
// written into the REGFs and 24 read from DRAM, each, though the PEs along
// K share one ifm buffer and those along Xo one weight buffer, the first of
// them filling it (it runs first in either nest: it differs from the others
// only where its index is 0). Outputs: one residency per PE, its word
// written back once (8), 24 MACs' reads and 8 write-backs read from the
// REGFs, 24 writes.
TEST(KernelTest, StacksWrittenInEitherOrderCountTheSame) {
  std::string hw = kTwoLevel;
  const std::string multicast = " transfer = multicast;";
  hw.erase(hw.find(multicast), multicast.size());
  const int regf = 0, dram = 1;
  for (const char *stacks : {"stack Xo += 1, Xi += 1 repl 4; stack K += 1 repl 2;",
                             "stack K += 1 repl 2; stack Xo += 1, Xi += 1 repl 4;"})
    for (bool unclipped : {false, true}) {
      SCOPED_TRACE(std::string(stacks) + (unclipped ? ", unclipped copies" : ""));
      const std::string text = oneWordConv(std::string(stacks) + " update C += 1;", "", hw.c_str());
      const LayerSim *one = oneExactLayer(simulateText(text, KernelFault::None, unclipped), "2 x 4 PEs", 24);
      ASSERT_TRUE(one);
      for (TensorRole r : {TensorRole::Ifm, TensorRole::Wgt}) {
        expectBoth(*one, regf, r, "writes", 24);
        expectBoth(*one, dram, r, "reads", 24);
      }
      expectBoth(*one, dram, TensorRole::Ofm, "writes", 8);
      EXPECT_EQ(counted(*one, dram, TensorRole::Ofm, "reads"), 0);
      expectBoth(*one, regf, TensorRole::Ofm, "reads", 24 + 8);
      expectBoth(*one, regf, TensorRole::Ofm, "writes", 24);
    }
}

// The same one level up: conv of x [C=2, X=4] with K=4 (32 MACs) on two
// nodes of one PE, the nodes stacked along K, so both GBUFs hold the whole
// ifm (8 words) in their one step, and 4 weights each. The kernel fills one
// GBUF buffer of the ifm for both nodes; the counts are still each node's:
// 16 ifm words written into the GBUFs; read from DRAM 16 times where each
// node reads its own, 8 where the GBUF level multicasts. Weights: 8 and 8.
TEST(KernelTest, NodesSharingAnInputsWordsStillCountTheirOwnReads) {
  for (bool multicast : {false, true}) {
    SCOPED_TRACE(multicast ? "multicast" : "no multicast");
    const std::string text = std::string(R"(
network net { input x [C=2, X=4, Y=1]; l = conv(x, K=4, R=1, S=1); }
schedule for net on hw {
  layer l {
    REGF {
      tensor ifm [C=1, Xi=1]; tensor wgt [K=1, C=1, R=1]; tensor ofm [K=1, Xo=1];
      update C += 1; update Xo += 1, Xi += 1; update K += 1;
    }
    GBUF { tensor ifm [C=2, Xi=4]; tensor wgt [K=2, C=2, R=1]; tensor ofm [K=2, Xo=4]; stack K += 2 repl 2; }
  }
}
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; access_energy = 1 pJ; }
  level GBUF { capacity = 4 KiB; array = 2; access_energy = 10 pJ;)") +
                             (multicast ? " transfer = multicast;" : "") + R"( }
  level DRAM { access_energy = 100 pJ; }
}
)";
    const LayerSim *one = oneExactLayer(simulateText(text), "nodes along K", 32);
    ASSERT_TRUE(one);
    const int gbuf = 1, dram = 2;
    expectBoth(*one, gbuf, TensorRole::Ifm, "writes", 16);
    expectBoth(*one, dram, TensorRole::Ifm, "reads", multicast ? 8 : 16);
    expectBoth(*one, gbuf, TensorRole::Wgt, "writes", 8);
    expectBoth(*one, dram, TensorRole::Wgt, "reads", 8);
  }
}

// Steps with nothing to reduce over: conv of x [C=3, X=4] with K=2 (24
// MACs), the node level splitting C unevenly (node 1 holds C 2..3, one
// real channel), so that node 1's second REGF C trip is past its channels
// and every unit's ifm and wgt boxes, and its statement's, are empty there;
// but Xo is the innermost update, so the units' outputs still move and
// each starts a residency (of the identity) at those steps. Unclipped or
// not (KernelOptions::unclippedSteps), a step may be skipped only where it
// does nothing. Counts by hand.
TEST(KernelTest, StepsPastTheChannelsStillStartTheirOutputs) {
  const std::string text = oneWordConv(
      "stack K += 1 repl 2; stack Xo += 1, Xi += 1 repl 2; update Xo += 2, Xi += 2; update C += 1;",
      "GBUF { tensor ifm [C=2, Xi=4]; tensor wgt [K=2, C=2, R=1]; tensor ofm [K=2, Xo=4]; stack C += 2 repl 2; }",
      kNodes);
  const int gbuf = 1;
  for (bool unclipped : {false, true}) {
    SCOPED_TRACE(unclipped ? "unclipped copies" : "clipped only");
    SimResult r = simulateText(text, KernelFault::None, unclipped);
    const LayerSim *one = oneExactLayer(r, "uneven channels", 24);
    ASSERT_TRUE(one);
    const LayerSim &l = *one;
    // Each node's 4 PEs (K 2 x Xo 2) step over C 2 x Xo 2 trips, Xo
    // innermost: a new output word every step, so 4 residencies of one
    // word each per PE, node 1's last two empty of products: 2 nodes x 4
    // PEs x 4 = 32 words written back into GBUF.
    expectBoth(l, gbuf, TensorRole::Ofm, "writes", 32);
  }
}

// An uneven stack at the PE level: conv of x [C=3, X=4] with K=2 (24
// MACs), two PEs stacked along C under an update of C by 2, so that at the
// update's second trip the PEs at C 3 hold no channel (their ifm and wgt
// boxes, and their statement's, empty). With C the innermost update the
// outputs are not checked there, and the unclipped copy runs only the PEs
// inside (KernelCodegen: soleStack); with Xo innermost they are, and it
// may not. Counts by hand.
TEST(KernelTest, UnevenStackAtThePeLevel) {
  auto text = [](const std::string &updates) {
    return oneWordConv("stack C += 1 repl 2; stack Xo += 1, Xi += 1 repl 2; " + updates,
                       "GBUF { tensor ifm [C=3, Xi=4]; tensor wgt [K=2, C=3, R=1]; tensor ofm [K=2, Xo=4]; }", kNodes);
  };
  const int regf = 0;
  for (bool cInner : {true, false}) {
    std::vector<SimResult> runs;
    for (bool unclipped : {false, true}) {
      SCOPED_TRACE(std::string(cInner ? "C innermost" : "Xo innermost") + (unclipped ? ", unclipped copies" : ""));
      runs.push_back(simulateText(text(cInner ? "update C += 2; update Xo += 2, Xi += 2; update K += 1;"
                                              : "update Xo += 2, Xi += 2; update C += 2; update K += 1;"),
                                  KernelFault::None, unclipped));
      const SimResult &r = runs.back();
      ASSERT_EQ(r.layers.size(), 1u);
      expectSound(r, "uneven stack");
      const LayerSim &l = r.layers[0];
      EXPECT_EQ(l.macs, 24);
      // 8 steps (K 2 x Xo 2 x C 2) of 4 PEs; the 2 at C 1 empty at each C
      // trip 1, where they keep what they hold. Ifm: every PE-step with a
      // channel has a new box (its C or Xo moved): 2 x 8 + 2 x 4 = 24.
      // Weights (K, C): C innermost, the PEs at C 0 alternate C 0 and 2 at
      // every step (8 each), those at C 1 hold C 1 across their empty
      // trips (one per K, 2 each): 2 x 8 + 2 x 2 = 20; Xo innermost, the
      // PEs at C 0 fetch once per K and C trip (4 each), those at C 1 once
      // per K (2 each): 12.
      EXPECT_EQ(counted(l, regf, TensorRole::Ifm, "writes"), 24);
      EXPECT_EQ(counted(l, regf, TensorRole::Wgt, "writes"), cInner ? 20 : 12);
    }
    // Every count, the outputs' write-backs too, as the clipped code's.
    const std::vector<CountCheck> &clipped = runs[0].layers[0].counts, &unclipped = runs[1].layers[0].counts;
    ASSERT_EQ(clipped.size(), unclipped.size());
    for (size_t i = 0; i < clipped.size(); ++i)
      EXPECT_EQ(clipped[i].counted, unclipped[i].counted)
          << clipped[i].kind << " of " << roleName(clipped[i].role) << " at level " << clipped[i].level;
  }
}

// Units past the layer's end along a dim two stacks move: conv of x [C=3,
// X=4] with K=2 (24 MACs), 2 x 6 PEs stacked along K and twice along Xo
// (units at Xo 0..5), so that the last two PEs of each K hold no output,
// or else one stack along Xo and an update (the update's second trip past
// Xo 3). The unclipped copy may replace the clipped code only where each
// dim some tile overhangs is one index wide and moved by one stack at most
// (KernelCodegen: everyStepUnclipped): the first writing needs the
// clipped code at every step, the second runs unclipped. Counts by hand.
TEST(KernelTest, UnitsPastTheLayerAlongTwoStacks) {
  const int regf = 0, dram = 1;
  for (const char *xo : {"stack Xo += 1, Xi += 1 repl 3; stack Xo += 3, Xi += 3 repl 2; update C += 1;",
                         "stack Xo += 1, Xi += 1 repl 3; update C += 1; update Xo += 3, Xi += 3;"})
    for (bool unclipped : {false, true}) {
      SCOPED_TRACE(std::string(xo) + (unclipped ? ", unclipped copies" : ""));
      const std::string text = oneWordConv(std::string("stack K += 1 repl 2; ") + xo, "", kTwoLevel);
      const LayerSim *one = oneExactLayer(simulateText(text, KernelFault::None, unclipped), "Xo past 4", 24);
      ASSERT_TRUE(one);
      // The 8 PEs with an output take a new ifm word at each C step: 24;
      // the 2 along K share its read (multicast): 4 words a C step, 12.
      expectBoth(*one, regf, TensorRole::Ifm, "writes", 24);
      expectBoth(*one, dram, TensorRole::Ifm, "reads", 12);
      // One residency per output word (C innermost): 8 written back.
      expectBoth(*one, dram, TensorRole::Ofm, "writes", 8);
    }
}

// A PE's one output word held across a step past the layer: conv of x
// [C=3, X=4] with K=2 (24 MACs), 2 x 3 PEs stacked along K and Xo under
// an update of Xo by 3 (innermost) and one of C, so that the PEs at Xo 1
// and 2 lie past Xo 3 at the update's second trip. There their output
// box is empty and they keep the word they hold, so that their residency
// spans the 3 C steps; only where no tile passes the layer along the
// output's dims does a residency last one step (KernelCodegen:
// oneStepResidency). Counts by hand, per K: the PE at Xo 0 alternates
// Xo 0 and 3, a residency a step (6 write-backs into the GBUF, the last
// 2 of each word's 3 read back: 4); those at Xo 1 and 2 one each (2);
// and the GBUF's 8 words read once more on their way to DRAM.
// The analysis does not claim these counts exact (it charges a residency
// per step there: 24 write-backs), so only the kernel's are checked.
TEST(KernelTest, OutputsHeldAcrossAStepPastTheLayer) {
  const int gbuf = 1;
  const std::string text = oneWordConv(
      "stack K += 1 repl 2; stack Xo += 1, Xi += 1 repl 3; update Xo += 3, Xi += 3; update C += 1;",
      "GBUF { tensor ifm [C=3, Xi=4]; tensor wgt [K=2, C=3, R=1]; tensor ofm [K=2, Xo=4]; }", kNodes);
  for (bool unclipped : {false, true}) {
    SCOPED_TRACE(unclipped ? "unclipped copies" : "clipped only");
    SimResult r = simulateText(text, KernelFault::None, unclipped);
    ASSERT_EQ(r.layers.size(), 1u);
    expectSound(r, "Xo 4, 5 past");
    EXPECT_EQ(r.layers[0].macs, 24);
    EXPECT_EQ(counted(r.layers[0], gbuf, TensorRole::Ofm, "writes"), 2 * (6 + 2));
    EXPECT_EQ(counted(r.layers[0], gbuf, TensorRole::Ofm, "reads"), 2 * 4 + 8);
  }
}

// Steps past the layer's K along a dim the PE level does not stack: conv
// of x [C=2, X=4] with K=3 (24 MACs), the nodes stacking K by 2, so that
// node 1 holds K 2 alone and its PEs' second K trip lies past the layer's.
// There the weights', the outputs' and the statement's boxes are empty,
// but the ifm does not span K: it still moves, and is fetched. The
// unclipped copy runs such a step with K dead (KernelCodegen: stepDead)
// where the clipped code clips every box. Counts by hand.
TEST(KernelTest, StepsPastTheLayersKStillFetchTheirIfm) {
  const std::string text = std::string(R"(
network net { input x [C=2, X=4, Y=1]; l = conv(x, K=3, R=1, S=1); }
schedule for net on hw {
  layer l {
    REGF {
      tensor ifm [C=1, Xi=1]; tensor wgt [K=1, C=1, R=1]; tensor ofm [K=1, Xo=1];
      stack Xo += 1, Xi += 1 repl 2;
      update C += 1; update Xo += 2, Xi += 2; update K += 1;
    }
    GBUF { tensor ifm [C=2, Xi=4]; tensor wgt [K=2, C=2, R=1]; tensor ofm [K=2, Xo=4]; stack K += 2 repl 2; }
  }
}
)") + kNodes;
  const int regf = 0, gbuf = 1;
  for (bool unclipped : {false, true}) {
    SCOPED_TRACE(unclipped ? "unclipped copies" : "clipped only");
    SimResult r = simulateText(text, KernelFault::None, unclipped);
    const LayerSim *one = oneExactLayer(r, "K past the layer's", 24);
    ASSERT_TRUE(one);
    const LayerSim &l = *one;
    // Each node's 2 PEs take 8 steps (C 2 x Xo 2 x K 2, C innermost), each
    // with a new ifm word (its C or Xo moved; K's second trip starts again
    // at C 0, Xo 0), node 1's past the layer's K too: 2 x 2 x 8 = 32.
    expectBoth(l, regf, TensorRole::Ifm, "writes", 32);
    // Weights (K, C): a new word at each step with a K, 8 steps on node 0,
    // 4 on node 1, per PE: 2 x (8 + 4) = 24.
    expectBoth(l, regf, TensorRole::Wgt, "writes", 24);
    // Outputs: C innermost, one residency per PE and (Xo, K) trip with a K,
    // 2 x (4 + 2) = 12, each written back into GBUF.
    expectBoth(l, gbuf, TensorRole::Ofm, "writes", 12);
  }
}

// A 3-operand add: 2 additions per output and each operand read once
// (docs/directives.md §6), under the solver's schedule.
TEST(KernelTest, AddOfThreeOperands) {
  test::Compiled comp = test::compile(std::string(R"(
network net {
  batch N = 2;
  input a [C=3, X=5, Y=5]; input b [C=3, X=5, Y=5]; input c [C=3, X=5, Y=5];
  s = add(a, b, c);
}
)") + kNodes);
  ASSERT_EQ(comp.diagnostics(), "");
  Solution sol = solved(comp, "kapla", false);
  SimResult r = simulate(comp.model, sol.schedule, SimOptions{});
  ASSERT_EQ(r.layers.size(), 1u);
  expectSound(r, "add3");
  EXPECT_TRUE(r.layers[0].exactClaimed);
  EXPECT_TRUE(r.layers[0].countsEqual);
  // 2 x 3 x 5 x 5 = 150 points: 300 additions, 450 operand reads at REGF.
  EXPECT_EQ(r.layers[0].macs, 300);
  expectBoth(r.layers[0], 0, TensorRole::Ifm, "reads", 450);
}

// A concatenation of five operands of 1, 2, 3, 1 and 2 channels (the kernel
// finds each word's operand by a binary search over their first channels,
// 0 1 3 6 7), and a convolution reading them concatenated: outputs equal,
// and every count the analysis claims exact equal.
TEST(KernelTest, ConcatenationOfUnequalOperands) {
  test::Compiled comp = test::compile(std::string(R"(
network net {
  batch N = 2;
  input a [C=1, X=4, Y=4]; input b [C=2, X=4, Y=4]; input c [C=3, X=4, Y=4];
  k = concat(a, b, c, a, b);
  v = conv(a, b, c, K=4, R=3, pad=1);
}
)") + kNodes);
  ASSERT_EQ(comp.diagnostics(), "");
  for (bool pipelining : {false, true}) {
    Solution sol = solved(comp, "kapla", pipelining);
    SimResult r = simulate(comp.model, sol.schedule, SimOptions{});
    ASSERT_EQ(r.layers.size(), 2u);
    expectSound(r, pipelining ? "concat, segments" : "concat");
  }
}

// The work a run is refused for (docs/simulator.md, "Limits of the kernels"),
// by hand: kConv1d's layer is N·C·K·Xo·Yo·R·S = 1·2·2·6·1·3·1 = 72 points of
// one operand; the run counts it twice (reference and kernel).
TEST(KernelTest, WorkIsCountedAndBounded) {
  test::Compiled comp = test::compile(std::string(kConv1d) + kTwoLevel);
  ASSERT_EQ(comp.diagnostics(), "");
  const Network &net = comp.model.networks[0];
  EXPECT_EQ(layerWork(net.layers[0]), 72);
  EXPECT_EQ(runWork(net, SimOptions{}), 144);
  // A concatenation of three 4 x 4 maps of one channel: a copy of 3·4·4 = 48
  // points (one channel dim: K is C), each searching 3 operands.
  test::Compiled cat = test::compile(R"(
network net { input x [C=1, X=4, Y=4]; k = concat(x, x, x); }
)");
  ASSERT_EQ(cat.diagnostics(), "");
  EXPECT_EQ(layerWork(cat.model.networks[0].layers[0]), 144);
  SimOptions tight;
  tight.workLimit = 143;   // one point short of the run's 144
  tight.layers = {"l"};    // chosen: refused (a whole run would leave it out)
  try {
    simulate(comp.model, comp.model.schedules[0], tight);
    ADD_FAILURE() << "a run over its work limit was simulated";
  } catch (const LimitError &e) {
    EXPECT_EQ(e.kind, LimitError::Work);
    EXPECT_EQ(e.layer, 0);
    EXPECT_EQ(e.amount, 144);
    EXPECT_EQ(e.limit, 143);
  }
  tight.workLimit = 144;
  tight.layers.clear();
  std::vector<SimProgress> seen;
  tight.progress = [&](const SimProgress &p) { seen.push_back(p); };
  EXPECT_TRUE(simulate(comp.model, comp.model.schedules[0], tight).ok());
  ASSERT_EQ(seen.size(), 2u);   // before the layer, and at the end
  EXPECT_EQ(seen[0].layer, "l");
  EXPECT_EQ(seen[0].work, 72);   // its reference has run
  EXPECT_EQ(seen[1].work, 144);
  EXPECT_EQ(seen[1].totalWork, 144);
}

// Past the work bound a run seeds what it leaves out (docs/simulator.md,
// "Seeded operands"). By hand: a is 1·2·2·6·1·3·1 = 72 points, b (Xo = 6 - 2 =
// 4) 1·2·2·4·1·3·1 = 48; the whole run 2·72 + 2·48 = 240, the run of b after
// a's reference 72 + 2·48 = 168, b alone 2·48 = 96, a alone 144.
TEST(KernelTest, PastItsWorkBoundARunSeedsWhatItLeavesOut) {
  test::Compiled comp = test::compile(std::string(R"(
network net { input x [C=2, X=8, Y=1]; a = conv(x, K=2, R=3, S=1); b = conv(a, K=2, R=3, S=1); }
)") + kTwoLevel);
  ASSERT_EQ(comp.diagnostics(), "");
  Solution sol = solved(comp, "kapla", false);
  SimOptions tight;
  tight.workLimit = 200;   // the whole run (240) passes it, each layer alone fits: all run, a's output computed
  SimResult r = simulate(comp.model, sol.schedule, tight);
  EXPECT_FALSE(r.workCut);
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_TRUE(r.layers[0].outputEqual && r.layers[1].outputEqual);
  EXPECT_EQ(r.layers[1].seeded, "");
  tight.workLimit = 143;   // a alone passes it: left out, b runs on a seeded a
  r = simulate(comp.model, sol.schedule, tight);
  ASSERT_TRUE(r.workCut);
  EXPECT_EQ(r.workCut->layer, 0);
  EXPECT_EQ(r.workCut->work, 144);
  EXPECT_EQ(r.workCut->layers, 1);
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[0].skipped, kPastWorkBound);
  EXPECT_EQ(r.layers[1].seeded, kSeededPastBound);
  EXPECT_EQ(r.layers[1].seededTensors, std::vector<std::string>{"a"});
  EXPECT_TRUE(r.layers[1].outputEqual);
  EXPECT_TRUE(r.ok());
  tight.layers = {"b"};   // 168: within the bound, a's reference runs
  tight.workLimit = 168;
  r = simulate(comp.model, sol.schedule, tight);
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_TRUE(r.layers[0].outputEqual);
  EXPECT_EQ(r.layers[0].seeded, "");
  tight.workLimit = 167;   // past it: b alone (96) on a seeded a
  std::vector<SimProgress> seen;
  tight.progress = [&](const SimProgress &p) { seen.push_back(p); };
  r = simulate(comp.model, sol.schedule, tight);
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_TRUE(r.layers[0].outputEqual);
  EXPECT_EQ(r.layers[0].seeded, kSeededPrefix);
  EXPECT_EQ(r.layers[0].seededTensors, std::vector<std::string>{"a"});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].totalWork, 96);   // a's reference did not run
  // A seeded layer is still compared: a wrong kernel differs.
  tight.fault = KernelFault::OuterLoopShort;
  r = simulate(comp.model, sol.schedule, tight);
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_EQ(r.layers[0].seeded, kSeededPrefix);
  EXPECT_FALSE(r.layers[0].outputEqual);
  EXPECT_FALSE(r.ok());
  tight.fault = KernelFault::None;
  tight.workLimit = 95;   // b alone passes it: refused
  EXPECT_THROW(simulate(comp.model, sol.schedule, tight), LimitError);
}

// The run drops a tensor after its last reader (docs/simulator.md, "Limits
// of the kernels"). By hand, a chain of three 1x1 convs of 2 channels on 8
// words: each activation 2·8 = 16 words, each layer's weights 2·2 = 4. At
// each layer the run holds its input (16), its weights (4) and what it writes
// (16): 36 words, 144 bytes; keeping every tensor, 16 + 3·(16 + 4) = 76
// words, 304 bytes, by the last.
TEST(KernelTest, ARunHoldsOnlyTheTensorsStillRead) {
  test::Compiled comp = test::compile(std::string(R"(
network net { input x [C=2, X=8, Y=1]; a = conv(x, K=2, R=1); b = conv(a, K=2, R=1); c = conv(b, K=2, R=1); }
)") + kTwoLevel);
  ASSERT_EQ(comp.diagnostics(), "");
  Solution sol = solved(comp, "kapla", false);
  // The same limit bounds a kernel's arrays (counters and all, more than 144
  // bytes): at 144 the tensors pass and the first kernel is refused.
  SimOptions tight;
  auto refusal = [&](int64_t bytes) {
    tight.memoryLimitBytes = bytes;
    try {
      simulate(comp.model, sol.schedule, tight);
    } catch (const LimitError &e) {
      EXPECT_EQ(e.kind, LimitError::Memory);
      EXPECT_EQ(e.layer, 0);
      return e;
    }
    ADD_FAILURE() << "a run over its memory limit was simulated";
    return LimitError{};
  };
  EXPECT_EQ(refusal(144).what, "its kernel's arrays");
  const LimitError tensors = refusal(143);
  EXPECT_EQ(tensors.what, "the tensors the run holds at it");
  EXPECT_EQ(tensors.amount, 144);
}

// ---- per-axis windows (docs/language.md: stride, dilation, pad per axis) ----

/// One PE pair with room for a 20 x 5 window, then DRAM.
const char *const kWidePe = R"(
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 512 B; array = 2; access_energy = 1 pJ; transfer = multicast; }
  level DRAM { access_energy = 100 pJ; }
}
)";

/// One conv layer `c` (K = 2, C = 1) of network `layers`, on two PEs (K += 1)
/// that share one input window (multicast) of one output, sliding along Xo,
/// then along Yo: window `xi x yi`, filter `r x s`, moving by `dx x dy`.
std::string slidingConv(const std::string &layers, int xi, int yi, int r, int s, int dx, int dy) {
  auto n = [](int v) { return std::to_string(v); };
  return "network net { " + layers + " }\nschedule for net on hw { layer c { REGF {\n  tensor ifm [C=1, Xi=" + n(xi) +
         ", Yi=" + n(yi) + "]; tensor wgt [K=1, C=1, R=" + n(r) + ", S=" + n(s) +
         "]; tensor ofm [K=1, Xo=1, Yo=1];\n  stack K += 1 repl 2;\n  update Xo += 1, Xi += " + n(dx) +
         "; update Yo += 1, Yi += " + n(dy) + ";\n} } }\n" + kWidePe;
}

/// The one layer of `text` simulated: sound, its counts claimed exact, `macs` MACs.
LayerSim simulatedLayer(const std::string &text, const std::string &what, int64_t macs) {
  SimResult r = simulateText(text);
  EXPECT_EQ(r.layers.size(), 1u);
  expectSound(r, what);
  LayerSim l = r.layers.empty() ? LayerSim{} : r.layers[0];
  EXPECT_TRUE(l.exactClaimed);
  EXPECT_EQ(l.macs, macs);
  return l;
}

// DeepBench's rectangular filter with its own stride per axis: R x S = 20 x 5,
// stride 8 x 2, on a 44 x 9 map. Xo = ⌊(44 − 20)/8⌋ + 1 = 4, Yo = ⌊(9 − 5)/2⌋
// + 1 = 3; MACs K·Xo·Yo·C·R·S = 2·4·3·1·20·5 = 2400. The window slides by 8
// columns along a row of outputs. (tests/lit/sim/per-axis.test runs it in `dflc sim`.)
TEST(KernelTest, RectangularFilterWithStridePerAxis) {
  const LayerSim l = simulatedLayer(
      slidingConv("input x [C=1, X=44, Y=9]; c = conv(x, K=2, R=20, S=5, stride=8 x 2);", 20, 5, 20, 5, 8, 2),
      "20 x 5 / 8 x 2", 2400);
  // By hand, DRAM: per output row the window's 20 x 5 = 100 words, then 8 new
  // columns x 5 rows = 40 on each of the 3 slides: 220; the next row starts
  // over at Xi 0 (rows 2..6, then 4..8): 3 x 220 = 660 (the map has 396 words:
  // the rows 2..4 and 4 of consecutive windows are read again).
  expectBoth(l, 1, TensorRole::Ifm, "reads", 660);
  // Weights stay: 2 x 100 once; every output written once: 2 x 4 x 3.
  expectBoth(l, 1, TensorRole::Wgt, "reads", 200);
  expectBoth(l, 1, TensorRole::Ofm, "writes", 24);
}

// ONNX's SAME_UPPER 3 x 3 stride-2 conv on 6 x 6: pads (top, left, bottom,
// right) = (0, 0, 1, 1), in DFL `pad=0 x 0, 1 x 1` (begin, end).
// Xo = Yo = ⌊(6 + 0 + 1 − 3)/2⌋ + 1 = 3 = ⌈6/2⌉. The windows start at 0, 2, 4;
// the last reaches index 6, the end padding.
TEST(KernelTest, AsymmetricPaddingReadsOnlyData) {
  const LayerSim l = simulatedLayer(
      slidingConv("input x [C=1, X=6, Y=6]; c = conv(x, K=2, R=3, stride=2, pad=0 x 0, 1 x 1);", 3, 3, 3, 3, 2, 2),
      "SAME_UPPER", 2 * 3 * 3 * 9);
  // By hand, DRAM serves no padding: along a row band the columns 0..2, then
  // 3..4, then 5 (6 is padding): 6; the bands' rows 0..2, 2..4 and 4..5 (6 is
  // padding): 3 + 3 + 2 = 8 rows of 6: 48 (63 with the padding).
  expectBoth(l, 1, TensorRole::Ifm, "reads", 48);
  expectBoth(l, 1, TensorRole::Ofm, "writes", 18);
}

// Every windowed kind with per-axis and asymmetric attributes, under the
// solvers' schedules and with its backward layers: bit-exact against the
// reference. Shapes: c0 Xo = ⌊(13 + 1 − 5)/3⌋ + 1 = 4, Yo = ⌊(7 + 2 − 2)/1⌋
// + 1 = 8; d1 (dilation 2 x 1, pad 2 x 0): Xo = (4 + 4 − 2·2 − 1) + 1 = 4,
// Yo = (8 − 1·2 − 1) + 1 = 6;
// p1 (3 x 2, stride 2 x 1, pads 1 x 0, 0 x 1, ceil): Xo = ⌈(4 + 1 − 3)/2⌉ + 1 = 2,
// Yo = 6 + 1 − 2 + 1 = 6.
const char *const kAxes = R"(
network net {
  batch N = 2;
  input x [C=2, X=13, Y=7];
  c0 = conv(x, K=3, R=5, S=2, stride=3 x 1, pad=0 x 1, 1 x 1);
  d1 = dwconv(c0, R=3, dilation=2 x 1, pad=2 x 0);
  p1 = maxpool(d1, R=3, S=2, stride=2 x 1, pad=1 x 0, 0 x 1, ceil=true);
  a1 = avgpool(p1, R=2, S=3, stride=1 x 3);
  f1 = fc(a1, K=4);
}
)";

TEST(KernelTest, PerAxisWindowsUnderTheSolvers) {
  test::Compiled comp = test::compile(std::string(kAxes) + kNodes);
  ASSERT_EQ(comp.diagnostics(), "");
  const Network &net = comp.model.networks[0];
  EXPECT_EQ(net.layers[0].ofmShape, (TensorShape{3, 4, 8}));
  EXPECT_EQ(net.layers[1].ofmShape, (TensorShape{3, 4, 6}));
  EXPECT_EQ(net.layers[2].ofmShape, (TensorShape{3, 2, 6}));
  EXPECT_EQ(net.layers[3].ofmShape, (TensorShape{3, 1, 2}));   // ⌊(2 − 2)/1⌋ + 1, ⌊(6 − 3)/3⌋ + 1
  for (const char *solver : {"kapla", "random"})
    for (bool pipelining : {false, true}) {
      Solution sol = solved(comp, solver, pipelining);
      SimResult r = simulate(comp.model, sol.schedule, SimOptions{});
      EXPECT_EQ(r.layers.size(), net.layers.size());
      expectSound(r, std::string(solver) + (pipelining ? ", segments" : ", layer by layer"));
    }
  AnalyzeOptions train;
  train.train = true;
  test::Compiled trained = test::compile(std::string(kAxes) + kNodes, train);
  ASSERT_EQ(trained.diagnostics(), "");
  SimResult r = simulate(trained.model, solved(trained, "kapla", false).schedule, SimOptions{});
  EXPECT_EQ(r.layers.size(), trained.model.networks[0].layers.size());
  expectSound(r, "training");
}

// A Simba-like lane level: the lanes hold weights and partial sums in
// registers, the inputs bypass them (read from the PE's buffer).
const char *const kLanes = R"(
hardware lanes {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level LANE {
    array = 3 x 2;
    buffer wreg { holds = wgt; capacity = 2 B; access_energy = 1 pJ; }
    buffer preg { holds = ofm; capacity = 2 B; access_energy = 1 pJ; }
    transfer = multicast, reduction;
  }
  level PE { capacity = 1 KiB; array = 2 x 1; access_energy = 5 pJ; transfer = multicast; }
  level DRAM { access_energy = 100 pJ; }
}
)";
/// conv of x [C=2, X=Y=`side`] with K=2, R=S=3, pad=1 on `lanes`, its lanes
/// holding one word of each role under `lane` (stacks and updates), its PEs
/// as `pe` writes their directives.
std::string laneConv(int side, const std::string &lane, const std::string &pe) {
  const std::string x = std::to_string(side);
  return "network net { input x [C=2, X=" + x + ", Y=" + x + "]; l = conv(x, K=2, R=3, pad=1); }" + R"(
schedule for net on lanes {
  layer l {
    LANE {
      tensor ifm [C=1, Xi=1, Yi=1]; tensor wgt [K=1, C=1, R=1, S=1]; tensor ofm [K=1, Xo=1, Yo=1];
      )" + lane + R"(
    }
    PE { )" + pe + R"( }
  }
}
)" + kLanes;
}

// S stacked unevenly over the lanes (2 over S = 3: the second S trip has
// one lane past the filter) and Xo over the PEs past the layer's (2 x 4 over
// Xo = 5), as the solver's ResNet-50 schedules on simba_6x6 do.
const std::string kUnevenLanes =
    laneConv(5,
             "stack Xo += 1, Xi += 1 repl 2; stack S += 1, Yi += 1 repl 2; update R += 1, Xi += 1; "
             "update S += 2, Yi += 2; update C += 1; update Xo += 2, Xi += 2; update Yo += 1, Yi += 1; update K += 1;",
             "tensor ifm [C=2, Xi=6, Yi=7]; tensor wgt [K=2, C=2, R=3, S=3]; tensor ofm [K=2, Xo=4, Yo=5]; "
             "stack Xo += 4, Xi += 4 repl 2;");

/// Runs every layer's kernel without counters (the benchmark's "kernel off"
/// column, which the simulator never runs), with and without the unclipped
/// copy, on the reference's inputs: each output equals the reference's.
void expectUncountedKernelsCompute(const Model &model, const Schedule &schedule, const std::string &what) {
  const Network &net = model.networks[static_cast<size_t>(schedule.network)];
  const Hardware &hw = model.hardware[static_cast<size_t>(schedule.hardware)];
  Schedule alone = schedule;
  alone.segments.clear();
  const ScheduleResult analysis = analyzeSchedule(model, alone);
  TensorStore store = seedNetwork(net, 1);
  Jit jit;
  for (const LayerScheduleModel &ls : schedule.layers) {
    const Layer &layer = net.layers[static_cast<size_t>(ls.layer)];
    SCOPED_TRACE(what + ", layer " + layer.name);
    TensorStore outputs = referenceOutputs(net, ls.layer, store);
    std::string why;
    auto plan = planKernel(net, ls.layer, hw, ls, analysis.layers[static_cast<size_t>(ls.layer)], why);
    if (plan && plan->guard.empty())
      for (double unclippedSteps : {0.0, std::numeric_limits<double>::infinity()}) {
        KernelOptions bare;
        bare.counters = false, bare.unclippedSteps = unclippedSteps;
        EXPECT_EQ(runKernel(*plan, jit.compile(*plan, bare), store).output, outputs.at(layer.name).data)
            << (unclippedSteps == 0 ? "unclipped copies" : "clipped");
      }
    for (const auto &[name, t] : outputs.tensors())
      store.set(name, t);
  }
}

TEST(KernelTest, KernelsWithoutCountersComputeTheReferencesOutputs) {
  {
    test::Compiled comp = test::compile(std::string(kLayers) + kNodes);
    ASSERT_EQ(comp.diagnostics(), "");
    for (const char *solver : {"kapla", "random"})
      expectUncountedKernelsCompute(comp.model, solved(comp, solver, false).schedule, solver);
  }
  test::Compiled lanes = test::compile(kUnevenLanes);
  ASSERT_EQ(lanes.diagnostics(), "");
  expectUncountedKernelsCompute(lanes.model, lanes.model.schedules[0], "uneven lanes");
  for (const char *solver : {"kapla", "random"})
    expectUncountedKernelsCompute(lanes.model, solved(lanes, solver, false).schedule, std::string(solver) + ", lanes");
}

// The inputs bypass the lanes: the statement reads them from the PE's buffer
// (KernelCodegen: readsAbove) and the lanes count none of them. Conv of x
// [C=2, X=4, Y=4] with K=2, R=S=3, pad=1: 4 x 4 outputs, 576 MACs; two PEs
// of 2 x 4 outputs each, their 3 x 2 lanes stacking S and Xo. Counts by hand.
TEST(KernelTest, InputsBypassingThePesAreReadFromAbove) {
  const std::string text =
      laneConv(4,
               "stack S += 1, Yi += 1 repl 3; stack Xo += 1, Xi += 1 repl 2; update R += 1, Xi += 1; "
               "update C += 1; update Yo += 1, Yi += 1; update K += 1;",
               "tensor ifm [C=2, Xi=4, Yi=6]; tensor wgt [K=2, C=2, R=3, S=3]; tensor ofm [K=2, Xo=2, Yo=4]; "
               "stack Xo += 2, Xi += 2 repl 2;");
  const int lane = 0, pe = 1, dram = 2;
  for (bool unclipped : {false, true}) {
    const LayerSim *l = oneExactLayer(simulateText(text, KernelFault::None, unclipped),
                                      unclipped ? "unclipped copies" : "clipped", 576);
    ASSERT_TRUE(l);
    // Every MAC reads its ifm word at the PE, the innermost level holding it.
    EXPECT_EQ(counted(*l, pe, TensorRole::Ifm, "reads"), 576);
    EXPECT_EQ(counted(*l, lane, TensorRole::Ifm, "writes"), 0);
    // A PE's lanes take R 3 x C 2 x Yo 4 x K 2 = 48 steps, each moving
    // their weights (R innermost; at its trip 0, C, Yo or K moved): 48 x 6
    // lanes x 2 PEs.
    EXPECT_EQ(counted(*l, lane, TensorRole::Wgt, "writes"), 576);
    // Each PE fills its tile once: C 2 x Xi 4 x Yi 6 (padding included), and
    // DRAM serves the 2 x 4 x 4 words of x once to both (multicast).
    EXPECT_EQ(counted(*l, pe, TensorRole::Ifm, "writes"), 96);
    EXPECT_EQ(counted(*l, dram, TensorRole::Ifm, "reads"), 32);
  }
}

} // namespace
} // namespace dfl::sim
