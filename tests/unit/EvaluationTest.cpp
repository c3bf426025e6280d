// The one evaluator (model/Evaluation.h): one small network on each of the
// three targets, evaluated through the interface, its energy and latency
// against numbers derived by hand (the derivations are the cited tests'; each
// is repeated here in short).
#include "TestUtil.h"

#include "backend/cm/CmSim.h"
#include "scheduler/analysis/Evaluation.h"
#include "scheduler/graph/GraphTurbo.h"
#include "scheduler/placement/CmPlacementReport.h"

#include <gtest/gtest.h>

namespace dfl {
namespace {

double part(const std::vector<EnergyPart> &parts, const std::string &name) {
  for (const EnergyPart &p : parts)
    if (p.name == name)
      return p.pj;
  ADD_FAILURE() << "no part " << name;
  return -1;
}

// Memory hierarchy: AnalysisTest.Conv1dEnergyComponents' conv (C=2, 8 inputs,
// K=2, R=3: 72 MACs) with a fused sigmoid, on 4 of 16 PEs, written here as DFL.
TEST(EvaluationTest, MemoryHierarchyByHand) {
  test::Compiled c = test::compile(R"(
network net { input x [C=2, X=8, Y=1]; l = conv(x, K=2, R=3, S=1); g = sigmoid(l); }
hardware hw {
  word = 16 bit; frequency = 1 GHz; static_energy = 1 pJ;
  mac { energy = 1 pJ; }
  activation { sigmoid = 0.5 pJ; relu = 9 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; read_energy = 1 pJ; write_energy = 2 pJ; fill_energy = 0 pJ;
               static_energy = 0.25 pJ; transfer = multicast; }
  level DRAM { read_energy = 100 pJ; write_energy = 200 pJ; bus_energy = 0.5 pJ; }
}
schedule for net on hw {
  layer l {
    REGF {
      tensor ifm [C=1, Xi=3];
      tensor wgt [C=1, K=1, R=3];
      tensor ofm [K=1, Xo=1];
      stack K += 1 repl 2;
      stack Xo += 1, Xi += 1 repl 2;
      update Xo += 2, Xi += 2;
      update C += 1;
    }
  }
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  const Schedule &s = c.model.schedules.at(0);
  Evaluation e = evaluationOf(c.model, s, analyzeSchedule(c.model, s));
  // MAC: 72 MACs at 1 pJ + 12 sigmoids at 0.5 pJ = 78; REGF: 216 reads at 1 pJ
  // + 72 writes at 2 pJ = 360; DRAM: 44 reads at 100 pJ + 24 writes at 200 pJ
  // = 9,200; bus: 116 words at 0.5 pJ = 58; static: 5 pJ a cycle for 18
  // cycles (72 MACs on 4 PEs) = 90. In all 9,786 pJ, 18 cycles.
  ASSERT_TRUE(e.energyPj && e.latencyCycles);
  EXPECT_DOUBLE_EQ(*e.energyPj, 9786);
  EXPECT_DOUBLE_EQ(*e.latencyCycles, 18);
  EXPECT_DOUBLE_EQ(part(e.parts, "MAC"), 78);
  EXPECT_DOUBLE_EQ(part(e.parts, "REGF"), 360);
  EXPECT_DOUBLE_EQ(part(e.parts, "DRAM"), 9200);
  EXPECT_DOUBLE_EQ(part(e.parts, "bus"), 58);
  EXPECT_DOUBLE_EQ(part(e.parts, "static"), 90);
  ASSERT_EQ(e.rows.size(), 1u);
  EXPECT_EQ(e.rows[0].name, "l");
  EXPECT_DOUBLE_EQ(*e.rows[0].energyPj, 9786);
  EXPECT_DOUBLE_EQ(*e.rows[0].utilization, 4.0 / 16);
  EXPECT_EQ(evaluationSummary(e), "energy 9.786 nJ, latency 18 cycles (0.000 ms at 1000 MHz)");
}

// Cluster/core DSA: GraphTurboTest.DdrBandwidthIsSharedByActiveClustersOnly's
// conv on one cluster. a = conv(x, K=4, R=1) on x [C=4, X=16], 8-bit words,
// 2 cores, matrix 4 MACs a cycle, GB 8 B/cycle, DDR 1 B/cycle: one instance
// on both cores, its output declared in DDR: 256 MACs / 8 = 32 cycles; the
// 16 B of weights DDR -> GB 16 and GB -> LB 2 cycles; x in and a out, 64 B
// each through DDR, 128 cycles: 2 + 16 + max(32, 128) = 146 cycles.
TEST(EvaluationTest, DsaByHand) {
  test::Compiled c = test::compile(R"(
network n { input x [C=4, X=16]; a = conv(x, K=4, R=1); }
hardware h { word = 8 bit; frequency = 1 GHz;
  cluster { count = 1; cores = 2; gb = 1 MiB; gb_bandwidth = 8 B/cycle; }
  core { lb = 4096 B; }
  unit m { kind = matrix; rate = 4; }
  unit v { kind = vector; rate = 2; }
  ddr { bandwidth = 1 GB/s; }
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks.at(0);
  const DsaHardware &hw = c.model.dsaHardware.at(0);
  graph::GraphView g(net, hw);
  graph::Plan plan;
  graph::SubGraph sg{{0}, {}};
  sg.split.peakBytes = graph::propagate(g, {0}, g.outputBox(0)).peakBytes;
  plan.subGraphs.push_back(sg);
  plan.instances = graph::splitInstances(g, plan.subGraphs);
  plan.order = graph::orderBfs(plan.instances);
  plan.instances.at(0).binding = graph::plainBinding(plan.instances[0].outBox, 2);
  plan.instances[0].declared = graph::Scope::DDR;
  graph::evaluate(g, plan);
  Evaluation e = graph::evaluationOf(net, hw, plan);
  ASSERT_TRUE(e.latencyCycles);
  EXPECT_DOUBLE_EQ(*e.latencyCycles, 146);
  EXPECT_FALSE(e.energyPj);   // GraphTurbo's model has no energy
  EXPECT_EQ(evaluationSummary(e), "energy not modelled, latency 146 cycles (0.000 ms at 1000 MHz)");
}

// Computational memory: CmSimTest.TwoLayerTimeline's chip and network, with
// an MxV priced at 3 pJ. a (with its ReLU) on core 0, b on core 1: 20
// word-hops an image (4 in from the GCU, 8 a -> b, 8 out to the GCU); every
// partition one tile of 4 MxVs an image (4 output pixels). Batch 2:
// MxV 2 x (4 + 4) x 3 pJ = 48 pJ, interconnect 2 x 20 x 1 pJ = 40 pJ. The
// run: the last image's output reaches the GCU at cycle 26 (the test's
// timeline).
TEST(EvaluationTest, ComputationalMemoryByHand) {
  test::Compiled c = test::compile(R"(
hardware line2 {
  word = 8 bit;
  frequency = 1 GHz;
  core { crossbar = 256 x 256; mvm_energy = 3 pJ; sram = 64 KiB; }
  dpu { relu = 1; add = 1; psum = 1; }
  interconnect { topology = mesh; cores = 1 x 2; hop_latency = 1; hop_energy = 1 pJ; }
  gcu { input_core = 0; output_core = 1; }
}
network pipe2 {
  batch N = 2;
  input x [C=1, X=1, Y=4];
  a = conv(x, K=2, R=1);
  a_relu = relu(a);
  b = conv(a_relu, K=2, R=1);
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks.at(0);
  const CmHardware &hw = c.model.cmHardware.at(0);
  auto p = partitionForCm(net, hw, *c.diags);
  ASSERT_TRUE(p.has_value());
  CmMapping m{std::move(*p), {}, CmObjective::Traffic};
  m.placement = placeOnCores(m.partitioning, hw);
  ASSERT_EQ(m.placement.status, CmPlacement::Status::Optimal);
  Evaluation e = evaluationOf(net, hw, m);
  ASSERT_TRUE(e.energyPj);
  EXPECT_DOUBLE_EQ(*e.energyPj, 88);
  EXPECT_DOUBLE_EQ(part(e.parts, "MxV"), 48);
  EXPECT_DOUBLE_EQ(part(e.parts, "interconnect"), 40);
  ASSERT_EQ(e.rows.size(), 2u);
  EXPECT_EQ(e.rows[0].name, "a");
  EXPECT_DOUBLE_EQ(*e.rows[0].energyPj, 24);
  EXPECT_FALSE(e.latencyCycles);   // the placement has no latency model
  std::string why;
  auto control = cm::CmControl::build(net, hw, m, why);
  ASSERT_TRUE(control) << why;
  e = cm::withSimulatedLatency(e, cm::simulateCm(net, hw, m, *control));
  ASSERT_TRUE(e.latencyCycles);
  EXPECT_DOUBLE_EQ(*e.latencyCycles, 26);
}

} // namespace
} // namespace dfl
