// The LCUs (backend/lcu/Lcu.h) and the pipeline simulator
// (backend/PipelineSim.h): a segment written by hand whose timeline is
// derived in the comments, an LCU weakened on purpose that the runtime RAW
// check must catch, and the solver's pipelined segments, which must run
// without a violation.
#include "backend/KernelPlan.h"
#include "backend/PipelineSim.h"
#include "backend/polyhedral/Dependences.h"
#include "scheduler/analysis/StepBoxes.h"
#include "scheduler/kapla/Solver.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace dfl::sim {
namespace {

// Two 1-D 3-tap convs, x (10) -> a (8) -> b (6), pipelined on two nodes of
// one PE each; at the node level each steps one output a step. With
// `bChannels` b computes that many output channels a step; each node has a
// GBUF (and a REGF no larger) of `gbufBytes`.
std::string chain(int bChannels, int gbufBytes = 1024) {
  const std::string k = std::to_string(bChannels);
  return "network n { input x [C=1, X=10]; a = conv(x, K=1, R=3, S=1); b = conv(a, K=" + k + ", R=3, S=1); }\n" +
         test::onePeNodes(2, std::min(64, gbufBytes), gbufBytes) + "schedule for n on h {\n  segment a, b pipelined;\n" +
         test::stepsAlongX("a", "tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1];") +
         test::stepsAlongX("b", "tensor ifm [Xi=3]; tensor wgt [K=" + k + ", R=3]; tensor ofm [K=" + k + ", Xo=1];") +
         "}\n";
}
const std::string kChain = chain(1);

PipelineResult runText(const std::string &text, const PipelineOptions &options = {}) {
  test::Compiled comp = test::compile(text);
  EXPECT_EQ(comp.diagnostics(), "");
  if (comp.model.schedules.empty())
    return {};
  return simulatePipelines(comp.model, comp.model.schedules[0], options);
}

/// The one segment of a run that must succeed, its checks EXPECTs.
const SegmentRun &cleanSegment(const PipelineResult &r) {
  EXPECT_EQ(r.segments.size(), 1u);
  const SegmentRun &s = r.segments.at(0);
  EXPECT_EQ(s.skipped, "");
  EXPECT_TRUE(s.ok()) << (s.violations.empty() ? s.error : s.violations.front());
  return s;
}

// ---- the analysis' step boxes against isl ---------------------------------
//
// The analysis derives each pipelined segment's dependences from boxes
// (scheduler/analysis/StepBoxes.h) for the buffer check (E0824), the
// simulator from isl (backend/polyhedral/Dependences.h): compared table by
// table and step by step on every segment the simulator runs here. The
// buffer E0824 checks (its steps and words) must be the simulator's: the
// check refuses exactly what the simulator would.

const LayerScheduleModel *directivesOf(const Schedule &s, int layer) {
  for (const LayerScheduleModel &ls : s.layers)
    if (ls.layer == layer)
      return &ls;
  return nullptr;
}

/// Compares the two derivations on every pipelined segment of `schedule`
/// (complete; valid but for E0824); the segments compared.
size_t compareSegments(const Model &model, const Schedule &schedule) {
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  const ScheduleResult analysis = analyzeSchedule(model, schedule);
  EXPECT_TRUE(analysis.complete);
  size_t compared = 0;
  for (const SegmentResult &seg : analysis.segments) {
    if (!seg.pipelined || seg.layers.size() < 2)
      continue;
    std::vector<const LayerScheduleModel *> schedules;
    std::vector<const LayerResult *> results;
    std::vector<StepSpace> spaces;
    std::string names;
    for (int l : seg.layers) {
      schedules.push_back(directivesOf(schedule, l));
      results.push_back(&analysis.layers[static_cast<size_t>(l)]);
      std::string why;
      if (!schedules.back())
        break;
      std::optional<KernelPlan> plan = planKernel(net, l, hw, *schedules.back(), *results.back(), why);
      if (!plan)
        break;
      spaces.push_back(stepSpace(*plan, net.layers[static_cast<size_t>(l)].nest));
      names += " " + net.layers[static_cast<size_t>(l)].name;
    }
    if (spaces.size() != seg.layers.size())
      continue;   // not simulated: nothing to compare with
    SCOPED_TRACE("segment" + names);
    const SegmentSteps boxes = segmentSteps(net, hw, seg.layers, schedules, results);
    PipelineDependences isl(std::move(spaces));
    std::vector<RegionRoom> rooms;
    for (size_t k = 0; k < seg.layers.size(); ++k)
      rooms.push_back(regionRoom(net.layers[static_cast<size_t>(seg.layers[k])], hw, *results[k]));
    isl.addSlack(rooms);
    EXPECT_TRUE(boxes.derived);
    EXPECT_EQ(boxes.edges.size(), isl.edges().size());
    if (!boxes.derived || boxes.edges.size() != isl.edges().size())
      continue;
    for (size_t k = 0; k < isl.edges().size(); ++k) {
      const EdgeDependences &e = isl.edges()[k];
      const EdgeSteps &b = boxes.edges[k];
      SCOPED_TRACE("edge " + e.tensor);
      EXPECT_EQ(b.producer, e.producer);
      EXPECT_EQ(b.consumer, e.consumer);
      EXPECT_EQ(b.tensor, e.tensor);
      EXPECT_EQ(boxes.steps[static_cast<size_t>(b.producer)], isl.regions()[static_cast<size_t>(e.producer)].steps());
      EXPECT_EQ(b.needs, e.needs);
      EXPECT_EQ(b.rawWait, e.rawWait);
      EXPECT_EQ(b.lastReader, e.lastReader);
      EXPECT_EQ(b.warWait, e.warWait);
      EXPECT_EQ(b.words, e.words);
      EXPECT_EQ(b.depth, e.depth);
      EXPECT_EQ(b.neededWords, mostWords(e.words, e.leastSlots()));
      EXPECT_EQ(b.unitSteps, e.unitSteps);
      EXPECT_EQ(b.slack, e.slack);
      EXPECT_EQ(b.slots(), e.slots());
    }
    ++compared;
  }
  return compared;
}

TEST(PipelineTest, BoxesMatchIslRowsAgainstColumns) {
  // test::kRowsAgainstColumns: b's first column needs all of a's rows
  // (tests/unit/SegmentLatencyTest.cpp derives its tables by hand).
  test::Compiled comp = test::compile(test::kRowsAgainstColumns + test::onePeNodes(2, 128));
  ASSERT_EQ(comp.diagnostics(), "");
  EXPECT_EQ(compareSegments(comp.model, comp.model.schedules.at(0)), 1u);
}

TEST(PipelineTest, ChainTimeline) {
  PipelineResult r = runText(kChain);
  const SegmentRun &s = cleanSegment(r);
  ASSERT_EQ(s.regions.size(), 2u);
  // Compute-bound, one PE each: a does 8·3 = 24 MACs in 8 steps, b 6·3 =
  // 18 in 6: 3 cycles a step both.
  EXPECT_EQ(s.regions[0].steps, 8);
  EXPECT_EQ(s.regions[1].steps, 6);
  EXPECT_DOUBLE_EQ(s.regions[0].stepCycles, 3);
  EXPECT_DOUBLE_EQ(s.regions[1].stepCycles, 3);
  // b's step x reads a's outputs x … x+2, ready at 3(x+3): b runs 9 … 27.
  // a never waits: even a buffer of depth 3 + 1 = 4 steps frees step i−4
  // when b's step i−4 ends, at 3(i−4) + 12 = 3i, as a reaches step i.
  EXPECT_DOUBLE_EQ(s.regions[1].firstStart, 9);
  EXPECT_DOUBLE_EQ(s.cycles, 27);
  EXPECT_DOUBLE_EQ(s.fillCycles, 9);
  EXPECT_DOUBLE_EQ(s.drainCycles, 27 - 24);   // a ends at 24
  EXPECT_DOUBLE_EQ(s.regions[0].stallCycles, 0);
  EXPECT_DOUBLE_EQ(s.regions[1].stallCycles, 9);   // ready at 0, first step at 9
  // docs/directives.md §8: b's first step needs a's steps 0..2, done at
  // 3·24/8 = 9; b then runs its 18 cycles (to 27), but its last step needs
  // a's last, done at 24: max(9 + 18, 24 + 3) = 27, the simulated timeline.
  // (The perfect-overlap formula, k = 8: (24 + 18)/8 + 7·24/8 = 26.25.)
  EXPECT_DOUBLE_EQ(s.analyticalCycles, 27);
  ASSERT_EQ(s.buffers.size(), 1u);
  // The least deadlock-free buffer: b's step WAR(i) = i needs a's step i + 2,
  // so depth = i + 2 − i + 1 = 3; every step of a finalizes its word (unit
  // 1); b's room, 1 KiB = 512 words less its wgt (3) and ofm (1) tiles =
  // 508, holds 3 + 1 + 3 steps (7 words): slack 3, 7 steps (docs/directives.md §8).
  // E0824 checks the least of them, 3 + 1 = 4 steps.
  EXPECT_EQ(s.buffers[0].minSteps, 4);
  EXPECT_EQ(s.buffers[0].depthSteps, 7);
  EXPECT_EQ(s.buffers[0].depthWords, 7);
  // Live at once: a's step i is written at 3i and dead when b's step i ends
  // (min(i, 5)): at 3i steps i−3 … i are live (b's step i−3 ends at 3i
  // itself, first), so at most 4 words.
  EXPECT_EQ(s.buffers[0].peakWords, 4);
  // b's LCU waits on counter 0 (a's steps done) for min(c0 + 3, 8).
  EXPECT_NE(s.regions[1].lcuC.find("void lcu_b(void *ctx"), std::string::npos) << s.regions[1].lcuC;
  EXPECT_NE(s.regions[1].lcuC.find("wait(ctx, 0, "), std::string::npos);
  EXPECT_NE(s.regions[0].lcuC.find("wait(ctx, 1, "), std::string::npos);   // a's WAR wait
}

TEST(PipelineTest, WeakenedLcuTripsTheRawCheck) {
  // b's wait one short: its step 0 starts once a has finished 2 steps (at
  // 6), while a computes its step 2, which writes a[…, 2, …] b reads.
  PipelineOptions o;
  o.weakenedSegment = 0, o.weakenedEdge = 0;
  PipelineResult r = runText(kChain, o);
  ASSERT_EQ(r.segments.size(), 1u);
  const SegmentRun &s = r.segments[0];
  ASSERT_FALSE(s.ok());
  const std::string &v = s.violations.front();
  EXPECT_NE(v.find("RAW violation in segment 0, edge a -> b (a): b step 0 (b_step[0]) reads a[0, 0, 2"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("which a step 2 (a_step[2]) writes, but a has finished 2 steps (cycle 6)"), std::string::npos) << v;
}

// The chain with a slow consumer: b = conv(a, K=4, R=3) computes 4 outputs
// of 3 MACs a step on its PE, 12 cycles; a still 3. b's step j needs a's
// steps up to j + 2 (depth 3, unit 1, as in kChain). With 1 KiB of GBUF b's
// room (512 words less its wgt [K=4, R=3] and ofm [K=4] tiles: 496) holds
// the slack: a's buffer keeps 3 + 1 + 3 = 7 steps. With 40 B it has 20 − 16
// = 4 words: not the 7 the slack needs, but the 4 of 3 + 1 steps (and the
// 3 E0824 asks for): a's step i >= 4 overwrites step i − 4, which b's step
// i − 4 reads last.
const std::string kSlowConsumer = chain(4);
const std::string kSlowConsumerTight = chain(4, 40);

TEST(PipelineTest, SlowConsumerTimeline) {
  PipelineResult r = runText(kSlowConsumer);
  const SegmentRun &s = cleanSegment(r);
  ASSERT_EQ(s.regions.size(), 2u);
  EXPECT_DOUBLE_EQ(s.regions[0].stepCycles, 3);
  EXPECT_DOUBLE_EQ(s.regions[1].stepCycles, 12);
  ASSERT_EQ(s.buffers.size(), 1u);
  EXPECT_EQ(s.buffers[0].depthSteps, 7);
  // a: steps 0..6 at 0, 3, …, 18; step 7 overwrites step 0, whose last
  // reader, b's step 0, runs 9..21: a ends at 24. b as below: 9 … 81.
  EXPECT_DOUBLE_EQ(s.regions[1].firstStart, 9);
  EXPECT_DOUBLE_EQ(s.regions[0].lastEnd, 24);
  EXPECT_DOUBLE_EQ(s.cycles, 81);
  EXPECT_DOUBLE_EQ(s.analyticalCycles, 81);
}

TEST(PipelineTest, SlowConsumerWithoutRoomForSlack) {
  PipelineResult r = runText(kSlowConsumerTight);
  const SegmentRun &s = cleanSegment(r);
  ASSERT_EQ(s.regions.size(), 2u);
  EXPECT_EQ(s.regions[1].roomWords(), 4);
  ASSERT_EQ(s.buffers.size(), 1u);
  EXPECT_EQ(s.buffers[0].depthSteps, 4);
  // a: steps 0..3 at 0, 3, 6, 9; step 4 waits for b's step 0 (9..21), step
  // 5 for b's step 1 (21..33), 6 for step 2 (33..45), 7 for step 3 (45..57)
  // and ends at 60. b never waits once started: its step j, from 9 + 12j,
  // needs a's step j + 2, which ends at 9, 12, 24, 36, 48, 60 for j = 0..5,
  // so b runs 9 … 9 + 6·12 = 81.
  EXPECT_DOUBLE_EQ(s.regions[1].firstStart, 9);
  EXPECT_DOUBLE_EQ(s.regions[0].lastEnd, 60);
  EXPECT_DOUBLE_EQ(s.cycles, 81);
  EXPECT_DOUBLE_EQ(s.regions[1].stallCycles, 9);
  // docs/directives.md §8: the analysis runs the same steps against the same
  // buffer; a's waits cost nothing here (b is the slower), so 81 either way.
  EXPECT_DOUBLE_EQ(s.analyticalCycles, 81);
}

// A consumer that reads two of the producer's steps a step, at the same
// pace: a = conv(x, R=3) makes 9 outputs, one a step (3 cycles); b =
// conv(a, K=2, R=3, stride=2) makes 4, 2 outputs of 3 MACs a step (6
// cycles). b's step j reads a's 2j … 2j+2: RAW(j) = 2j + 2 (2, 4, 6, 8);
// a's step i is read last by b's step min(⌊i/2⌋, 3): WAR = 0,0,1,1,2,2,3,3,3.
// depth = max over i of RAW(WAR(i)) − i + 1 = 3 (i = 0: 2 − 0 + 1), unit 1.
// b's room: its GBUF less its wgt (6 words) and ofm (2) tiles.
std::string strided(int gbufBytes) {
  return "network n { input x [C=1, X=11]; a = conv(x, K=1, R=3, S=1); b = conv(a, K=2, R=3, S=1, stride=2); }\n" +
         test::onePeNodes(2, std::min(64, gbufBytes), gbufBytes) + "schedule for n on h {\n  segment a, b pipelined;\n" +
         test::stepsAlongX("a", "tensor ifm [Xi=3]; tensor wgt [R=3]; tensor ofm [Xo=1];") +
         "  layer b {\n    REGF { tensor ifm [Xi=3]; tensor wgt [K=2, R=3]; tensor ofm [K=2, Xo=1]; }\n"
         "    GBUF { tensor ifm [Xi=3]; tensor wgt [K=2, R=3]; tensor ofm [K=2, Xo=1]; update Xo += 1, Xi += 2; }\n  }\n"
         "}\n";
}

TEST(PipelineTest, SlackLetsTheProducerRunAhead) {
  // 1 KiB: room 512 − 8 = 504 words holds 3 + 1 + 3 = 7 steps (7 words).
  // a runs 0 … 21 unheld (steps 0..6); its step 7 overwrites step 0, read
  // last by b's step 0 (ends 15), so 21..24, and step 8 24..27. b: step 0
  // after a's step 2 (9): 9..15; step 1 after a's 4 (15): 15..21; step 2
  // after a's 6 (21): 21..27; step 3 after a's 8 (27): 27..33. RAW alone
  // gives the same: the analysis and the simulator say 33.
  PipelineResult r = runText(strided(1024));
  const SegmentRun &s = cleanSegment(r);
  ASSERT_EQ(s.regions.size(), 2u);
  EXPECT_EQ(s.regions[0].steps, 9);
  EXPECT_EQ(s.regions[1].steps, 4);
  EXPECT_DOUBLE_EQ(s.regions[0].stepCycles, 3);
  EXPECT_DOUBLE_EQ(s.regions[1].stepCycles, 6);
  ASSERT_EQ(s.buffers.size(), 1u);
  EXPECT_EQ(s.buffers[0].minSteps, 3 + 1);   // depth + unit, without slack
  EXPECT_EQ(s.buffers[0].depthSteps, 7);
  EXPECT_DOUBLE_EQ(s.regions[0].lastEnd, 27);
  EXPECT_DOUBLE_EQ(s.cycles, 33);
  EXPECT_DOUBLE_EQ(s.analyticalCycles, 33);
}

TEST(PipelineTest, WithoutRoomForSlackTheAnalysisChargesTheStall) {
  // 24 B: room 12 − 8 = 4 words, short of the slack's 7 but the 3 + 1 = 4
  // steps' 4 words. a's step i >= 4 overwrites step i − 4: a0..a3 0..12;
  // a4 waits for b's step WAR(0) = 0 (9..15): 15..18, a5 18..21; b1 after
  // a4: 18..24; a6 waits for b's step WAR(2) = 1: 24..27, a7 27..30; b2
  // after a6: 27..33; a8 waits for b's step WAR(4) = 2: 33..36; b3 36..42.
  // The two take turns: 42, not RAW's 33, and the analysis says 42 too.
  PipelineResult r = runText(strided(24));
  const SegmentRun &s = cleanSegment(r);
  ASSERT_EQ(s.regions.size(), 2u);
  EXPECT_EQ(s.regions[1].roomWords(), 4);
  ASSERT_EQ(s.buffers.size(), 1u);
  EXPECT_EQ(s.buffers[0].depthSteps, 4);
  EXPECT_DOUBLE_EQ(s.regions[0].lastEnd, 36);
  EXPECT_DOUBLE_EQ(s.cycles, 42);
  EXPECT_DOUBLE_EQ(s.analyticalCycles, 42);
}

TEST(PipelineTest, WeakenedWarWaitTripsTheWarCheck) {
  // Without room for slack (a's buffer of 4 steps), a's WAR wait one of b's steps short: its step 4 waits for b to have
  // finished WAR(0) = 0 steps instead of 1, so it starts as step 3 ends,
  // at 12, and overwrites step 0's slot while b's step 0 (9..21), its last
  // reader, still runs. Steps 5, 6 and 7 do likewise at 21, 33 and 45, each
  // as b finishes the step before their slot's last reader: 4 violations.
  PipelineOptions o;
  o.weakenedSegment = 0, o.weakenedEdge = 0, o.weakenWar = true;
  PipelineResult r = runText(kSlowConsumerTight, o);
  ASSERT_EQ(r.segments.size(), 1u);
  const SegmentRun &s = r.segments[0];
  ASSERT_FALSE(s.ok());
  const std::string &v = s.violations.front();
  EXPECT_NE(v.find("WAR violation in segment 0, edge a -> b (a): a step 4 (a_step[4]) overwrites the data of its step "
                   "0 (a_step[0]), but b step 0 (b_step[0]) reads a[0, 0, 0"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("of it and b has finished 0 steps (cycle 12)"), std::string::npos) << v;
  EXPECT_EQ(s.violationCount(), 4);
  EXPECT_EQ(s.unlistedViolations, 0);

  // Listed up to a cap, the others counted.
  o.listedViolations = 1;
  PipelineResult capped = runText(kSlowConsumerTight, o);
  ASSERT_EQ(capped.segments.size(), 1u);
  EXPECT_EQ(capped.segments[0].violations.size(), 1u);
  EXPECT_EQ(capped.segments[0].unlistedViolations, 3);
  EXPECT_NE(pipelineTable(capped).find("... and 3 more violations"), std::string::npos) << pipelineTable(capped);
}

TEST(PipelineTest, IslOperationLimitIsAnError) {
  // With isl allowed a single operation the dependences cannot be derived:
  // the segment fails with the limit named, nothing simulated.
  PipelineOptions o;
  o.islMaxOperations = 1;
  PipelineResult r = runText(kChain, o);
  ASSERT_EQ(r.segments.size(), 1u);
  const SegmentRun &s = r.segments[0];
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(r.ok());
  EXPECT_NE(s.error.find("isl reached its limit of 1 operations"), std::string::npos) << s.error;
  EXPECT_TRUE(s.regions.empty());
  EXPECT_NE(pipelineTable(r).find("error: isl reached its limit"), std::string::npos) << pipelineTable(r);
}

// A 4 x 4-node template with pipelining on.
const std::string kFourByFour = R"(
hardware hw {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; transfer = multicast; }
  level GBUF { capacity = 4 KiB; array = 4 x 4; access_energy = 6 pJ; bandwidth = 16 B/cycle; }
  level DRAM { access_energy = 100 pJ; bandwidth = 16 B/cycle; }
  noc { hop_energy = 2 pJ; }
  pipeline { temporal = true; spatial = true; }
}
)";

TEST(PipelineTest, SolverSegmentsRunWithoutViolation) {
  // Every layer kind a pipelined segment may hold, on a 4 x 4-node template;
  // the solver's segments with pipelining on.
  const std::string text = R"(
network net {
  batch N = 2;
  input x [C=4, X=12, Y=12];
  c1 = conv(x, K=8, R=3, S=3, pad=1);
  p1 = maxpool(c1, R=2, stride=2);
  c2 = conv(p1, K=8, R=3, S=3, pad=1);
  c3 = conv(p1, K=8, R=1, S=1);
  s1 = add(c2, c3);
  k1 = concat(s1, p1);
  c4 = conv(k1, K=8, R=3, S=3, stride=2, pad=1);
}
)" + kFourByFour + std::string(R"(
schedule for net on hw {
  segment c1, p1, c2, c3, s1 pipelined;
  segment k1, c4 pipelined;
}
)");
  test::Compiled comp = test::compile(text);
  ASSERT_EQ(comp.diagnostics(), "");
  const Schedule &given = comp.model.schedules.at(0);
  SolveFailure failure;
  SolverOptions so;
  so.pipelining = true;
  auto sol = makeSolver("kapla")->solve(comp.model, given, so, failure);
  ASSERT_TRUE(sol) << failure;
  // The boxes and isl agree on both segments.
  EXPECT_EQ(compareSegments(comp.model, sol->schedule), 2u);
  PipelineResult r = simulatePipelines(comp.model, sol->schedule);
  size_t run = 0;
  for (const SegmentRun &s : r.segments) {
    run += s.skipped.empty();
    SCOPED_TRACE("segment " + std::to_string(s.index));
    EXPECT_TRUE(s.ok()) << s.violations.front();
    // One verdict: the analysis' latency is the simulated one (docs/directives.md §8).
    EXPECT_DOUBLE_EQ(s.cycles, s.analyticalCycles);
    // Each region runs every step once: no segment ends before its slowest region's work.
    for (const RegionRun &g : s.regions)
      EXPECT_GE(s.cycles + 1e-6, static_cast<double>(g.steps) * g.stepCycles);
  }
  // Both segments the schedule asks for were run, none skipped.
  EXPECT_EQ(run, 2u);
}

// Fused attention (docs/design.md, "Fused attention (FLAT)") at a small
// size: scores -> softmax -> ctx, `heads` query heads of d = 16 over
// `kvHeads` K/V heads, 16 tokens. The scores' channel index linearizes three
// canonical dims (8·16·g + 16·m + kx: N, Yo and K, heads = kv_heads · groups
// of m), the context's reads of the probabilities likewise: the boxes split
// ranges of it into its digits (scheduler/analysis/StepBoxes.h). At a batch
// above 1, N is the batch and the heads (frontend/NetworkSema.cpp): the
// outputs index its batch digit in dim 0, its head digit in the channels.
std::string attention(int heads, int kvHeads, bool causal, int batch = 1) {
  const std::string h = std::to_string(heads), kv = std::to_string(kvHeads), c = causal ? "true" : "false";
  return "network attn {\n  batch N = " + std::to_string(batch) + ";\n  input q [C=" + std::to_string(16 * heads) + ", X=16];\n"
         "  input k [C=" + std::to_string(16 * kvHeads) + ", X=16];\n  input v [C=" + std::to_string(16 * kvHeads) +
         ", X=16];\n  scores = matmul(q, k, heads=" + h + ", kv_heads=" + kv + ", causal=" + c + ");\n"
         "  probs = softmax(scores, groups=" + h + ", causal=" + c + ");\n"
         "  ctx = matmul(probs, v, heads=" + h + ", kv_heads=" + kv + ", transpose_b=true);\n}\n";
}

/// The solver's fused segment of attention(...), as it writes it for the
/// segment asked for: the segments compared with isl.
size_t compareSolvedAttention(int heads, int kvHeads, bool causal, int batch) {
  test::Compiled comp = test::compile(attention(heads, kvHeads, causal, batch) + kFourByFour +
                                      "schedule for attn on hw { segment scores, probs, ctx pipelined; }\n");
  EXPECT_EQ(comp.diagnostics(), "");
  SolveFailure failure;
  SolverOptions so;
  so.pipelining = true;
  auto sol = makeSolver("kapla")->solve(comp.model, comp.model.schedules.at(0), so, failure);
  EXPECT_TRUE(sol) << failure;
  return sol ? compareSegments(comp.model, sol->schedule) : 0;
}

TEST(PipelineTest, BoxesMatchIslOnFusedAttention) {
  // GQA and MHA, causal and not: every table the boxes derive is isl's.
  for (auto [heads, kvHeads] : {std::pair{4, 2}, std::pair{4, 4}, std::pair{8, 2}})
    for (bool causal : {true, false}) {
      SCOPED_TRACE(std::to_string(heads) + " heads over " + std::to_string(kvHeads) + (causal ? ", causal" : ""));
      EXPECT_EQ(compareSolvedAttention(heads, kvHeads, causal, 1), 1u);
    }
}

TEST(PipelineTest, BoxesMatchIslOnBatchedAttention) {
  // Batch 2 and 3: N's digits in two tensor dims of each matmul's output, so
  // a step's canonical range of N splits into boxes of (batch, head). The
  // solver pipelines the segment (it drops one the boxes cannot derive) and
  // every table is isl's.
  for (int batch : {2, 3})
    for (auto [heads, kvHeads] : {std::pair{2, 1}, std::pair{4, 4}}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + ", " + std::to_string(heads) + " heads over " +
                   std::to_string(kvHeads));
      EXPECT_EQ(compareSolvedAttention(heads, kvHeads, false, batch), 1u);
    }
}

/// A node of its own for each layer of an attention: `gbuf` its buffer.
std::string threeNodes(const std::string &gbuf) {
  return "hardware h {\n  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }\n"
         "  level REGF { capacity = 64 B; array = 1; access_energy = 1 pJ; }\n"
         "  level GBUF { capacity = " + gbuf + "; array = 3; access_energy = 2 pJ; }\n"
         "  level DRAM { access_energy = 100 pJ; }\n  pipeline { temporal = true; spatial = true; }\n}\n";
}

// A fused attention written by hand (tests/lit/check/E0824-attention.test
// derives its E0824 by hand): 2 query heads over 1 K/V head, d = 2, 8
// tokens, each layer on a node of its own; `scores` and `ctx` the two
// matmuls' directives.
std::string writtenAttention(const std::string &scores, const std::string &ctx) {
  return R"(
network attn {
  batch N = 1;
  input q [C=4, X=8];
  input k [C=2, X=8];
  input v [C=2, X=8];
  scores = matmul(q, k, heads=2, kv_heads=1);
  probs = softmax(scores, groups=2);
  ctx = matmul(probs, v, heads=2, kv_heads=1, transpose_b=true);
}
)" + threeNodes("128 B") + R"(schedule for attn on h {
  segment scores, probs, ctx pipelined;
  layer scores { )" + scores + R"( }
  layer probs {
    REGF { tensor ifm [N=1, C=1, Xi=1, Yi=1]; tensor ofm [N=1, K=1, Xo=1, Yo=1]; update C += 1; }
    GBUF { tensor ifm [N=1, C=8, Xi=1, Yi=1]; tensor ofm [N=1, K=8, Xo=1, Yo=1]; update C += 8; update Xo += 1, Xi += 1; }
  }
  layer ctx { )" + ctx + R"( }
}
)";
}

TEST(PipelineTest, BoxesMatchIslOnWrittenAttention) {
  // scores finalizing a key row of one head a step (one run of its channel
  // index 8·m + kx), or half the keys of both heads (two runs: 8·m + [0, 3]
  // or [4, 7], m = 0, 1); ctx reading one head's probabilities of a query a
  // step (a run of probs' channel index), or half the keys of both heads
  // (two runs, whose hull the boxes take: later steps, never earlier).
  const std::string row = "REGF { tensor ifm [N=1, C=2, Xi=1, Yi=1]; tensor wgt [K=8, C=2, R=1, S=1]; tensor ofm [N=1, K=8, Xo=1, Yo=1]; }"
                          "GBUF { tensor ifm [N=1, C=2, Xi=1, Yi=1]; tensor wgt [K=8, C=2, R=1, S=1]; tensor ofm [N=1, K=8, Xo=1, Yo=1];"
                          " update Xo += 1, Xi += 1; update Yo += 1, Yi += 1; }";
  const std::string halves = "REGF { tensor ifm [N=1, C=2, Xi=1, Yi=1]; tensor wgt [K=4, C=2, R=1, S=1]; tensor ofm [N=1, K=4, Xo=1, Yo=1];"
                             " update Yo += 1, Yi += 1; }"
                             "GBUF { tensor ifm [N=1, C=2, Xi=1, Yi=2]; tensor wgt [K=4, C=2, R=1, S=1]; tensor ofm [N=1, K=4, Xo=1, Yo=2];"
                             " update K += 4; update Xo += 1, Xi += 1; }";
  const std::string head = "REGF { tensor ifm [N=1, C=8, Xi=1, Yi=1]; tensor wgt [K=2, C=8, R=1, S=1]; tensor ofm [N=1, K=2, Xo=1, Yo=1]; }"
                           "GBUF { tensor ifm [N=1, C=8, Xi=1, Yi=1]; tensor wgt [K=2, C=8, R=1, S=1]; tensor ofm [N=1, K=2, Xo=1, Yo=1];"
                           " update Yo += 1, Yi += 1; update Xo += 1, Xi += 1; }";
  const std::string half = "REGF { tensor ifm [N=1, C=4, Xi=1, Yi=1]; tensor wgt [K=2, C=4, R=1, S=1]; tensor ofm [N=1, K=2, Xo=1, Yo=1];"
                           " update Yo += 1, Yi += 1; }"
                           "GBUF { tensor ifm [N=1, C=4, Xi=1, Yi=2]; tensor wgt [K=2, C=4, R=1, S=1]; tensor ofm [N=1, K=2, Xo=1, Yo=2];"
                           " update C += 4; update Xo += 1, Xi += 1; }";
  for (const auto &[scores, ctx] : {std::pair{row, head}, std::pair{halves, head}, std::pair{row, half}, std::pair{halves, half}}) {
    SCOPED_TRACE(scores + " / " + ctx);
    test::Compiled comp = test::compile(writtenAttention(scores, ctx));
    ASSERT_EQ(comp.diagnostics(), "");
    EXPECT_EQ(compareSegments(comp.model, comp.model.schedules.at(0)), 1u);
  }
}

TEST(PipelineTest, BoxesMatchIslOnWrittenBatchedAttention) {
  // Batch 3, 2 heads (MHA): N is the batch and the head, 6 values, indexed in
  // dims 0 and 1 of scores and ctx. Each layer steps N by 1, outermost or
  // inside its query steps (and probs its keys, per head); ctx reads probs'
  // channel index 8·h + key, whose head digit wraps back as N grows, so the
  // boxes search those steps one by one (scheduler/analysis/StepBoxes.h).
  // Every table is isl's, in all 12 orders.
  const std::string text = R"(
network attn {
  batch N = 3;
  input q [C=4, X=8];
  input k [C=4, X=8];
  input v [C=4, X=8];
  scores = matmul(q, k, heads=2);
  probs = softmax(scores, groups=2);
  ctx = matmul(probs, v, heads=2, transpose_b=true);
}
)" + threeNodes("2 KiB") + R"(schedule for attn on h {
  segment scores, probs, ctx pipelined;
  layer scores {
    REGF { tensor ifm [N=1, C=2, Xi=1, Yi=1]; tensor wgt [K=8, C=2, R=1, S=1]; tensor ofm [N=1, K=8, Xo=1, Yo=1]; }
    GBUF { tensor ifm [N=1, C=2, Xi=1, Yi=1]; tensor wgt [K=8, C=2, R=1, S=1]; tensor ofm [N=1, K=8, Xo=1, Yo=1]; SCORES }
  }
  layer probs {
    REGF { tensor ifm [N=1, C=1, Xi=1, Yi=1]; tensor ofm [N=1, K=1, Xo=1, Yo=1]; update C += 1; }
    GBUF { tensor ifm [N=1, C=8, Xi=1, Yi=1]; tensor ofm [N=1, K=8, Xo=1, Yo=1]; PROBS }
  }
  layer ctx {
    REGF { tensor ifm [N=1, C=8, Xi=1, Yi=1]; tensor wgt [K=2, C=8, R=1, S=1]; tensor ofm [N=1, K=2, Xo=1, Yo=1]; }
    GBUF { tensor ifm [N=1, C=8, Xi=1, Yi=1]; tensor wgt [K=2, C=8, R=1, S=1]; tensor ofm [N=1, K=2, Xo=1, Yo=1]; CTX }
  }
}
)";
  const std::string queryThenBatch = "update Xo += 1, Xi += 1; update N += 1;",
                    batchThenQuery = "update N += 1; update Xo += 1, Xi += 1;";
  auto with = [](std::string t, const std::string &key, const std::string &updates) {
    t.replace(t.find(key), key.size(), updates);
    return t;
  };
  for (const std::string &scores : {queryThenBatch, batchThenQuery})
    for (const std::string &probs : {"update C += 8; " + queryThenBatch, std::string("update Xo += 1, Xi += 1; update C += 8; update N += 1;"),
                                     "update C += 8; " + batchThenQuery})
      for (const std::string &ctx : {queryThenBatch, batchThenQuery}) {
        SCOPED_TRACE(scores + " / " + probs + " / " + ctx);
        test::Compiled comp = test::compile(with(with(with(text, "SCORES", scores), "PROBS", probs), "CTX", ctx));
        ASSERT_EQ(comp.diagnostics(), "");
        EXPECT_EQ(compareSegments(comp.model, comp.model.schedules.at(0)), 1u);
      }
}

std::string stdlibText(const std::string &path) {
  std::ifstream in(test::kStdlibRoot + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PipelineTest, StdlibSolverSegmentsRunWithoutViolation) {
  // The issue's bar: every pipelined segment of the solver's schedules runs
  // without a RAW or WAR violation or a deadlock. Three stdlib networks on
  // the 16 x 16-node template, at their own batch (bench/PipelineBench.cpp
  // runs them all).
  size_t run = 0;
  for (const char *net : {"nets/mlp.dfl", "nets/alexnet.dfl", "nets/resnet18.dfl"}) {
    SCOPED_TRACE(net);
    test::Compiled comp = test::compile(stdlibText(net) + stdlibText("hw/eyeriss_multinode.dfl"));
    ASSERT_EQ(comp.diagnostics(), "");
    Schedule given;
    given.network = 0, given.hardware = 0;
    SolveFailure failure;
    auto sol = makeSolver("kapla")->solve(comp.model, given, SolverOptions{}, failure);
    ASSERT_TRUE(sol) << failure;
    const PipelineResult pipes = simulatePipelines(comp.model, sol->schedule);
    EXPECT_EQ(compareSegments(comp.model, sol->schedule), pipes.segments.size());
    for (const SegmentRun &s : pipes.segments) {
      EXPECT_EQ(s.skipped, "");
      EXPECT_TRUE(s.ok()) << s.violations.front();
      EXPECT_DOUBLE_EQ(s.cycles, s.analyticalCycles);   // one verdict
      // The check passed it, E0824 included: isl finds its buffers fit too.
      for (const RegionRun &g : s.regions) {
        int64_t need = 0;
        for (const BufferRun &b : s.buffers)
          if (b.consumer == g.layer)
            need += b.neededWords;
        EXPECT_LE(need, g.roomWords()) << g.layer;
      }
      ++run;
    }
  }
  // The solver pipelines some segment of these (a change detector if it
  // stopped: then this test would check nothing).
  EXPECT_GT(run, 0u);
}

} // namespace
} // namespace dfl::sim
