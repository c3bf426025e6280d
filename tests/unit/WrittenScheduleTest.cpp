// GraphTurbo plans rebuilt from schedules written in DFL
// (scheduler/graph/WrittenSchedule.h): what a schedule leaves out is filled
// in by GraphTurbo's own rules, and what it writes is what the plan runs.
#include "TestUtil.h"

#include "scheduler/graph/GraphTurbo.h"
#include "scheduler/graph/WrittenSchedule.h"

#include <gtest/gtest.h>

using namespace dfl;
using namespace dfl::graph;

namespace {

void expectSamePlan(const Plan &a, const Plan &b, const std::string &what) {
  EXPECT_EQ(a.cost.cycles, b.cost.cycles) << what;
  EXPECT_EQ(a.order, b.order) << what;
  EXPECT_EQ(a.orderKind, b.orderKind) << what;
  ASSERT_EQ(a.instances.size(), b.instances.size()) << what;
  for (size_t i = 0; i < a.instances.size(); ++i) {
    EXPECT_EQ(a.instances[i].binding, b.instances[i].binding) << what << " instance " << i;
    EXPECT_EQ(a.instances[i].declared, b.instances[i].declared) << what << " instance " << i;
    EXPECT_EQ(a.instances[i].scope, b.instances[i].scope) << what << " instance " << i;
  }
  for (int s = 0; s < 3; ++s)
    EXPECT_EQ(a.cost.tensors[s], b.cost.tensors[s]) << what;
}

} // namespace

// A schedule that writes nothing is GraphTurbo's plan (Algorithm 2, Eq. (1),
// the better order, Algorithm 4); one that writes GraphTurbo's sub-graphs
// and splits but no order and no instances is too; and one that writes the
// whole plan (scheduleOf) rebuilds it exactly.
TEST(WrittenSchedule, OmittedItemsFollowGraphTurbosRules) {
  for (const char *net : {"googlenet", "mobilenet_v2"}) {
    test::Compiled c = test::compile(std::string("import \"nets/") + net + ".dfl\"; import \"hw/dsa_4x8.dfl\";",
                                     AnalyzeOptions{false, 16}, {test::kStdlibRoot + "/stdlib"});
    ASSERT_EQ(c.diagnostics(), "") << net;
    GraphView g(c.model.networks[0], c.model.dsaHardware[0], 2);
    const Plan gt = scheduleGraphTurbo(g);
    std::vector<Issue> issues;
    auto empty = planFromSchedule(g, DsaSchedule{}, issues);
    ASSERT_TRUE(empty) << net;
    expectSamePlan(gt, *empty, std::string(net) + ", nothing written");
    DsaSchedule groups = scheduleOf(gt);
    groups.order = DsaSchedule::Order::Unset;
    groups.instances.clear();
    auto grouped = planFromSchedule(g, groups, issues);
    ASSERT_TRUE(grouped) << net;
    expectSamePlan(gt, *grouped, std::string(net) + ", sub-graphs written");
    auto whole = planFromSchedule(g, scheduleOf(gt), issues);
    ASSERT_TRUE(whole) << net;
    expectSamePlan(gt, *whole, std::string(net) + ", all written");
    EXPECT_TRUE(issues.empty()) << net;
  }
}

// Instance items for some sub-graphs only: the others get the plain binding
// and LB. x [C=4, X=16] -> a = conv 1x1 -> b = conv 1x1, one instance each,
// 2 cores. b is written `bind X 2`; a, not written, binds plainly: N is 1
// (2 does not divide it), C 4 takes the 2 cores: 1x2x1x1. b's cores each
// need a's channels whole but half its x, so b implies 1x1x2x1 for a, which
// is not a's binding: the edge redistributes (§3.5), and a stays declared
// in LB (Algorithm 4 is not run). b, the network's output, goes to DDR.
TEST(WrittenSchedule, UnwrittenInstancesBindPlainlyInLb) {
  test::Compiled c = test::compile(
      "network n { input x [C=4, X=16]; a = conv(x, K=4, R=1); b = conv(a, K=4, R=1); }\n"
      "hardware h { word = 8 bit; frequency = 1 GHz;\n"
      "  cluster { count = 1; cores = 2; gb = 1 MiB; gb_bandwidth = 8 B/cycle; }\n"
      "  core { lb = 4096 B; }\n"
      "  unit m { kind = matrix; rate = 4; }\n"
      "  unit v { kind = vector; rate = 2; }\n"
      "  ddr { bandwidth = 1 GB/s; }\n}\n"
      "schedule for n on h { subgraph sa = a; subgraph sb = b; instance sb[*] { bind X 2; } }\n");
  ASSERT_EQ(c.diagnostics(), "");
  ASSERT_EQ(c.model.dsaSchedules.size(), 1u);
  GraphView g(c.model.networks[0], c.model.dsaHardware[0]);
  std::vector<Issue> issues;
  auto p = planFromSchedule(g, c.model.dsaSchedules[0], issues);
  ASSERT_TRUE(p);
  EXPECT_TRUE(issues.empty());
  ASSERT_EQ(p->instances.size(), 2u);
  EXPECT_EQ(p->instances[0].binding, (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(p->instances[0].declared, Scope::LB);
  EXPECT_EQ(p->instances[1].binding, (std::vector<int64_t>{1, 1, 2, 1}));
  EXPECT_EQ(p->instances[1].declared, Scope::DDR);
  ASSERT_EQ(p->instances[1].moves.size(), 1u);
  EXPECT_EQ(p->instances[1].moves[0], Move::Redistribute);
  EXPECT_EQ(p->redistributionOps, 1);
  EXPECT_EQ(p->copyOps, 0);
}
