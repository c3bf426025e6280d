// The one formatter (support/Format.h) and the charts' axes (support/Svg.h);
// expected texts and ticks by hand.
#include "support/Format.h"
#include "support/Svg.h"

#include <gtest/gtest.h>

#include <cmath>

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

// Every chart's tick loop runs over a count (support/Svg.h): a step below the
// values' resolution once never advanced and the trade-off plot grew until
// bad_alloc (two chains' latencies a few ULPs apart).
TEST(Svg, TickCountIsBounded) {
  EXPECT_EQ(svg::tickCount(10, 2, 0.5), 6u);          // 0, 2, 4, 6, 8, 10
  EXPECT_EQ(svg::tickCount(9.9, 2, 1e-9), 5u);        // 0 .. 8: 10 is past 9.9
  EXPECT_EQ(svg::tickCount(100, 1e-9, 0), svg::kMaxTicks);   // 10^11 + 1 ticks: capped
  EXPECT_EQ(svg::tickCount(std::nan(""), 1, 0.5), 1u);
  EXPECT_EQ(svg::tickCount(1, 0, 0.5), 1u);           // a zero step: 1/0 is infinite
  EXPECT_EQ(svg::tickCount(HUGE_VAL, 1, 0.5), 1u);
}

TEST(Svg, AxisOverValuesAFewUlpsApart) {
  // 1024 and the next double (1024 + 2^-42): a span below a billionth of the
  // magnitude is widened like a zero span, by 1024 / 10 = 102.4; tickStep
  // gives 50 (102.4 / 5 = 20.48, above 10 and 20); lo = floor(1024 / 50) * 50
  // = 1000, hi = ceil(20.48...) * 50 = 1050: two ticks, no decimals.
  svg::Axis a(1024, std::nextafter(1024.0, 2048.0));
  EXPECT_EQ(a.step, 50);
  EXPECT_EQ(a.lo, 1000);
  EXPECT_EQ(a.hi, 1050);
  EXPECT_EQ(a.ticks, 2u);
  EXPECT_EQ(a.digits, 0);
  EXPECT_EQ(a.tick(1), 1050);
  // A NaN or an infinity: the axis [0, 1], step 0.2 (1 / 5), six ticks.
  svg::Axis n(std::nan(""), HUGE_VAL);
  EXPECT_EQ(n.lo, 0);
  EXPECT_EQ(n.hi, 1);
  EXPECT_EQ(n.ticks, 6u);
  EXPECT_EQ(n.digits, 1);
  // A real difference of a few percent keeps its zoom: [97, 103], span 6,
  // step 2 (6 / 5 = 1.2, above 1): 96 .. 104, five ticks.
  svg::Axis p(97, 103);
  EXPECT_EQ(p.lo, 96);
  EXPECT_EQ(p.hi, 104);
  EXPECT_EQ(p.ticks, 5u);
}
