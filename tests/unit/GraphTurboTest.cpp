// GraphTurbo on cluster/core DSAs (scheduler/graph/, docs/graphturbo.md):
// SplitInfo and Eq. 1, the recomputation guard, each merging pattern with its
// preconditions, and instance ordering, on small graphs whose numbers are
// derived by hand in the comments (8-bit words: one byte per element).
#include "TestUtil.h"

#include "model/Geometry.h"
#include "scheduler/graph/GraphTurbo.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace dfl;
using namespace dfl::graph;

namespace {

/// One cluster of 2 cores, `lb` bytes of LB each (no weight buffer), GB
/// 8 B/cycle, a matrix unit of 4 MACs and a vector unit of 2 ops per cycle,
/// DDR `ddr` GB/s at 1 GHz (so `ddr` B/cycle).
std::string dsa(int lb, int ddr = 1) {
  return "hardware h { word = 8 bit; frequency = 1 GHz;\n"
         "  cluster { count = 1; cores = 2; gb = 1 MiB; gb_bandwidth = 8 B/cycle; }\n"
         "  core { lb = " + std::to_string(lb) + " B; }\n"
         "  unit m { kind = matrix; rate = 4; }\n"
         "  unit v { kind = vector; rate = 2; }\n"
         "  ddr { bandwidth = " + std::to_string(ddr) + " GB/s; }\n}\n";
}

struct Fixture {
  test::Compiled c;
  std::unique_ptr<GraphView> g;
  explicit Fixture(const std::string &text) : c(test::compile(text)) {
    EXPECT_EQ(c.diagnostics(), "");
    g = std::make_unique<GraphView>(c.model.networks.at(0), c.model.dsaHardware.at(0));
  }
  int layer(const std::string &name) const { return c.model.networks[0].findLayer(name); }
};

std::vector<std::vector<std::string>> groups(const Fixture &f, const SubGraphSet &set) {
  std::vector<std::vector<std::string>> out;
  for (const SubGraph &sg : set.subGraphs()) {
    out.emplace_back();
    for (int l : sg.layers)
      out.back().push_back(f.c.model.networks[0].layers[static_cast<size_t>(l)].name);
  }
  return out;
}

// A 1x1 conv, batch 2: x [N=2, C=8, X=16] -> a [N=2, K=8, X=16, Y=1].
const char *kOneConv = "network n { batch N = 2; input x [C=8, X=16]; a = conv(x, K=8, R=1); }\n";
// Two 1x1 convs, batch 1: x [C=4, X=16] -> a -> b, each 64 elements.
const char *kTwoConvs = "network n { input x [C=4, X=16]; a = conv(x, K=4, R=1); b = conv(a, K=4, R=1); }\n";

} // namespace

TEST(DsaHardware, StdlibTemplate) {
  test::Compiled c = test::compile("import \"hw/dsa_4x8.dfl\";", {}, {test::kStdlibRoot + "/stdlib"});
  ASSERT_EQ(c.diagnostics(), "");
  ASSERT_EQ(c.model.dsaHardware.size(), 1u);
  const DsaHardware &hw = c.model.dsaHardware[0];
  EXPECT_EQ(hw.clusters, 4);            // the paper's Eq. (2): d = 4
  EXPECT_EQ(hw.coresPerCluster, 8);     // c = 8
  EXPECT_EQ(hw.lbBytes, 64 * 1024);     // 64 KB L1
  EXPECT_EQ(hw.gbBytes, 8 << 20);       // 8 MB LLB
  EXPECT_DOUBLE_EQ(hw.ddrBytesPerSecond, 136e9);
  // 8 cores x (64 KiB - 16 KiB weight buffer); 136 GB/s at 1 GHz over the
  // clusters at work: 34 B/cycle each when all 4 run, 136 when one does.
  EXPECT_EQ(hw.clusterLbBytes(), 8 * 48 * 1024);
  EXPECT_DOUBLE_EQ(hw.ddrBytesPerCyclePerCluster(4), 34.0);
  EXPECT_DOUBLE_EQ(hw.ddrBytesPerCyclePerCluster(1), 136.0);
  EXPECT_DOUBLE_EQ(hw.rate(DsaUnitKind::Matrix), 512);
  EXPECT_DOUBLE_EQ(hw.rate(DsaUnitKind::Vector), 16 + 128);
}

// Algorithm 1 on one conv. peak = x (2*8*16 = 256 B) + a (256 B) = 512 B;
// the cluster's LB is 2 x 128 = 256 B, so v >= 2 (⌈512/v⌉ <= 256). The
// candidates 1, 2, 4, 8, 9, … stop at 2 on n (extent 2), k (8) and x (16);
// y (extent 1) cannot split. Each split cuts only the conv: n_d = 1. The
// guard: a k-split makes both pieces read all of x (256 B more, 32 cycles at
// 8 B/cycle) against the output's round trip through the GB it saves
// (2 x 256 / 8 = 64 cycles): kept. Eq. (1) ties on n_d and f_d and takes
// the outermost: n.
TEST(GraphTurbo, SplitInfoAndEq1OnOneConv) {
  Fixture f(std::string(kOneConv) + dsa(128));
  SplitResult r = splitInfo(*f.g, {f.layer("a")});
  EXPECT_EQ(r.peakBytes, 512);
  EXPECT_EQ(r.info, (std::vector<Split>{{1, 2, 0}, {1, 2, 1}, {1, 2, 2}}));
  ASSERT_TRUE(r.best);
  EXPECT_EQ(*r.best, (Split{1, 2, 0}));
}

// The same conv with 64 B LBs (128 B per cluster): v >= 4. n (extent 2) has
// no such candidate. k: f = 4, but the pieces read x three more times
// (768 B, 96 cycles) against 64 cycles saved: the guard drops it. x: f = 4;
// a 1x1 window has no halo, but every piece reads all 64 B of weights (three
// more reads, 24 cycles): kept. So Eq. (1) has x alone.
TEST(GraphTurbo, RecomputationGuardDropsAChannelSplitOfOneConv) {
  Fixture f(std::string(kOneConv) + dsa(64));
  SplitResult r = splitInfo(*f.g, {f.layer("a")});
  EXPECT_EQ(r.info, (std::vector<Split>{{1, 4, 2}}));
  EXPECT_EQ(r.rejectedByRecomputation, (std::vector<int>{1}));
  EXPECT_EQ(r.factor(), 4);
}

// Two convs as one sub-graph. peak: a's step holds x + a = 128 B, b's a + b
// = 128 B; LB per cluster 2 x 32 = 64 B, so f = 2 on k and on x (n has
// extent 1). Cutting b's k leaves a whole (b reduces over all of a's
// channels): n_d = 1 (b alone); cutting x cuts a too: n_d = 2. Eq. (1)
// prefers more operators over the outer dimension: x.
// The k-split's guard: a computed twice (256 MACs more at 4 x 2 per cycle:
// 32 cycles), x read twice (64 B, 8 cycles), a's weights read twice (16 B,
// 2 cycles): 42 against b's GB round trip (16 cycles) plus a's DDR round
// trip at 1 B/cycle (128 cycles): kept.
TEST(GraphTurbo, Eq1PrefersTheSplitCuttingMoreOperators) {
  Fixture f(std::string(kTwoConvs) + dsa(32));
  SplitResult r = splitInfo(*f.g, {f.layer("a"), f.layer("b")});
  EXPECT_EQ(r.peakBytes, 128);
  EXPECT_EQ(r.info, (std::vector<Split>{{1, 2, 1}, {2, 2, 2}}));
  ASSERT_TRUE(r.best);
  EXPECT_EQ(*r.best, (Split{2, 2, 2}));
}

// The same with DDR at 1000 B/cycle: fusing saves a's round trip of 0.128
// cycles only, so the k-split's 42 cycles exceed the 16.128 it saves and the
// guard drops it; the x-split costs the weights' extra read (32 B, 4 cycles).
TEST(GraphTurbo, RecomputationGuardDropsARecomputingSplit) {
  Fixture f(std::string(kTwoConvs) + dsa(32, 1000));
  SplitResult r = splitInfo(*f.g, {f.layer("a"), f.layer("b")});
  EXPECT_EQ(r.info, (std::vector<Split>{{2, 2, 2}}));
  EXPECT_EQ(r.rejectedByRecomputation, (std::vector<int>{1}));
}

// Straight pattern: a's only consumer is b, b's only producer a. f(a) = f(b)
// = 2 (each 128 B on 64 B), and the group's f = 2 <= f(b): merged.
TEST(GraphTurbo, StraightMerge) {
  Fixture f(std::string(kTwoConvs) + dsa(32));
  SubGraphSet set(*f.g);
  EXPECT_EQ(set.straightMerge(), 1);
  EXPECT_EQ(groups(f, set), (std::vector<std::vector<std::string>>{{"a", "b"}}));
}

// A matmul's second operand (role wgt) produced by a layer is data, not
// weights: k = fc(x) feeds s = matmul(q, k), so s depends on k (an edge of the
// graph, whose instance order and GB/DDR traffic follow it) and a piece of s
// needs k's output (its halo), as it needs q's. Before, GraphTurbo priced k as
// s's weights from DDR and let s run without k's producer. The fc's own
// weights (`k__wgt`) stay weights.
TEST(GraphTurbo, MatmulSecondOperandIsAProducerEdge) {
  Fixture f("network n { input x [C=8, X=4]; q = fc(x, K=8); k = fc(x, K=8); s = matmul(q, k); }\n" + dsa(1024));
  const int q = f.layer("q"), k = f.layer("k"), s = f.layer("s");
  std::vector<int> producers = f.g->producers(s);
  std::sort(producers.begin(), producers.end());
  EXPECT_EQ(producers, (std::vector<int>{q, k}));
  EXPECT_EQ(f.g->consumers(k), (std::vector<int>{s}));
  const Network &net = f.c.model.networks[0];
  const LoopNest &nest = net.layers[static_cast<size_t>(s)].nest;
  IntervalBox all;   // the whole of s's output
  for (int64_t e : nest.accessesOf(nest.output)[0]->extent)
    all.push_back({0, e - 1});
  const Halos h = propagateHalos(net, {k, s}, all);
  EXPECT_FALSE(boxEmpty(h.output.at(k)));   // s needs all of k: k computes it
  EXPECT_EQ(h.weights.count(s), 0u);        // s has no weights of its own
  EXPECT_EQ(h.weights.count(k), 1u);        // k's fc weights
  EXPECT_EQ(h.external.count(q), 1u);       // q is read from outside the list
}

// A down-sampling consumer stops the propagation (rule (i), first
// precondition). LB per cluster 2 x 24 = 48 B. a: 128 B needs v >= 3, so
// f = 4 (on x; its k-split reads x 3 more times, 24 cycles > 16 saved).
// p = maxpool(a, R=2, stride=2): a + p = 64 + 32 = 96 B, f = 2. f(p) = 2 <
// f(a) = 4: not merged.
TEST(GraphTurbo, DownSamplingStopsStraightMerge) {
  Fixture f("network n { input x [C=4, X=16]; a = conv(x, K=4, R=1); p = maxpool(a, R=2, S=1, stride=2); }\n" + dsa(24));
  SubGraphSet set(*f.g);
  EXPECT_EQ(set.subGraphs()[0].split.factor(), 4);
  EXPECT_EQ(set.subGraphs()[1].split.factor(), 2);
  EXPECT_EQ(set.straightMerge(), 0);
  EXPECT_EQ(set.subGraphs().size(), 2u);
}

// Branch pattern: b = add(a, x) has two paths (a and the input x); a's only
// consumer is b. LB per cluster 64 B. f(a) = 2 (x + a = 128 B); b: a + x +
// b = 192 B, f = 4 (v = 3 divides no extent: the next candidate is 4). The
// group holds x + a, then x + a + b: 192 B, f = 4 <= f(b), and f(b) >= f(a):
// merged.
TEST(GraphTurbo, BranchMerge) {
  Fixture f("network n { input x [C=4, X=16]; a = conv(x, K=4, R=1); b = add(a, x); }\n" + dsa(32));
  SubGraphSet set(*f.g);
  EXPECT_EQ(set.subGraphs()[0].split.factor(), 2);
  EXPECT_EQ(set.subGraphs()[1].split.factor(), 4);
  EXPECT_EQ(set.branchMerge(), 1);
  EXPECT_EQ(groups(f, set), (std::vector<std::vector<std::string>>{{"a", "b"}}));
}

// Diamond pattern: entry e, two paths p and q, exit o. The middle and the
// exit are grouped, the entry is not. LB per cluster 64 B: f(p) = f(q) = 2
// (e + p = 128 B), f(o) = 4 (p + q + o = 192 B); the group holds at most
// e + p + q or p + q + o = 192 B: f = 4 <= max(2, 2, 4) (rule (ii)).
TEST(GraphTurbo, DiamondMerge) {
  Fixture f("network n { input x [C=4, X=16]; e = conv(x, K=4, R=1); p = conv(e, K=4, R=1);\n"
            "  q = conv(e, K=4, R=1); o = add(p, q); }\n" + dsa(32));
  SubGraphSet set(*f.g);
  EXPECT_EQ(set.diamondMerge(), 1);
  EXPECT_EQ(groups(f, set), (std::vector<std::vector<std::string>>{{"e"}, {"p", "q", "o"}}));
  EXPECT_EQ(set.subGraphs()[1].split.factor(), 4);
}

// Instance ordering on two stages, A split in two, B in two, B_i reading A_i
// only (the other edges are redundant). Working sets: A_i 150 B, B_i 120 B
// (its input included); outputs: A_i 100 B, B_i none (network outputs).
//   BFS: A0, A1, B0, B1. At A1, A0's output waits: 150 + 100 = 250; at B0,
//        A1's: 120 + 100 = 220; peak 250.
//   Algorithm 3 (DFS): ready = [A0, A1]; the last, A1, goes first and makes
//        B1 ready; the last ready again, B1; then A0, B0. Nothing waits
//        across a step: peak 150.
TEST(GraphTurbo, InstanceOrderChangesPeakLb) {
  std::vector<Instance> inst(4);
  for (int i = 0; i < 2; ++i) {
    inst[static_cast<size_t>(i)].fp.peakBytes = 150;
    inst[static_cast<size_t>(i)].outBytes = 100;
    inst[static_cast<size_t>(i)].consumers = {2 + i};
    inst[static_cast<size_t>(2 + i)].fp.peakBytes = 120;
    inst[static_cast<size_t>(2 + i)].producers = {i};
  }
  std::vector<int> bfs = orderBfs(inst), dfs = orderDfs(inst);
  EXPECT_EQ(bfs, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(dfs, (std::vector<int>{1, 3, 0, 2}));
  EXPECT_EQ(peakLiveBytes(inst, bfs), 250);
  EXPECT_EQ(peakLiveBytes(inst, dfs), 150);
}

// Plain binding (Algorithm 4): 8, 4, 2, 1 cores from the outermost dimension
// in, each dividing its extent.
TEST(GraphTurbo, PlainBinding) {
  auto box = [](std::vector<int64_t> hi) { return Box{std::vector<int64_t>(hi.size(), 0), hi}; };
  EXPECT_EQ(plainBinding(box({16, 8, 4}), 8), (std::vector<int64_t>{8, 1, 1}));
  EXPECT_EQ(plainBinding(box({2, 8, 4}), 8), (std::vector<int64_t>{2, 4, 1}));
  EXPECT_EQ(plainBinding(box({3, 6, 5}), 8), (std::vector<int64_t>{1, 2, 1}));
}

// Every stdlib network this issue names that exists today schedules, and its
// order is a topological order of the instances with every instance once.
TEST(GraphTurbo, StdlibNetworksSchedule) {
  for (const char *net : {"resnet50", "mobilenet_v2", "bert_base", "googlenet"}) {
    test::Compiled c = test::compile(std::string("import \"nets/") + net + ".dfl\"; import \"hw/dsa_4x8.dfl\";",
                                     AnalyzeOptions{false, 32}, {test::kStdlibRoot + "/stdlib"});
    ASSERT_EQ(c.diagnostics(), "") << net;
    DsaComparison r = scheduleOnDsa(c.model.networks[0], c.model.dsaHardware[0]);
    EXPECT_GT(r.graphTurbo.totalCycles(), 0) << net;
    // Every instance is ordered once, after its producers.
    std::vector<int> pos(r.graphTurbo.instances.size(), -1);
    for (size_t k = 0; k < r.graphTurbo.order.size(); ++k)
      pos[static_cast<size_t>(r.graphTurbo.order[k])] = static_cast<int>(k);
    for (size_t i = 0; i < pos.size(); ++i) {
      ASSERT_GE(pos[i], 0) << net;
      for (int p : r.graphTurbo.instances[i].producers)
        EXPECT_LT(pos[static_cast<size_t>(p)], pos[i]) << net;
    }
  }
}

namespace {

/// One sub-graph per layer, unsplit, in topological order: the plans of the
/// tests below, built the way the baselines build theirs.
Plan layerPlan(const Fixture &f) {
  Plan p;
  for (int l = 0; l < f.g->layers(); ++l) {
    SubGraph sg{{l}, {}};
    sg.split.peakBytes = propagate(*f.g, {l}, f.g->outputBox(l)).peakBytes;
    p.subGraphs.push_back(sg);
  }
  p.instances = splitInstances(*f.g, p.subGraphs);
  p.order = orderBfs(p.instances);
  return p;
}

} // namespace

// Algorithm 4 and §3.5 on P = conv(x) read by A = add(P, x) and E = conv(P,
// K=1), 2 cores, order P, A, E (visited in reverse). E's output [1,1,16,1]
// binds plainly 1x1x2x1 (x across the cores), which cuts P along x:
// bind[P] = 1x1x2x1. A's [1,8,16,1] binds 1x2x1x1 (k), which cuts P along its
// channels: 1x2x1x1 ≠ bind[P], so P is declared in GB. P, not in LB, takes
// its plain binding 1x2x1x1. Both edges then copy from GB (two copy ops, no
// redistribution); A and E, the network's outputs, go to DDR.
TEST(GraphTurbo, BindingMismatchDeclaresTheProducerInGb) {
  Fixture f("network n { input x [C=8, X=16]; p = conv(x, K=8, R=1); a = add(p, x); e = conv(p, K=1, R=1); }\n" +
            dsa(4096));
  Plan plan = layerPlan(f);
  ASSERT_EQ(plan.order, (std::vector<int>{0, 1, 2}));
  bindAndConnect(*f.g, plan);
  EXPECT_EQ(plan.instances[0].scope, Scope::GB);
  EXPECT_EQ(plan.instances[0].binding, (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(plan.instances[1].binding, (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(plan.instances[2].binding, (std::vector<int64_t>{1, 1, 2, 1}));
  EXPECT_EQ(plan.instances[1].scope, Scope::DDR);
  EXPECT_EQ(plan.copyOps, 2);
  EXPECT_EQ(plan.redistributionOps, 0);
  EXPECT_EQ(plan.concatOps, 0);
}

// §4.3 on a = conv(x), b = conv(x), c = conv(x), p = add(b, c), d = add(a,
// p), every tensor 64 B, the LB 2 x 96 = 192 B. Liveness in tasks: a 0→4,
// b 1→3, c 2→3, p 3→4. At c (x + c = 128 B) a and b wait (128 B): 256 B >
// 192, so one must go; a lives longest (4 tasks against b's 2) and is spilled
// to the GB — by size they tie. Then p (b + c + p = 192 B) and d (a from the
// GB: p + d + a = 192 B) fit: one spill in all.
TEST(GraphTurbo, LongestLivenessIsSpilled) {
  Fixture f("network n { input x [C=4, X=16]; a = conv(x, K=4, R=1); b = conv(x, K=4, R=1);\n"
            "  c = conv(x, K=4, R=1); p = add(b, c); d = add(a, p); }\n" + dsa(96));
  Plan plan = layerPlan(f);
  ASSERT_EQ(plan.order, (std::vector<int>{0, 1, 2, 3, 4}));
  for (Instance &in : plan.instances) {
    in.binding = plainBinding(in.outBox, 2);
    in.declared = in.consumers.empty() ? Scope::DDR : Scope::LB;
  }
  plan.spillTo = Scope::GB;
  PlanCost cost = evaluate(*f.g, plan);
  EXPECT_EQ(cost.spills, 1);
  EXPECT_EQ(plan.instances[0].scope, Scope::GB);   // a
  EXPECT_EQ(plan.instances[1].scope, Scope::LB);   // b
  EXPECT_EQ(cost.peakLbBytes, 256);
}

// The DDR bandwidth is shared by the clusters at work, not by every cluster
// (issue 33: ResNet-50 at batch 1 took 1.455 ms on one cluster, 7.346 ms on
// 16). a = conv(x, K=4, R=1) on x [C=4, X=16], 8-bit words, d clusters of
// the dsa() cluster (2 cores, 4096 B LB each: everything fits), DDR 1 GB/s
// at 1 GHz: 1 B/cycle in all, r = 1/active per cluster, active = ⌈N/⌈N/d⌉⌉.
// One instance of the cluster's n = ⌈N/d⌉ samples on both cores, no overlap:
// 256·n MACs at 4 x 2 per cycle = 32·n cycles; weights 16 B, staged (2 x 16
// <= 1 MiB): DDR -> GB 16/r, GB -> LB 16/8 = 2; x in from DDR and a out to
// DDR, 64·n B each. So 2 + 16/r + max(32·n, 128·n/r) cycles:
//   d = 1, N = 1: r = 1                 2 + 16 + max(32, 128)  = 146
//   d = 4, N = 1: one active, r = 1     146 (578 when all 4 shared it)
//   d = 4, N = 2: two active, r = 1/2   2 + 32 + max(32, 256)  = 290
//   d = 4, N = 4: four active, r = 1/4  2 + 64 + max(32, 512)  = 578
//   d = 4, N = 5: n = 2, three active   2 + 48 + max(64, 768)  = 818
TEST(GraphTurbo, DdrBandwidthIsSharedByActiveClustersOnly) {
  struct Case {
    int clusters, batch;
    double cycles;
  };
  for (Case k : {Case{1, 1, 146}, Case{4, 1, 146}, Case{4, 2, 290}, Case{4, 4, 578}, Case{4, 5, 818}}) {
    std::string hw = dsa(4096);
    hw.replace(hw.find("count = 1;"), 10, "count = " + std::to_string(k.clusters) + ";");
    Fixture f("network n { batch N = " + std::to_string(k.batch) +
              "; input x [C=4, X=16]; a = conv(x, K=4, R=1); }\n" + hw);
    Plan plan = layerPlan(f);
    ASSERT_EQ(plan.instances.size(), 1u);
    plan.instances[0].binding = plainBinding(plan.instances[0].outBox, 2);
    plan.instances[0].declared = Scope::DDR;
    EXPECT_DOUBLE_EQ(evaluate(*f.g, plan).cycles, k.cycles) << k.clusters << " clusters, batch " << k.batch;
  }
}
