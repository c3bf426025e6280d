// The latency of a pipelined segment (docs/directives.md §8,
// scheduler/analysis/SegmentLatency.h) on segments whose timelines are derived by
// hand in the comments: a consumer whose first step needs the producer's
// last one, and two independent branches joined by an add.
#include "scheduler/analysis/Analysis.h"
#include "scheduler/analysis/SegmentLatency.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dfl {
namespace {

ScheduleResult analyze(const std::string &text, test::Compiled &comp) {
  comp = test::compile(text + test::onePeNodes(4, 128));
  EXPECT_EQ(comp.diagnostics(), "");
  return analyzeSchedule(comp.model, comp.model.schedules.at(0));
}

const SegmentResult &pipelinedSegment(const ScheduleResult &r) {
  for (const SegmentResult &s : r.segments)
    if (s.pipelined)
      return s;
  ADD_FAILURE() << "no pipelined segment";
  return r.segments.at(0);
}

TEST(SegmentLatencyTest, ConsumerNeedingTheLastStepWaitsForTheWholeProducer) {
  // 3x3 convs over 8x8 (pad 1): a walks its output row by row (update Yo:
  // 8 steps of a row, 8·9 = 72 MACs), b column by column (update Xo). b's
  // first column xo = 0 reads a's columns 0..1 of every row 0..7: a's last
  // step. Each layer does 64·9 = 576 MACs on its PE: b starts at 576 and
  // ends at 576 + 576 = 1152. (The old perfect-overlap formula, k = 8:
  // 1152/8 + 7·576/8 = 648.)
  test::Compiled comp;
  ScheduleResult r = analyze(R"(
network n { input x [C=1, X=8, Y=8]; a = conv(x, K=1, R=3, S=3, pad=1); b = conv(a, K=1, R=3, S=3, pad=1); }
schedule for n on h {
  segment a, b pipelined;
  layer a {
    REGF { tensor ifm [Xi=10, Yi=3]; tensor wgt [R=3, S=3]; tensor ofm [Xo=8, Yo=1]; }
    GBUF { tensor ifm [Xi=10, Yi=3]; tensor wgt [R=3, S=3]; tensor ofm [Xo=8, Yo=1]; update Yo += 1, Yi += 1; }
  }
  layer b {
    REGF { tensor ifm [Xi=3, Yi=10]; tensor wgt [R=3, S=3]; tensor ofm [Xo=1, Yo=8]; }
    GBUF { tensor ifm [Xi=3, Yi=10]; tensor wgt [R=3, S=3]; tensor ofm [Xo=1, Yo=8]; update Xo += 1, Xi += 1; }
  }
}
)",
                             comp);
  ASSERT_TRUE(r.valid && r.complete);
  EXPECT_DOUBLE_EQ(r.layers[0].latencyCycles, 576);
  EXPECT_DOUBLE_EQ(r.layers[1].latencyCycles, 576);
  EXPECT_DOUBLE_EQ(pipelinedSegment(r).latencyCycles, 576 + 576);

  // The edge: b's step 0 needs a's steps 0..7, all 8.
  const Network &net = comp.model.networks[0];
  const Hardware &hw = comp.model.hardware[0];
  std::vector<const LayerScheduleModel *> schedules(2);
  for (const LayerScheduleModel &ls : comp.model.schedules[0].layers)
    schedules.at(static_cast<size_t>(ls.layer)) = &ls;
  PipelinedTiming t = pipelinedTiming(net, hw, {0, 1}, schedules, {&r.layers[0], &r.layers[1]});
  ASSERT_EQ(t.edges.size(), 1u);
  EXPECT_TRUE(t.edges[0].derived);
  EXPECT_EQ(t.edges[0].samples.front().step, 0);
  EXPECT_EQ(t.edges[0].samples.front().needs, 7);
  EXPECT_EQ(t.regions[1].steps, 8);
  EXPECT_DOUBLE_EQ(t.regions[1].start, 576);
  EXPECT_DOUBLE_EQ(t.cycles, 1152);
}

TEST(SegmentLatencyTest, IndependentBranchesOverlap) {
  // a and b, 3-tap convs over x (10 -> 8), both read only the segment's
  // input: they run side by side from cycle 0, 8 steps of 3 MACs each, and
  // end at 24. s = add(a, b) does 8 ops, a step of 1 per output; its step j
  // reads a's and b's output j, done at 3(j+1): it starts at 3 and its last
  // step runs 24..25. The segment takes 25: the longest path, not the sum
  // of the branches (the old formula chained them: (24 + 24 + 8)/8 +
  // 7·24/8 = 28).
  test::Compiled comp;
  ScheduleResult r = analyze(R"(
network n {
  input x [C=1, X=10];
  a = conv(x, K=1, R=3, S=1);
  b = conv(x, K=1, R=3, S=1);
  s = add(a, b);
}
schedule for n on h {
  segment a, b, s pipelined;
)" + test::stepsAlongX("a", "tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1];") +
                                 test::stepsAlongX("b", "tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1];") +
                                 test::stepsAlongX("s", "tensor ifm [Xi=1]; tensor ofm [Xo=1];") + "}\n",
                             comp);
  ASSERT_TRUE(r.valid && r.complete);
  EXPECT_DOUBLE_EQ(r.layers[0].latencyCycles, 24);
  EXPECT_DOUBLE_EQ(r.layers[1].latencyCycles, 24);
  EXPECT_DOUBLE_EQ(r.layers[2].latencyCycles, 8);
  EXPECT_DOUBLE_EQ(pipelinedSegment(r).latencyCycles, 25);
}

} // namespace
} // namespace dfl
