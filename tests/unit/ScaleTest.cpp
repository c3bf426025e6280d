// Issue 20: work that scales with the structure, not with the values: the
// solver's blocked sizes, the layer lookup, the default solve budget.
#include "driver/DriverOptions.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "scheduler/kapla/TilingSpace.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace dfl;
using dfl::intra::TilingSpace;

namespace {
bool has(const std::vector<int64_t> &v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
} // namespace

TEST(BlockedSizes, SmallDimsKeepEveryStep) {
  // W = 224 over unit 1 (docs/solver.md): ceil(224/k) for k = 2..224 takes 28
  // distinct values, plus 224 itself: 29; the exact ones are its 12 divisors.
  EXPECT_EQ(TilingSpace::blockedSizes(1, 224).size(), 29u);
  EXPECT_EQ(TilingSpace::blockedSizes(1, 224, false).size(), 12u);
  // A prime K = 61 over 8 PEs gets tiles of 8: ceil(61/8) = 8.
  EXPECT_TRUE(has(TilingSpace::blockedSizes(1, 61), 8));
}

TEST(BlockedSizes, LargeDimsAreABoundedSet) {
  const int64_t batch = int64_t(1) << 31;
  const auto &sizes = TilingSpace::blockedSizes(1, batch);
  // Bounded: ceil(n/k) and k for k <= 64 (at most 2 x 63 + 1), the powers of
  // two and ceil(n/2^j) (at most 2 x 31), the divisors (here the 32 powers of
  // two again), and n: under 200 whatever n is.
  EXPECT_LT(sizes.size(), 200u);
  EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
  EXPECT_TRUE(std::adjacent_find(sizes.begin(), sizes.end()) == sizes.end());
  // The exact sizes of 2^31 are its 32 divisors, the powers of two.
  const auto &exact = TilingSpace::blockedSizes(1, batch, false);
  ASSERT_EQ(exact.size(), 32u);
  for (int j = 0; j <= 31; ++j)
    EXPECT_EQ(exact[static_cast<size_t>(j)], int64_t(1) << j);
  // Few steps: ceil(2^31 / 3) = 715827883 covers it in 3 (the last partial).
  EXPECT_TRUE(has(sizes, 715827883));
  EXPECT_EQ(sizes.front(), 1);
  EXPECT_EQ(sizes.back(), batch);
}

TEST(BlockedSizes, LargePrimeDim) {
  const int64_t prime = 2147483647;   // 2^31 - 1
  const auto &sizes = TilingSpace::blockedSizes(1, prime);
  EXPECT_LT(sizes.size(), 200u);
  // The divisors: 1 and itself only.
  EXPECT_EQ(TilingSpace::blockedSizes(1, prime, false), (std::vector<int64_t>{1, prime}));
  // Spread over 8 units: ceil((2^31 - 1) / 8) = 268435456 (2^28).
  EXPECT_TRUE(has(sizes, 268435456));
  // Over a unit of 16: n = ceil(prime / 16) = 2^27 steps of 16; the sizes are
  // multiples of 16 but the last, the whole dim.
  const auto &over16 = TilingSpace::blockedSizes(16, prime);
  EXPECT_LT(over16.size(), 200u);
  for (size_t i = 0; i + 1 < over16.size(); ++i)
    EXPECT_EQ(over16[i] % 16, 0) << over16[i];
  EXPECT_EQ(over16.back(), prime);
}

TEST(LayerLookup, FindsLayersNotAliasesOrInputs) {
  auto c = test::compile(R"(network n {
    batch N = 1;
    input data [C=4];
    fc1 = fc(data, K=4);
    r1 = relu(fc1);
    fc2 = fc(r1, K=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks.at(0);
  EXPECT_EQ(net.findLayer("fc1"), 0);
  EXPECT_EQ(net.findLayer("fc2"), 1);
  EXPECT_EQ(net.findLayer("r1"), -1);     // an alias of fc1, not a layer
  EXPECT_EQ(net.findLayer("data"), -1);   // an input
  EXPECT_EQ(net.findLayer("fc3"), -1);
}

TEST(SolveBudget, EveryDriverSolveHasADefaultTimeLimit) {
  driver::DriverOptions o;
  ASSERT_TRUE(o.timeLimitSeconds.has_value());
  EXPECT_EQ(*o.timeLimitSeconds, driver::kDefaultTimeLimitSeconds);
  EXPECT_EQ(driver::kDefaultTimeLimitSeconds, 600);
}

