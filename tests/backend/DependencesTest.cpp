// The RAW and WAR relations of pipelined regions (backend/polyhedral/
// Dependences.h) against hand derivations. Every region here steps through
// its layer one output row at a time (one step = one row of Yo, the whole
// of every other dim), so a step number is a row and each expectation is a
// statement about rows derived in the comment beside it.
#include "backend/Jit.h"
#include "backend/lcu/Lcu.h"
#include "backend/polyhedral/Dependences.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <string>

namespace dfl::sim {
namespace {

using Steps = std::vector<int64_t>;

/// Steps over the layer's output rows, `rows` a step; with `perSample`,
/// the batch walked outermost one sample a step.
StepSpace rowSteps(const Layer &layer, int64_t rows = 1, bool perSample = false) {
  StepSpace s;
  s.layer = layer.name;
  s.nest = &layer.nest;
  s.output = layer.output;
  bool channelWise = layer.channelWise();
  for (Dim d : kIndependentDims)
    if (!(channelWise && d == Dim::K))
      s.dims.push_back(d);
  s.bounds = layer.bounds;
  s.extent = layer.bounds;
  std::string why;
  EXPECT_TRUE(planIterDims(layer.nest, channelWise, s.iterDims, why)) << why;
  if (perSample) {
    PlanMove n;
    at(n.amount, Dim::N) = 1;
    n.count = at(layer.bounds, Dim::N);
    at(s.extent, Dim::N) = 1;
    s.updates.push_back(n);
  }
  PlanMove y;
  at(y.amount, Dim::Yo) = rows;
  y.count = (at(layer.bounds, Dim::Yo) + rows - 1) / rows;
  at(s.extent, Dim::Yo) = rows;
  s.updates.push_back(y);
  return s;
}

/// Channels one a step (concatenation): K for a conv, C for a channel-wise layer.
StepSpace channelSteps(const Layer &layer) {
  StepSpace s = rowSteps(layer);
  s.updates.clear();
  at(s.extent, Dim::Yo) = at(layer.bounds, Dim::Yo);
  Dim ch = layer.channelWise() ? Dim::C : Dim::K;
  PlanMove c;
  at(c.amount, ch) = 1;
  c.count = at(layer.bounds, ch);
  at(s.extent, ch) = 1;
  s.updates.push_back(c);
  return s;
}

struct Segment {
  test::Compiled comp;
  std::unique_ptr<PipelineDependences> deps;
  const EdgeDependences &edge(const std::string &from, const std::string &to) const {
    for (const EdgeDependences &e : deps->edges())
      if (deps->regions()[static_cast<size_t>(e.producer)].layer == from &&
          deps->regions()[static_cast<size_t>(e.consumer)].layer == to)
        return e;
    ADD_FAILURE() << "no edge " << from << " -> " << to;
    return deps->edges().front();
  }
};

/// The regions of `network` (a network block alone), each stepped by `steps`.
Segment derive(const std::string &network, const std::function<StepSpace(const Layer &)> &steps = [](const Layer &l) {
  return rowSteps(l);
}) {
  Segment s;
  s.comp = test::compile(network);
  EXPECT_EQ(s.comp.diagnostics(), "");
  std::vector<StepSpace> regions;
  for (const Layer &l : s.comp.model.networks.at(0).layers)
    regions.push_back(steps(l));
  s.deps = std::make_unique<PipelineDependences>(std::move(regions));
  return s;
}

TEST(DependencesTest, Conv3x3FeedingConv3x3) {
  Segment s = derive("network n { input x [C=2, X=8, Y=8]; a = conv(x, K=2, R=3, S=3, pad=1);"
                     " b = conv(a, K=2, R=3, S=3, pad=1); }");
  const EdgeDependences &e = s.edge("a", "b");
  EXPECT_EQ(e.tensor, "a");
  // b's row y reads a's rows y−1 … y+1 (pad 1), clipped to 0 … 7: it needs
  // a's rows up to min(y+1, 7); the RAW relation, non-decreasing already, is the same.
  Steps need = {1, 2, 3, 4, 5, 6, 7, 7};
  EXPECT_EQ(e.needs, need);
  EXPECT_EQ(e.rawWait, need);
  // a's row i is read by b's rows i−1 … i+1: the last is min(i+1, 7).
  EXPECT_EQ(e.lastReader, need);
  EXPECT_EQ(e.warWait, need);
  // One row of a: K·X = 2·8 = 16 elements.
  EXPECT_EQ(e.words, Steps(8, 16));
  // To write row i, rows up to i−depth must be dead; b frees row i−depth
  // after its row i−depth+1, which needs a's row i−depth+2 <= i−1: depth 3
  // (the three rows a 3-row window spans).
  EXPECT_EQ(e.depth, 3);
}

TEST(DependencesTest, Stride2) {
  Segment s = derive("network n { input x [C=2, X=8, Y=8]; a = conv(x, K=2, R=3, S=3, pad=1);"
                     " b = conv(a, K=2, R=3, S=3, stride=2, pad=1); }");
  const EdgeDependences &e = s.edge("a", "b");
  // b has ⌊(8 + 2 − 3)/2⌋ + 1 = 4 rows; its row y reads a's rows 2y−1 … 2y+1.
  EXPECT_EQ(e.needs, (Steps{1, 3, 5, 7}));
  EXPECT_EQ(e.rawWait, (Steps{1, 3, 5, 7}));
  // a's row i is read by rows y with 2y−1 <= i <= 2y+1: the last is
  // ⌊(i+1)/2⌋, at most 3.
  EXPECT_EQ(e.lastReader, (Steps{0, 1, 1, 2, 2, 3, 3, 3}));
  // depth >= need(lastReader(i)) − i + 1: at odd i = 1, 3, 5 that is 2·⌊(i+1)/2⌋ + 1 − i + 1 = 3.
  EXPECT_EQ(e.depth, 3);
}

TEST(DependencesTest, PoolBetweenConvs) {
  Segment s = derive("network n { input x [C=2, X=8, Y=8]; a = conv(x, K=2, R=3, S=3, pad=1);"
                     " p = maxpool(a, R=2, stride=2); b = conv(p, K=2, R=3, S=3, pad=1); }");
  const EdgeDependences &ap = s.edge("a", "p"), &pb = s.edge("p", "b");
  // p's row y is the max over a's rows 2y and 2y+1.
  EXPECT_EQ(ap.needs, (Steps{1, 3, 5, 7}));
  // a's row i is read by p's row ⌊i/2⌋ alone.
  EXPECT_EQ(ap.lastReader, (Steps{0, 0, 1, 1, 2, 2, 3, 3}));
  // Even i: p's row i/2 needs a's row i+1: depth 2; odd i: 1.
  EXPECT_EQ(ap.depth, 2);
  // b (4 rows) reads p's rows y−1 … y+1, clipped to 0 … 3.
  EXPECT_EQ(pb.needs, (Steps{1, 2, 3, 3}));
  EXPECT_EQ(pb.depth, 3);
  // One row of p: 2 channels · 4 columns.
  EXPECT_EQ(pb.words, Steps(4, 8));
  // No edge skips a layer here: b reads p only.
  EXPECT_EQ(s.deps->edges().size(), 2u);
}

TEST(DependencesTest, ResidualAddJoinsTwoPaths) {
  Segment s = derive("network n { input x [C=2, X=8, Y=8]; a = conv(x, K=2, R=3, S=3, pad=1);"
                     " b = conv(a, K=2, R=3, S=3, pad=1); r = add(a, b); }");
  ASSERT_EQ(s.deps->edges().size(), 3u);
  const EdgeDependences &ar = s.edge("a", "r"), &br = s.edge("b", "r");
  // r's row y adds a's row y and b's row y.
  Steps same = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(ar.needs, same);
  EXPECT_EQ(br.needs, same);
  EXPECT_EQ(ar.lastReader, same);
  // On the direct edge alone one row would do; but r's row y also waits for
  // b's row y, which needs a's row min(y+1, 7): a must keep rows y … y+1,
  // depth 2 (with 1, a waits on r, r on b, b on a).
  EXPECT_EQ(ar.depth, 2);
  EXPECT_EQ(br.depth, 1);
}

TEST(DependencesTest, ConcatReadsDisjointChannels) {
  Segment s = derive("network n { input x [C=2, X=4, Y=4]; a = conv(x, K=2, R=1, S=1);"
                     " b = conv(x, K=3, R=1, S=1); c = concat(a, b); }",
                     channelSteps);
  const EdgeDependences &ac = s.edge("a", "c"), &bc = s.edge("b", "c");
  // c's channels 0, 1 are a's (steps 0, 1), 2 … 4 are b's 0 … 2.
  EXPECT_EQ(ac.needs, (Steps{0, 1, -1, -1, -1}));
  EXPECT_EQ(bc.needs, (Steps{-1, -1, 0, 1, 2}));
  // RAW is cumulative: from step 1 on c has needed a's step 1; before step
  // 2 it needs nothing of b.
  EXPECT_EQ(ac.rawWait, (Steps{0, 1, 1, 1, 1}));
  EXPECT_EQ(bc.rawWait, (Steps{-1, -1, 0, 1, 2}));
  EXPECT_EQ(ac.lastReader, (Steps{0, 1}));
  EXPECT_EQ(bc.lastReader, (Steps{2, 3, 4}));
  // One channel: 4·4 = 16 elements.
  EXPECT_EQ(bc.words, Steps(3, 16));
}

TEST(DependencesTest, BatchStreamedThrough) {
  // Two samples, each region walking the batch outermost and rows inside.
  Segment s = derive("network n { batch N = 2; input x [C=1, X=4, Y=4]; a = conv(x, K=1, R=3, S=3, pad=1);"
                     " b = conv(a, K=1, R=3, S=3, pad=1); }",
                     [](const Layer &l) { return rowSteps(l, 1, true); });
  const EdgeDependences &e = s.edge("a", "b");
  // Step n·4 + y: sample n's row y needs sample n's rows up to min(y+1, 3),
  // step n·4 + min(y+1, 3); nothing of the other sample.
  EXPECT_EQ(e.needs, (Steps{1, 2, 3, 3, 5, 6, 7, 7}));
  EXPECT_EQ(e.lastReader, (Steps{1, 2, 3, 3, 5, 6, 7, 7}));
  EXPECT_EQ(e.depth, 3);
  // The element of a read by b's step 0 that a finalizes at its step 1:
  // sample 0, channel 0, some column, row 1.
  EXPECT_NE(s.deps->witness(0, 0, 1).find("a[0, 0, "), std::string::npos) << s.deps->witness(0, 0, 1);
  EXPECT_EQ(s.deps->witness(0, 0, 5), "");   // sample 1's row 1 is not read by sample 0
}

TEST(DependencesTest, TwoRowsPerStep) {
  Segment s = derive("network n { input x [C=1, X=8, Y=8]; a = conv(x, K=1, R=3, S=3, pad=1);"
                     " b = conv(a, K=1, R=3, S=3, pad=1); }",
                     [](const Layer &l) { return rowSteps(l, 2); });
  const EdgeDependences &e = s.edge("a", "b");
  // Step y covers rows 2y, 2y+1 and reads a's rows 2y−1 … 2y+2: a's step
  // ⌊(2y+2)/2⌋ = y+1, at most 3.
  EXPECT_EQ(e.needs, (Steps{1, 2, 3, 3}));
  EXPECT_EQ(e.words, Steps(4, 16));   // two rows of 8
}

} // namespace
} // namespace dfl::sim

// ---- the LCUs generated from these relations (backend/lcu/Lcu.h) ---------

namespace dfl::sim {
namespace {

/// (counter, value) per wait, (-1, step) per step: what an LCU called; a
/// wait for 0, which always holds, left out.
using Calls = std::vector<std::pair<int64_t, int64_t>>;

Calls callsOf(const Lcu &lcu, Jit &jit) {
  Calls calls;
  lcu.compile(jit)(
      &calls,
      [](void *c, int64_t counter, int64_t value) {
        if (value > 0)
          static_cast<Calls *>(c)->push_back({counter, value});
      },
      [](void *c, int64_t step) { static_cast<Calls *>(c)->push_back({-1, step}); });
  return calls;
}

TEST(LcuTest, Conv3x3ChainWaitsAsDerived) {
  Segment s = derive("network n { input x [C=2, X=8, Y=8]; a = conv(x, K=2, R=3, S=3, pad=1);"
                     " b = conv(a, K=2, R=3, S=3, pad=1); }");
  Jit jit;
  // b's row y needs a's rows up to min(y+1, 7): min(y+2, 8) of a's steps
  // done, on counter 0 (edge 0's producer).
  Calls b;
  for (int64_t y = 0; y < 8; ++y) {
    b.push_back({0, std::min<int64_t>(y + 2, 8)});
    b.push_back({-1, y});
  }
  Lcu lb(*s.deps, 1);
  EXPECT_EQ(callsOf(lb, jit), b);
  // a keeps depth 3 + 1 = 4 rows: its row i (i >= 4) overwrites row i−4,
  // whose last reader is b's row i−3: i−2 of b's steps done, on counter 1.
  // Rows 0 … 3 wait for nothing.
  Calls a;
  for (int64_t i = 0; i < 8; ++i) {
    if (i >= 4)
      a.push_back({1, i - 2});
    a.push_back({-1, i});
  }
  Lcu la(*s.deps, 0);
  EXPECT_EQ(callsOf(la, jit), a);
  // The C says the same.
  EXPECT_NE(lb.c().find("wait(ctx, 0, "), std::string::npos) << lb.c();
  EXPECT_NE(la.c().find("wait(ctx, 1, c0 <= 3 ? 0 : c0 - 2); /* WAR a -> b: b's steps done (buffer of 4 steps) */"),
            std::string::npos)
      << la.c();
}

TEST(LcuTest, WeakenedWaitIsOneShort) {
  Segment s = derive("network n { input x [C=2, X=8, Y=8]; a = conv(x, K=2, R=3, S=3, pad=1);"
                     " b = conv(a, K=2, R=3, S=3, pad=1); }");
  Jit jit;
  LcuOptions o;
  o.weakenedEdge = 0;
  Calls calls = callsOf(Lcu(*s.deps, 1, o), jit);
  ASSERT_FALSE(calls.empty());
  // Row 0 needs a's rows 0 and 1: 2 steps done; weakened, 1.
  EXPECT_EQ(calls.front(), (std::pair<int64_t, int64_t>{0, 1}));
}

} // namespace
} // namespace dfl::sim
