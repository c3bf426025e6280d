// The control and cycle simulation of a computational-memory chip
// (backend/cm/): a two-layer pipeline whose timeline is derived by hand in
// the comments, LCUs weakened on purpose that the runtime RAW and WAR checks
// must catch, and a projection shortcut (two paths from one tensor rejoining
// at an add) that deadlocks unless the buffers are widened.
#include "backend/cm/CmSim.h"
#include "scheduler/placement/CmPlacement.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

namespace dfl::cm {
namespace {

// Two cores in a row, the GCU's input at core 0 and its output at core 1;
// one cycle an MxV, one a hop, one a DPU operation per element.
const char *kLine2 = R"(
hardware line2 {
  word = 8 bit;
  frequency = 1 GHz;
  core { crossbar = 256 x 256; sram = 64 KiB; }
  dpu { relu = 1; add = 1; psum = 1; }
  interconnect { topology = mesh; cores = 1 x 2; hop_latency = 1; hop_energy = 1 pJ; }
  gcu { input_core = 0; output_core = 1; }
}
)";

// x: 1 channel of 1 x 4 pixels, 2 images; a and b: 1 x 1 convs of 2
// channels, a with a ReLU (2 elements a step: 2 DPU cycles).
const char *kPipe2 = R"(
network pipe2 {
  batch N = 2;
  input x [C=1, X=1, Y=4];
  a = conv(x, K=2, R=1);
  a_relu = relu(a);
  b = conv(a_relu, K=2, R=1);
}
)";

struct Chip {
  test::Compiled comp;
  CmMapping m;
  std::unique_ptr<CmControl> control;
  const Network &net() const { return comp.model.networks.at(0); }
  const CmHardware &hw() const { return comp.model.cmHardware.at(0); }
};

std::unique_ptr<Chip> build(const std::string &text) {
  auto c = std::make_unique<Chip>();
  c->comp = test::compile(text);
  EXPECT_EQ(c->comp.diagnostics(), "");
  auto p = partitionForCm(c->net(), c->hw(), *c->comp.diags);
  EXPECT_TRUE(p.has_value());
  c->m.partitioning = std::move(*p);
  c->m.placement = placeOnCores(c->m.partitioning, c->hw());
  std::string why;
  c->control = CmControl::build(c->net(), c->hw(), c->m, why);
  EXPECT_EQ(why, "");
  return c;
}

const CmCoreRun &core(const CmSimResult &r, const std::string &region) {
  for (const CmCoreRun &c : r.cores)
    if (c.region == region)
      return c;
  ADD_FAILURE() << "no region " << region;
  return r.cores.front();
}

TEST(CmSimTest, TwoLayerTimeline) {
  auto chip = build(std::string(kLine2) + kPipe2);
  // The only optimal placement: a on core 0, b on core 1 (4 + 8 + 8 = 20
  // word-hops per image; swapped, 8 + 8 + 16 = 32).
  ASSERT_EQ(chip->m.placement.status, CmPlacement::Status::Optimal);
  CmSimResult r = simulateCm(chip->net(), chip->hw(), chip->m, *chip->control);
  EXPECT_TRUE(r.bitExact());
  EXPECT_EQ(r.violationCount(), 0) << (r.violations.empty() ? "" : r.violations.front());
  // Step s of a region is pixel s (image s / 4). The GCU sends pixel i at
  // cycle i; one hop: it reaches a at i + 1. a's step takes 1 + 2 = 3
  // cycles, so a runs steps at 1, 4, 7, … (1 + 3s); its buffer of 2 GCU
  // steps (a reads pixel s at its step s: depth 1, + 1 to double buffer)
  // holds the GCU's pixel i back to 3i − 2 from i = 2, still in time for a
  // (it arrives at 3i − 1 < 1 + 3i). a's step s
  // ends at 4 + 3s, reaching b (one hop) then: b runs [4 + 3s, 5 + 3s) and
  // its output, one hop to the GCU's output port, arrives at 5 + 3s − 1 + 1.
  // Image 0 ends with s = 3 at 14, image 1 with s = 7 at 26.
  EXPECT_EQ(r.imageDone, (std::vector<int64_t>{14, 26}));
  EXPECT_EQ(r.fillCycles(), 14);
  EXPECT_DOUBLE_EQ(r.cyclesPerImage(), 12);   // 4 pixels x a's 3 cycles
  EXPECT_EQ(r.cycles, 26);
  const CmCoreRun &a = core(r, "a"), &b = core(r, "b");
  EXPECT_EQ(a.mvmCycles, 8);
  EXPECT_EQ(a.dpuCycles, 16);
  EXPECT_EQ(a.firstStart, 1);
  EXPECT_EQ(b.busyCycles, 8);
  // b waits for a: 4 cycles before its first step, then 2 between steps.
  EXPECT_EQ(b.stalls.at("RAW: a from a"), 4 + 7 * 2);
  // Buffers of 2 producer steps: a keeps 2 pixels of x (1 byte each), b 2
  // pixels of a (2 channels).
  EXPECT_EQ(a.sramBytes, 2);
  EXPECT_EQ(b.sramBytes, 4);
  // Layer by layer: a programs 1 row, b 2, at 1000 cycles a row, then runs
  // alone: a 8 steps x 3 cycles, b 8 x 1.
  ASSERT_EQ(r.layerByLayer.size(), 2u);
  EXPECT_EQ(r.layerByLayer[0].programCycles + r.layerByLayer[0].computeCycles, 1000 + 24);
  EXPECT_EQ(r.layerByLayer[1].programCycles + r.layerByLayer[1].computeCycles, 2000 + 8);
  EXPECT_EQ(r.programCycles, 2000);
}

/// The edge of tensor `tensor`.
int edgeOf(const CmControl &control, const std::string &tensor) {
  const auto &edges = control.dependences().edges();
  for (size_t e = 0; e < edges.size(); ++e)
    if (edges[e].tensor == tensor)
      return static_cast<int>(e);
  ADD_FAILURE() << "no edge of " << tensor;
  return -1;
}

TEST(CmSimTest, WeakenedLcusAreCaught) {
  // RAW: b, fast, waits for a's step before the one it reads.
  auto chip = build(std::string(kLine2) + kPipe2);
  CmSimOptions raw;
  raw.weakenedEdge = edgeOf(*chip->control, "a");
  CmSimResult r = simulateCm(chip->net(), chip->hw(), chip->m, *chip->control, raw);
  ASSERT_GT(r.violationCount(), 0);
  EXPECT_NE(r.violations.front().find("RAW violation"), std::string::npos) << r.violations.front();
  // WAR: with the ReLU on b, a runs ahead and fills b's buffer of 2 steps;
  // weakened, a overwrites the slot of its step j − 2 once b has finished
  // j − 3 instead of j − 2.
  std::string slow = kPipe2;
  slow.replace(slow.find("a_relu = relu(a);\n  b = conv(a_relu"), 47, "b = conv(a, K=2, R=1);\n  b_relu = relu(b);");
  chip = build(std::string(kLine2) + slow);
  CmSimOptions war;
  war.weakenedEdge = edgeOf(*chip->control, "a");
  war.weakenWar = true;
  r = simulateCm(chip->net(), chip->hw(), chip->m, *chip->control, war);
  ASSERT_GT(r.violationCount(), 0);
  EXPECT_NE(r.violations.front().find("WAR violation"), std::string::npos) << r.violations.front();
  // The same chip unweakened: no violation.
  EXPECT_TRUE(simulateCm(chip->net(), chip->hw(), chip->m, *chip->control).ok());
}

// A stage change of ResNet: from x, a 1 x 1 stride-2 projection p and a
// 3 x 3 stride-2 conv q then r, rejoined by the add on r's core. r's step
// (x, y) needs q's (x + 1, y + 1), which needs x's row 2x + 3: far beyond
// what p reads for the same pixel, so p runs ahead of the add until its
// buffer fills, and x's buffer to p fills behind it; the depth of p -> r
// from p's own dependences alone (2 steps) deadlocks the chip.
TEST(CmSimTest, ProjectionShortcutIsLive) {
  auto chip = build(std::string(R"(
hardware mesh23 {
  word = 8 bit;
  frequency = 1 GHz;
  core { crossbar = 256 x 256; sram = 64 KiB; }
  dpu { relu = 1; add = 1; psum = 1; }
  interconnect { topology = mesh; cores = 2 x 3; hop_latency = 1; hop_energy = 1 pJ; }
  gcu { input_core = 0; output_core = 5; }
}
network shortcut {
  batch N = 2;
  input x [C=4, X=8, Y=8];
  p = conv(x, K=8, R=1, stride=2);
  q = conv(x, K=8, R=3, stride=2, pad=1);
  r = conv(q, K=8, R=3, pad=1);
  s = add(p, r);
}
)"));
  CmSimResult r = simulateCm(chip->net(), chip->hw(), chip->m, *chip->control);
  EXPECT_TRUE(r.ok()) << (r.violations.empty() ? "outputs differ" : r.violations.front());
  const auto &edges = chip->control->dependences().edges();
  for (const auto &e : edges)
    if (e.tensor == "p") {
      EXPECT_GT(e.slots(), 2) << "p's buffer at the add was not widened";
    }
}

} // namespace
} // namespace dfl::cm
