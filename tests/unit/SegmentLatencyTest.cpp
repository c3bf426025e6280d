// The latency of a pipelined segment (docs/directives.md §8,
// scheduler/analysis/SegmentLatency.h) on segments whose timelines are derived by
// hand in the comments: a consumer whose first step needs the producer's
// last one, and two independent branches joined by an add.
#include "scheduler/analysis/Analysis.h"
#include "scheduler/analysis/SegmentLatency.h"
#include "scheduler/analysis/StepBoxes.h"
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
  ScheduleResult r = analyze(test::kRowsAgainstColumns, comp);
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

  // Its buffer (scheduler/analysis/StepBoxes.h): every b step needs a's last
  // step (7); each of a's rows (8 words: one channel, 8 columns) is last read
  // by b's last column (7). The least deadlock-free buffer: max over a's
  // steps i of need(warWait(i)) − i + 1 = 7 − 0 + 1 = 8 steps, 64 words.
  SegmentSteps steps = segmentSteps(net, hw, {0, 1}, schedules, {&r.layers[0], &r.layers[1]});
  ASSERT_TRUE(steps.derived);
  ASSERT_EQ(steps.edges.size(), 1u);
  const EdgeSteps &e = steps.edges[0];
  EXPECT_EQ(e.tensor, "a");
  EXPECT_EQ(e.needs, std::vector<int64_t>(8, 7));
  EXPECT_EQ(e.rawWait, std::vector<int64_t>(8, 7));
  EXPECT_EQ(e.lastReader, std::vector<int64_t>(8, 7));
  EXPECT_EQ(e.warWait, std::vector<int64_t>(8, 7));
  EXPECT_EQ(e.words, std::vector<int64_t>(8, 8));
  EXPECT_EQ(e.depth, 8);
  EXPECT_EQ(e.neededWords, 64);
  // b's room on its node (GBUF 1 KiB = 512 words here): less its weights
  // (3x3 = 9) and an output column (8).
  RegionRoom room = regionRoom(net.layers[1], hw, r.layers[1]);
  EXPECT_EQ(room.nodes, 1);
  EXPECT_EQ(room.capacityWords, 512);
  EXPECT_EQ(room.otherTileWords, 17);
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
