// Simulator kernels against the analysis: every count the analysis states
// exactly (docs/directives.md §6) must equal the one the kernel counts while
// it runs the schedule.
#include "backend/Jit.h"
#include "backend/KernelRun.h"
#include "scheduler/Analysis.h"
#include "scheduler/Solver.h"
#include "model/ScheduleWriter.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace dfl::sim {
namespace {

struct Simulated {
  LayerResult analysis;
  KernelPlan plan;
  KernelResult run;
};

/// Seeded inputs in [-8, 7].
std::vector<Word> seeded(int64_t n, uint64_t seed) {
  std::vector<Word> v(static_cast<size_t>(n));
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (Word &w : v) {
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    w = static_cast<Word>((x * 0x2545f4914f6cdd1dull) >> 60) - 8;
  }
  return v;
}

Simulated simulate(const std::string &text, const std::string &layer, KernelFault fault = KernelFault::None) {
  test::Compiled comp = test::compile(text);
  EXPECT_EQ(comp.diagnostics(), "");
  Simulated out;
  if (comp.model.schedules.empty())
    return out;
  const Schedule &sched = comp.model.schedules[0];
  ScheduleResult res = analyzeSchedule(comp.model, sched);
  EXPECT_TRUE(res.valid && res.complete);
  const Network &net = networkOf(comp.model, sched);
  int li = -1;
  for (size_t i = 0; i < net.layers.size(); ++i)
    if (net.layers[i].name == layer)
      li = static_cast<int>(i);
  const LayerScheduleModel *ls = nullptr;
  for (const LayerScheduleModel &m : sched.layers)
    if (m.layer == li)
      ls = &m;
  EXPECT_TRUE(ls);
  if (!ls)
    return out;
  out.analysis = res.layers[static_cast<size_t>(li)];
  std::string why;
  auto plan = planKernel(net, li, hardwareOf(comp.model, sched), *ls, out.analysis, why);
  EXPECT_TRUE(plan) << why;
  if (!plan)
    return out;
  out.plan = *plan;
  static Jit jit;
  CompiledKernel k = jit.compile(*plan, fault);
  std::vector<Word> ifm = seeded(plan->tensorWords(TensorRole::Ifm), 1);
  std::vector<Word> wgt = plan->role(TensorRole::Wgt).present ? seeded(plan->tensorWords(TensorRole::Wgt), 2)
                                                              : std::vector<Word>{};
  out.run = runKernel(*plan, k, {&ifm, &wgt, nullptr});
  return out;
}

/// Every count, per level and role, equal to the analysis'.
void expectCountsEqual(const Simulated &s) {
  ASSERT_EQ(s.run.counts.levels.size(), s.analysis.levels.size());
  for (size_t l = 0; l < s.analysis.levels.size(); ++l)
    for (size_t r = 0; r < kNumRoles; ++r) {
      const LevelAccesses &a = s.analysis.levels[l].accesses;
      const KernelCounts::Role &k = s.run.counts.levels[l][r];
      const char *role = roleName(static_cast<TensorRole>(r));
      EXPECT_EQ(k.reads, a.reads[r]) << "reads of " << role << " at level " << l;
      EXPECT_EQ(k.writes, a.writes[r]) << "writes of " << role << " at level " << l;
      EXPECT_EQ(k.same, a.sameLevel[r]) << "same-level " << role << " at level " << l;
    }
  EXPECT_EQ(s.run.counts.macs, s.analysis.work);
}

const char *const kTwoLevel = R"(
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; transfer = multicast; }
  level DRAM { access_energy = 100 pJ; }
}
)";

// 1-D conv: C=2, 8 inputs, K=2, R=3 -> Xo=6: 72 MACs.
TEST(KernelTest, Conv1dTwoLevels) {
  Simulated s = simulate(std::string(R"(
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
)") + kTwoLevel, "l");
  expectCountsEqual(s);
  // By hand (tests/unit/AnalysisTest.cpp, Conv1dTwoLevels): 20 ifm words from DRAM.
  EXPECT_EQ(s.run.counts.levels[1][0].reads, 20);
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

const char *const kLayers = R"(
network net {
  batch N = 2;
  input x [C=3, X=9, Y=9];
  c1 = conv(x, K=5, R=3, stride=2, pad=1);
  p1 = maxpool(c1, R=2, stride=2, ceil=true);
  d1 = dwconv(c1, R=3, pad=1);
  a1 = avgpool(d1, R=2, stride=2);
  f1 = fc(a1, K=7);
}
)";

/// Every layer of the solver's schedule of kLayers on kNodes, counted.
TEST(KernelTest, SolverSchedulesCountLikeTheAnalysis) {
  test::Compiled comp = test::compile(std::string(kLayers) + kNodes);
  ASSERT_EQ(comp.diagnostics(), "");
  Schedule given;
  given.network = 0, given.hardware = 0;
  SolveFailure failure;
  SolverOptions o;
  o.pipelining = false;
  auto sol = makeSolver("kapla")->solve(comp.model, given, o, failure);
  ASSERT_TRUE(sol) << failure;
  const Network &net = comp.model.networks[0];
  static Jit jit;
  for (const LayerScheduleModel &ls : sol->schedule.layers) {
    SCOPED_TRACE(printLayerBlock(net, comp.model.hardware[0], ls, 0));
    Simulated s;
    s.analysis = sol->result.layers[static_cast<size_t>(ls.layer)];
    std::string why;
    auto plan = planKernel(net, ls.layer, comp.model.hardware[0], ls, s.analysis, why);
    ASSERT_TRUE(plan) << why;
    CompiledKernel k = jit.compile(*plan);
    std::vector<Word> ifm = seeded(plan->tensorWords(TensorRole::Ifm), 1);
    std::vector<Word> wgt = plan->role(TensorRole::Wgt).present ? seeded(plan->tensorWords(TensorRole::Wgt), 2)
                                                                : std::vector<Word>{};
    s.run = runKernel(*plan, k, {&ifm, &wgt, nullptr});
    expectCountsEqual(s);
  }
}

} // namespace
} // namespace dfl::sim
