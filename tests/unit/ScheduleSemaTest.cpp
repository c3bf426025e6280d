#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace dfl;
using dfl::test::compile;

namespace {
const char *kPrelude = R"(network n {
  batch N = 4;
  input x [C=3, X=8, Y=8];
  c1 = conv(x, K=16, R=3, pad=1);
  p1 = maxpool(c1, R=2);
}
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; }
  level DRAM { access_energy = 200 pJ; }
}
)";
} // namespace

TEST(ScheduleSema, DirectivesBecomeTheModel) {
  auto c = compile(std::string(kPrelude) + R"(schedule for n on h {
  segment c1, p1 pipelined;
  layer c1 {
    REGF {
      tensor ifm [C=1, Xi=3, Yi=1] shr 2;
      tensor wgt [K=1, C=1, R=3, S=1];
      stack Yo += 1, Yi += 1 repl 4;
      stack repl 2;
      update Xi += 1, Xo += 1;
    }
  }
})");
  ASSERT_EQ(c.diagnostics(), "");
  const Schedule &s = c.model.schedules.at(0);
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].layers, (std::vector<int>{0, 1}));
  EXPECT_TRUE(s.segments[0].pipelined);
  ASSERT_EQ(s.layers.size(), 1u);
  const LevelDirectives &d = s.layers[0].levels.at(0);
  EXPECT_EQ(d.level, 0);
  ASSERT_EQ(d.tensors.size(), 2u);
  EXPECT_EQ(at(d.tensors[0].sizes, Dim::Xi), 3);
  EXPECT_EQ(d.tensors[0].shr, 2);
  EXPECT_EQ(at(d.tensors[0].sizes, Dim::N), 0);   // not given
  ASSERT_EQ(d.stacks.size(), 2u);
  EXPECT_EQ(d.stacks[0].repl, 4);
  EXPECT_EQ(d.stacks[1].shifts.size(), 0u);
  ASSERT_EQ(d.updates.size(), 1u);
  EXPECT_EQ(d.updates[0].steps[1], std::make_pair(Dim::Xo, int64_t{1}));
}

TEST(ScheduleSema, Errors) {
  auto c = compile(std::string(kPrelude) + R"(schedule for n on h {
  segment c1, x;
  layer p1 {
    REGF { tensor wgt [C=1]; tensor ifm [K=1, Xi=11]; update Q += 1; stack C += 0; }
    GBUF { }
  }
})");
  // p1 (a pool) has no weights; K is not an ifm dim; Xi may be at most 8 + 2*0 = 8 for p1.
  // Columns of line 15 counted by hand: `wgt` at 19, `K` at 42, `11` at 50, `Q` at 62, `0` at 81.
  EXPECT_EQ(c.diagnostics(),
            "13:15: E0202 unknown layer 'x'; it is an input of network 'n', not a layer\n"
            "15:19: E0601 layer 'p1' (maxpool) has no tensor 'wgt'; its tensors are ifm and ofm\n"
            "15:42: E0602 dimension 'K' is not a dimension of tensor ifm of layer 'p1'; expected one of N, C, Xi or Yi\n"
            "15:50: E0607 Xi of tensor ifm is 11, but layer 'p1' only has Xi=8\n"
            "15:62: E0603 'Q' is not a loop dimension of layer 'p1' (maxpool); expected one of N, C, K, Xi, Yi, Xo, "
            "Yo, R or S\n"
            "15:81: E0604 the shift of C must be positive, got 0\n"
            "16:5: E0202 unknown level 'GBUF' (hardware 'h' has REGF and DRAM)\n");
}
