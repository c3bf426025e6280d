// Training: the backward graph, and a weight-gradient layer's accesses.
#include "scheduler/analysis/Analysis.h"
#include "scheduler/kapla/IntraLayerSolver.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace dfl;

namespace {
test::Compiled compileTrain(const std::string &text, std::vector<std::string> searchRoots = {}) {
  test::Compiled c;
  LoadedFiles files = loadBuffer("test.dfl", text, LoadOptions{std::move(searchRoots)}, *c.sm, *c.diags);
  c.model = analyze(files.files, *c.diags, AnalyzeOptions{true, {}});
  return c;
}
} // namespace

TEST(Training, BackwardGraph) {
  auto c = compileTrain(R"(network m {
    input x [C=8];
    a = fc(x, K=4);
    p = relu(a);
    b = fc(p, K=2);
    s = add(b, b);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &n = c.model.networks[0];
  // Forward a, b, s; backward in reverse: s routes gradients (nothing), b gets
  // dgrad and wgrad, a only wgrad (its operand is the network input).
  std::vector<std::string> names;
  for (const Layer &l : n.layers)
    names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "s", "b__dgrad", "b__wgrad", "a__wgrad"}));
  EXPECT_EQ(n.layers[3].output, TensorRole::Ifm);
  EXPECT_EQ(n.layers[4].output, TensorRole::Wgt);
  // MACs: a 4*8 = 32, b 2*4 = 8, s none; backward repeats the forward nests:
  // b__dgrad 8, b__wgrad 8, a__wgrad 32. Total 32 + 8 + 8 + 8 + 32 = 88.
  EXPECT_EQ(n.totalMacs(), 88);
}

TEST(Training, WeightGradientAccumulatesIntoWgt) {
  // The 1-D conv of docs/directives.md's worked example (X=8, R=3 -> Xo=6) on
  // REGF + DRAM, with the forward mapping reused for the weight gradient.
  auto c = compileTrain(R"(network n { input x [C=1, X=8]; c = conv(x, K=1, R=3, S=1); }
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4; access_energy = 1 pJ; }
  level DRAM { access_energy = 100 pJ; bandwidth = 2 B/cycle; }
}
schedule for n on h {
  layer c {
    REGF { tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1]; update Xo += 1, Xi += 1; }
  }
  layer c__wgrad {
    REGF { tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1]; update Xo += 1, Xi += 1; }
  }
})");
  ASSERT_EQ(c.diagnostics(), "");
  ScheduleResult r = analyzeSchedule(c.model, c.model.schedules[0]);
  ASSERT_TRUE(r.valid && r.complete);
  ASSERT_EQ(r.layers.size(), 2u);   // c has no data gradient: its operand is the input
  const auto &dram = r.layers[1].levels[1].accesses;
  const size_t ifm = 0, wgt = 1, ofm = 2;
  // ifm (X) slides by 1 over a 3-wide tile: 3 + 5*1 = 8 words read once.
  EXPECT_EQ(dram.reads[ifm], 8);
  // ofm is an input now (dY): one word per Xo step, 6 reads.
  EXPECT_EQ(dram.reads[ofm], 6);
  EXPECT_EQ(dram.writes[ofm], 0);
  // wgt (dW) is the output: stationary through the whole loop, written back
  // once (3 words), never read back (its first visit starts from zero).
  EXPECT_EQ(dram.writes[wgt], 3);
  EXPECT_EQ(dram.reads[wgt], 0);
  // Energy: 18 MACs; REGF 18*4 (the MACs' own) + 8 + 6 fills + 3 read out = 89;
  // DRAM (8 + 6 + 3) * 100 = 1700. Total 1807 pJ, as for the forward layer.
  EXPECT_DOUBLE_EQ(r.layers[1].energyPj, 1807);
  EXPECT_DOUBLE_EQ(r.layers[0].energyPj, 1807);
}

TEST(Training, SegmentKeepsWriteBackThatBackwardLayersRead) {
  // Two 1-D convs (X=8 -> a: Xo=6 -> b: Xo=4) in one temporal segment. a's
  // output (6 words) stays on chip for b either way, so b reads no ifm from
  // DRAM; but in training b__wgrad reads a's output again from DRAM, so a must
  // still write it back: 6 words, as without the segment.
  const std::string net = test::kTwoConvs;
  auto layer = [](const std::string &name) {
    return "  layer " + name +
           " { REGF { tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1]; update Xo += 1, Xi += 1; } }\n";
  };
  const std::string forward = layer("a") + layer("b");
  const size_t ifm = 0, ofm = 2;

  auto infer = test::compile(net + "schedule for n on h {\n  segment a, b;\n" + forward + "}\n");
  ASSERT_EQ(infer.diagnostics(), "");
  ScheduleResult ri = analyzeSchedule(infer.model, infer.model.schedules[0]);
  ASSERT_TRUE(ri.valid && ri.complete);
  EXPECT_EQ(ri.layers[0].levels[1].accesses.writes[ofm], 0);   // nobody else reads a
  EXPECT_EQ(ri.layers[1].levels[1].accesses.reads[ifm], 0);

  auto train = compileTrain(net + "schedule for n on h {\n  segment a, b;\n" + forward + layer("b__dgrad") +
                            layer("b__wgrad") + layer("a__wgrad") + "}\n");
  ASSERT_EQ(train.diagnostics(), "");
  ScheduleResult rt = analyzeSchedule(train.model, train.model.schedules[0]);
  ASSERT_TRUE(rt.valid && rt.complete);
  EXPECT_EQ(rt.layers[0].levels[1].accesses.writes[ofm], 6);   // b__wgrad reads it from DRAM
  EXPECT_EQ(rt.layers[1].levels[1].accesses.reads[ifm], 0);
}

TEST(Training, DataGradientDropsItsPaddingWords) {
  // A ceil-mode max pool (X=5, R=2, stride 2 -> Xo = ceil(3/2) + 1 = 3) whose
  // last window reaches one word past the input: windows [0,2) [2,4) [4,6).
  // Its data gradient writes a's gradient window by window from REGF; the
  // padding word 5 is dropped at the top level, not written to DRAM (found by
  // the simulator: the analysis wrote 6 words and read 1 back as a partial sum).
  auto c = compileTrain(R"(network n { input x [C=1, X=5]; a = conv(x, K=1, R=1, S=1); p = maxpool(a, R=2, S=1, stride=2, ceil=true); }
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4; access_energy = 1 pJ; }
  level DRAM { access_energy = 100 pJ; bandwidth = 2 B/cycle; }
}
schedule for n on h {
  layer p__dgrad { REGF { tensor ifm [Xi=2]; tensor ofm [Xo=1]; update Xo += 1, Xi += 2; } }
})");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  int dgrad = -1;
  for (size_t i = 0; i < net.layers.size(); ++i)
    if (net.layers[i].name == "p__dgrad")
      dgrad = static_cast<int>(i);
  ASSERT_GE(dgrad, 0);
  ScheduleResult r = analyzeSchedule(c.model, c.model.schedules[0]);
  const LayerResult &lr = r.layers.at(static_cast<size_t>(dgrad));
  ASSERT_TRUE(lr.complete && lr.valid);
  const size_t ifm = 0, ofm = 2;
  const auto &dram = lr.levels[1].accesses, &regf = lr.levels[0].accesses;
  // Each of a's 5 words is written once (no window overlaps another), never read back.
  EXPECT_EQ(dram.writes[ifm], 5);
  EXPECT_EQ(dram.reads[ifm], 0);
  // p's gradient: one word per window.
  EXPECT_EQ(dram.reads[ofm], 3);
  // REGF reads a's gradient at each of the 6 window points and reads out the 5 data words.
  EXPECT_EQ(regf.reads[ifm], 6 + 5);
  EXPECT_TRUE(lr.exactCounts);
}

TEST(Training, WeightGradientOfPartialTilesReadsNoPartialSums) {
  // Found by the whole-stdlib verdict (the U-Net's up1_upsample_conv__wgrad
  // on eyeriss_pspad, its schedule as the solver wrote it): K = 1280 in
  // stacks of 2 x 19 leaves partial tiles, and the write-backs, a quotient,
  // came out a few bits above the words' first visits: the analysis read
  // 1.9e-9 partial sums back from DRAM where the kernel reads none, and the
  // counts it claims exact differed.
  auto c = compileTrain(R"(import "stdlib/hw/eyeriss_pspad.dfl";
network n { input x [C=1280, X=32, Y=32]; c = conv(x, K=1280, R=3, pad=1); }
schedule for n on eyeriss_pspad {
  layer c__wgrad {
    REGF {
      tensor ifm [N=1, C=1, Xi=3, Yi=3];
      tensor wgt [K=19, C=1, R=3, S=3];
      tensor ofm [N=1, K=19, Xo=1, Yo=1];
      stack C += 1 repl 14;
      stack K += 19 repl 2;
      stack Yo += 1, Yi += 1 repl 4;
      update Xo += 1, Xi += 1;
      update Yo += 4, Yi += 4;
    }
    GBUF {
      tensor ifm [N=1, C=14, Xi=34, Yi=34];
      tensor wgt [K=38, C=14, R=3, S=3];
      tensor ofm [N=1, K=38, Xo=32, Yo=32];
      update C += 14;
      update K += 38;
    }
  }
})", {test::kStdlibRoot});
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  ASSERT_EQ(net.layers.back().name, "c__wgrad");
  ScheduleResult r = analyzeSchedule(c.model, c.model.schedules[0]);
  const LayerResult &lr = r.layers.back();
  ASSERT_TRUE(lr.complete && lr.valid);
  ASSERT_TRUE(lr.exactCounts);
  const size_t wgt = 1;
  const auto &dram = lr.levels[2].accesses;
  // dW bypasses the GBUF. Its words move only with the GBUF's updates of C
  // and K, outside every update of a dim it sums over (Xo, Yo): each word's
  // sum ends in one residency, written once, 1280 * 1280 * 3 * 3, and never
  // read back.
  EXPECT_NEAR(dram.writes[wgt], 1280.0 * 1280 * 9, 1e-6);
  EXPECT_EQ(dram.reads[wgt], 0);
}

TEST(Training, StridedGradientVisitsOnlyItsWindows) {
  // A 1x1 conv of stride 2 (X=8 -> Xo=4): its data gradient writes a's
  // gradient at 0, 2, 4, 6 only. One PE holds one word, Xo inside K (2
  // steps); the GBUF holds the whole window [0, 7).
  auto c = compileTrain(R"(network n { input x [C=1, X=8]; a = conv(x, K=1, R=1, S=1); b = conv(a, K=2, R=1, S=1, stride=2); }
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; access_energy = 1 pJ; }
  level GBUF { capacity = 1024 B; access_energy = 10 pJ; }
  level DRAM { access_energy = 100 pJ; bandwidth = 2 B/cycle; }
}
schedule for n on h {
  layer b__dgrad {
    REGF { tensor ifm [Xi=1]; tensor wgt [K=1]; tensor ofm [K=1, Xo=1]; update Xo += 1, Xi += 2; update K += 1; }
    GBUF { tensor ifm [Xi=7]; tensor wgt [K=2]; tensor ofm [K=2, Xo=4]; }
  }
})");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  ScheduleResult r = analyzeSchedule(c.model, c.model.schedules[0]);
  size_t found = 0;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    if (net.layers[i].name != "b__dgrad")
      continue;
    ++found;
    const LayerResult &lr = r.layers[i];
    ASSERT_TRUE(lr.complete && lr.valid);
    const size_t ifm = 0;
    // 8 one-word residencies (4 Xo x 2 K) written back into the GBUF; the
    // first visit of each of the 4 words it holds reads nothing, the other 4
    // read a partial sum back (the analysis once took all 7 words of the
    // window as visited: 1 read back).
    EXPECT_EQ(lr.levels[1].accesses.writes[ifm], 8);
    EXPECT_EQ(lr.levels[1].accesses.reads[ifm], 4 + 7);   // + the 7 read out to DRAM
    // The GBUF's one residency writes its window back: 7 words, none read back.
    EXPECT_EQ(lr.levels[2].accesses.writes[ifm], 7);
    EXPECT_EQ(lr.levels[2].accesses.reads[ifm], 0);
  }
  EXPECT_EQ(found, 1u);
}

// KAPLA's descent on backward layers, against the exhaustive search of the
// same space on a machine small enough that it finishes (no candidate cap).
// A weight-gradient layer's output is the weight tensor and its reduction dim
// is N: it stays put only with N innermost at the node level, and the greedy
// must grow the tiles that keep it there. Choosing the loop orders only after
// the stacking and caching passes (the descent before it also ran the passes
// under each loop order, KAPLA's Algorithm 1) left f1__wgrad and f2__wgrad
// about 35 % above the optimum here: the node tiles refetched an operand from
// DRAM once per weight tile.
TEST(Training, KaplaNearExhaustiveOnBackwardLayers) {
  auto c = compileTrain(R"(network m {
  batch N = 8;
  input x [C=24];
  f1 = fc(x, K=30);
  f2 = fc(f1, K=20);
}
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 16 B; array = 2 x 2; access_energy = 0.1 pJ; transfer = multicast, systolic; }
  level GBUF { capacity = 512 B; array = 2 x 2; access_energy = 3 pJ; transfer = multicast, sharing; }
  level DRAM { access_energy = 400 pJ; bandwidth = 8 B/cycle; }
  noc { hop_energy = 10 pJ; topology = mesh; }
})");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  const Hardware &hw = c.model.hardware[0];
  int checked = 0;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer &layer = net.layers[i];
    if (layer.output == TensorRole::Ofm)
      continue;   // forward layers: SolverTest
    SCOPED_TRACE(layer.name);
    SolveFailure why;
    IntraLayerOptions o;
    IntraLayerStats ks, es;
    auto k = solveLayer(net, static_cast<int>(i), hw, nullptr, o, ks, why);
    o.search = IntraLayerSearch::Exhaustive;
    o.maxCandidates = 0;
    auto e = solveLayer(net, static_cast<int>(i), hw, nullptr, o, es, why);
    ASSERT_TRUE(k && e) << why;
    EXPECT_FALSE(es.capped);
    // A floor no schedule undercuts: the MACs (N*C*K at 1 pJ) and every word
    // of the three tensors crossing DRAM once (400 pJ): f2's gradients are
    // 8*30 + 8*20 + 30*20 = 1000 words, f1's 8*24 + 8*30 + 24*30 = 1152.
    const double macs = static_cast<double>(layer.macs) * 8;
    const double words = layer.name.starts_with("f2") ? 1000 : 1152;
    EXPECT_GE(e->result.energyPj, macs + words * 400);
    // Exhaustive is optimal in the space KAPLA searches; KAPLA within the
    // 5 % docs/solver.md states.
    EXPECT_LE(e->result.energyPj, k->result.energyPj * (1 + 1e-12));
    EXPECT_LE(k->result.energyPj, e->result.energyPj * 1.05)
        << "KAPLA " << k->result.energyPj << " pJ, exhaustive " << e->result.energyPj << " pJ";
    ++checked;
  }
  EXPECT_EQ(checked, 3);   // f2__dgrad, f2__wgrad, f1__wgrad
}
