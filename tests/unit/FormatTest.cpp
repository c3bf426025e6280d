// The one formatter (support/Format.h); expected texts by hand.
#include "support/Format.h"

#include <gtest/gtest.h>

using namespace dfl;

TEST(Format, Numbers) {
  EXPECT_EQ(formatFixed(2.0 / 3, 2), "0.67");
  EXPECT_EQ(formatFixed(-1e-12, 3), "0.000");   // a rounding residue is not negative
  EXPECT_EQ(formatFixed(-0.0, 1), "0.0");
  EXPECT_EQ(formatFixed(-0.0006, 3), "-0.001");  // a real negative keeps its sign
  EXPECT_EQ(formatTrimmed(2.50, 2), "2.5");   // trailing zero and nothing else dropped
  EXPECT_EQ(formatTrimmed(64.0, 2), "64");
  EXPECT_EQ(formatNumber(4096), "4096");        // exact integers in full
  EXPECT_EQ(formatNumber(1.0 / 3), "0.3333");   // else 4 significant digits
  EXPECT_EQ(formatNumber(1.5e20), "1.5e+20");   // beyond 2^53-ish: not printed as an integer
}

TEST(Format, Units) {
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");            // 1536 / 1024
  EXPECT_EQ(formatBytes(64), "64 B");
  EXPECT_EQ(formatEnergy(1234567), "1.235 uJ");       // 1234567 pJ = 1234.567 nJ = 1.234567 uJ
  EXPECT_EQ(formatScaled(4.09e9), "4.09 G");
  EXPECT_EQ(formatScaled(512), "512");
}

TEST(Format, Padding) {
  EXPECT_EQ(padLeft("ab", 4), "  ab");
  EXPECT_EQ(padRight("ab", 4), "ab  ");
  EXPECT_EQ(padRight("abcdef", 4), "abcdef");   // never truncated
}
