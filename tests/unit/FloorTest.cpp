// The floors (scheduler/analysis/Floors.h, docs/directives.md §14): by hand
// on one layer, and below every layer of the solver's schedules of stdlib
// networks on every memory-hierarchy template — a floor above a schedule's
// figure would not be a floor.
#include "scheduler/analysis/Floors.h"
#include "scheduler/embedding/IntrinsicUnits.h"
#include "scheduler/kapla/Solver.h"
#include "frontend/Loader.h"
#include "frontend/Sema.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace dfl;

namespace {

Solution solve(const Model &model) {
  Schedule s;
  s.network = 0;
  s.hardware = 0;
  SolveFailure failure;
  auto sol = makeSolver("kapla")->solve(model, s, SolverOptions{}, failure);
  EXPECT_TRUE(sol.has_value()) << failure;
  return sol ? *sol : Solution{};
}

} // namespace

// test::kSmallConv: one conv, N=2, C=2, K=4, 4 x 2 outputs, 3 x 3 filter
// (pad 1): 2·4·2·4·2·3·3 = 1,152 MACs. Compute: each MAC 1 pJ, and at REGF
// (1 pJ a read or write) ifm, wgt and psum read, psum written: 1,152 ·
// (1 + 4) = 5,760 pJ. DRAM (200
// pJ a word): 4·2·3·3 = 72 weights read, 2·2·4·2 = 32 inputs read (stride 1
// under a 3-tap window, the last window at 3 - 1 + 3 = 5 >= 4 columns and
// 1 - 1 + 3 = 3 >= 2 rows: every word is read), 2·4·4·2 = 64 outputs
// written: 168 · 200 = 33,600 pJ. On chip each of those 168 words crosses
// both boundaries once: a weight or input is written into GBUF (6 pJ), read
// out of it (6 pJ) and written into a REGF (1 pJ), an output read out of a
// REGF (1 pJ), written into GBUF and read out of it (6 + 6 pJ): 168 · 13 =
// 2,184 pJ (no bus energy): 41,544 pJ (no static energy). Latency:
// 1,152 MACs on 2 · 2 · 2 = 8 PEs, 144 cycles, against 168 words · 2 B / 8 B
// a cycle = 42 cycles: 144, compute binds.
TEST(Floors, ByHandOnOneConv) {
  auto c = test::compile(test::kSmallConv);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  const Hardware &hw = c.model.hardware[0];
  EXPECT_DOUBLE_EQ(computeFloorPj(net, 0, hw), 5760);
  EXPECT_TRUE(readsEveryInput(net.layers[0]));
  const LayerFloor f = layerFloor(net, 0, hw, 0, 0);
  EXPECT_DOUBLE_EQ(f.energyPj, 41544);
  EXPECT_DOUBLE_EQ(f.latencyCycles, 144);
  EXPECT_EQ(bindingName(hw, f.binding), "compute");
  Solution s = solve(c.model);
  ASSERT_TRUE(s.result.valid && s.result.complete);
  const ScheduleFloors all = scheduleFloors(net, hw, s.result);
  EXPECT_DOUBLE_EQ(all.total.energyPj, 41544);
  EXPECT_GE(s.result.energyPj, f.energyPj);
  EXPECT_GE(s.result.latencyCycles, f.latencyCycles);
}

// A causal matmul's floors count the triangle: 4 queries and keys, 2 heads
// of 2 channels, 10 (query, key) pairs per head: 2·10·2 = 40 MACs (the
// square's 64). Compute: 40 · (1 + 4) = 200 pJ (the square's 320). The
// solver's schedule stays at or above every floor.
TEST(Floors, CausalCountsTheTriangle) {
  std::string text = test::kSmallConv;
  text.replace(text.find("network n {"), text.find("hardware h") - text.find("network n {"), R"(network n {
  input q [C=4, X=4];
  input k [C=4, X=4];
  s = matmul(q, k, heads=2, causal=true);
}
)");
  auto c = test::compile(text);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  const Hardware &hw = c.model.hardware[0];
  EXPECT_EQ(net.layers[0].macs, 40);
  EXPECT_DOUBLE_EQ(computeFloorPj(net, 0, hw), 200);
  const LayerFloor f = layerFloor(net, 0, hw, 0, 0);
  Solution s = solve(c.model);
  ASSERT_TRUE(s.result.valid && s.result.complete);
  EXPECT_DOUBLE_EQ(s.result.layers[0].work, 40);
  EXPECT_GE(s.result.energyPj, f.energyPj);
  EXPECT_GE(s.result.latencyCycles, f.latencyCycles);
}

// Every layer of the solver's schedule, and the whole run, at or above its floor.
TEST(Floors, BelowEverySchedule) {
  const std::string &root = test::kStdlibRoot;
  int layers = 0;
  std::vector<double> onChipShare;
  for (const char *hwName : {"eyeriss_multinode", "eyeriss_multinode_4x4", "edge_systolic", "vta_gemm", "eyeriss_pspad"})
    for (const char *netName : {"mlp", "lstm", "alexnet", "resnet20", "mobilenet", "vit_b16"})
      for (bool training : {false, true}) {
        SourceManager sm;
        DiagnosticsEngine diags(sm);
        LoadedFiles files = loadFiles({root + "/stdlib/nets/" + netName + ".dfl", root + "/stdlib/hw/" + hwName + ".dfl"},
                                      LoadOptions{{root}}, sm, diags);
        Model model = analyze(files.files, diags, AnalyzeOptions{training, 2});
        ASSERT_FALSE(diags.hasErrors()) << netName << " on " << hwName;
        embedIntrinsicUnits(model);   // the driver's stage (vta_gemm's PEs compute an intrinsic)
        Solution s = solve(model);
        ASSERT_TRUE(s.result.valid && s.result.complete) << netName << " on " << hwName;
        const ScheduleFloors f = scheduleFloors(model.networks[0], model.hardware[0], s.result);
        const std::string where = std::string(netName) + " on " + hwName + (training ? " --train" : "");
        for (const LayerResult &lr : s.result.layers) {
          const LayerFloor &lf = f.layers[static_cast<size_t>(lr.layer)];
          const std::string &name = model.networks[0].layers[static_cast<size_t>(lr.layer)].name;
          EXPECT_GE(lr.energyPj, lf.energyPj * (1 - 1e-9)) << where << ": " << name;
          // The on-chip floor holds boundary by boundary, in the layer's segment.
          auto [first, last] = std::pair{lr.layer, lr.layer};
          for (const SegmentResult &seg : s.result.segments)
            if (std::find(seg.layers.begin(), seg.layers.end(), lr.layer) != seg.layers.end())
              std::tie(first, last) = std::pair{*std::min_element(seg.layers.begin(), seg.layers.end()),
                                                *std::max_element(seg.layers.begin(), seg.layers.end())};
          const OnChipFloor onChip = onChipFloor(model.networks[0], lr.layer, model.hardware[0], first, last);
          for (size_t b = 0; b + 1 < lr.levels.size(); ++b)
            EXPECT_LE(onChip.boundaryPj[b], lr.levels[b].boundaryEnergyPj * (1 + 1e-9) + 1e-9)
                << where << ": " << name << " boundary " << b;
          onChipShare.push_back(lr.energyPj > 0 ? onChip.totalPj() / lr.energyPj : 0);
          EXPECT_GE(lr.latencyCycles, lf.latencyCycles * (1 - 1e-9)) << where << ": " << name;
          EXPECT_GT(lf.energyPj, 0) << where << ": " << name;
          ++layers;
        }
        EXPECT_GE(s.result.energyPj, f.total.energyPj * (1 - 1e-9)) << where;
        EXPECT_GE(s.result.latencyCycles, f.total.latencyCycles * (1 - 1e-9)) << where;
      }
  EXPECT_GT(layers, 500);
  // Not vacuous: on some layer the on-chip floor is a tenth of the energy.
  EXPECT_GT(*std::max_element(onChipShare.begin(), onChipShare.end()), 0.1);
}
