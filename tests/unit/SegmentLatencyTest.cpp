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
  // Every a step finalizes a row (unit 1). The slack (docs/directives.md
  // §8): 2·8 + 1 = 17 steps hold at most a's 8 rows, 64 words, and the room
  // has 512 − 17 = 495: depth 8 more, 17 slots.
  EXPECT_EQ(e.unitSteps, 1);
  EXPECT_EQ(e.slack, 8);
  EXPECT_EQ(e.slots(), 17);
}

TEST(SegmentLatencyTest, LayerByLayerRefusalIsTheTablesOwn) {
  // The solver's early E0824 test (ShortConsumerTest), layer by layer, on
  // kRowsAgainstColumns with GBUF capacities around b's least need: a
  // finalizes a row (8 words) a step, unit 1, so a buffer of depth 1 holds
  // 1 + 1 = 2 steps, 16 words. b's room is the GBUF's words less its
  // weights and an output column (17): short below 16 + 17 = 33 words,
  // 66 B. Whatever b's tiles, its one node holds at most the GBUF: short
  // for any schedule below 16 words, 32 B. (The layers' own tiles do not
  // fit GBUFs this small; the rule looks at the buffers alone.)
  for (int gbuf : {30, 32, 64, 66, 1024}) {
    SCOPED_TRACE("GBUF " + std::to_string(gbuf) + " B");
    test::Compiled comp = test::compile(std::string(test::kRowsAgainstColumns) + test::onePeNodes(4, 16, gbuf));
    ASSERT_FALSE(comp.diags->hasErrors()) << comp.diagnostics();
    const Network &net = comp.model.networks[0];
    const Hardware &hw = comp.model.hardware[0];
    const ScheduleResult r = analyzeSchedule(comp.model, comp.model.schedules.at(0));
    std::vector<const LayerScheduleModel *> schedules(2);
    for (const LayerScheduleModel &ls : comp.model.schedules[0].layers)
      schedules.at(static_cast<size_t>(ls.layer)) = &ls;
    const SegmentSteps tables = segmentSteps(net, hw, {0, 1}, schedules, {&r.layers[0], &r.layers[1]}, true);
    EXPECT_EQ(tables.shortConsumer.has_value(), gbuf < 66);

    ShortConsumerTest early(net, hw);
    EXPECT_FALSE(early.shortOnAny(0, 1));   // a reads no tensor of the segment
    EXPECT_FALSE(early.add(0, schedules[0], r.layers[0]));
    EXPECT_EQ(early.shortOnAny(1, 1), gbuf < 32);
    EXPECT_EQ(early.add(1, schedules[1], r.layers[1]), gbuf < 66);
    if (gbuf < 66) {
      ASSERT_EQ(early.shortOf().size(), 1u);
      EXPECT_EQ(early.shortOf()[0].tensor, "a");
      EXPECT_EQ(early.shortOf()[0].words, 16);
      ASSERT_EQ(tables.shortOf.size(), 1u);
      EXPECT_EQ(tables.shortOf[0].words, 16);
    }
  }
}

TEST(SegmentLatencyTest, SlackOnlyWhereTheRoomHoldsEveryIncomingBuffer) {
  // Consumer 2 reads two edges of a word a step: depth 2 and 3, unit 1, so
  // with slack 2 + 1 + 2 = 5 and 3 + 1 + 3 = 7 steps, 12 words together.
  const std::vector<int64_t> words(10, 1);
  std::vector<EdgeBuffer> edges = {{1, 4, 2, words}, {2, 2, 1, words}, {2, 3, 1, words}};
  // Edge 0 into consumer 1: 4 + 2 + 4 = 10 steps, 10 words.
  EXPECT_EQ(bufferSlack(edges, {std::nullopt, 10, 12}), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(bufferSlack(edges, {std::nullopt, 9, 11}), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(bufferSlack(edges, {std::nullopt, std::nullopt, std::nullopt}), (std::vector<int64_t>{4, 2, 3}));
}

TEST(SegmentLatencyTest, SteppedCyclesChargeTheStallsOfAFullBuffer) {
  // tests/backend/PipelineTest.cpp's strided pair, from its tables: a 9
  // steps of 3 cycles, b 4 of 6; b's step j needs a's 2j + 2, a's step i is
  // read last by b's min(⌊i/2⌋, 3); depth 3, unit 1. With the slack (7
  // slots) a runs ahead and b takes its steps at 9, 15, 21, 27: 33. Without
  // (4 slots) a's steps 4, 6 and 8 wait for b's steps 0, 1 and 2 to end
  // (15, 24, 33), and b's steps 1, 2, 3 for them: 36 + 6 = 42.
  SegmentSteps s;
  s.derived = true;
  s.steps = {9, 4};
  EdgeSteps e;
  e.producer = 0, e.consumer = 1;
  e.rawWait = {2, 4, 6, 8};
  e.warWait = {0, 0, 1, 1, 2, 2, 3, 3, 3};
  e.depth = 3, e.unitSteps = 1, e.slack = 3;
  s.edges = {e};
  EXPECT_EQ(steppedCycles(s, {3, 6}), std::optional<double>(33));
  s.edges[0].slack = 0;
  EXPECT_EQ(steppedCycles(s, {3, 6}), std::optional<double>(42));
  // A buffer of one step below what RAW needs deadlocks: no latency.
  s.edges[0].depth = 0, s.edges[0].unitSteps = 1;
  EXPECT_EQ(steppedCycles(s, {3, 6}), std::nullopt);
  s.derived = false;
  EXPECT_EQ(steppedCycles(s, {3, 6}), std::nullopt);
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
