// Smoke test for the ANTLR 4 C++ runtime: character streams without a parser.
#include <antlr4-runtime.h>

#include <gtest/gtest.h>

#include <string>
#include <sys/types.h>

TEST(AntlrRuntimeSmokeTest, InputStreamLookaheadAndText) {
  antlr4::ANTLRInputStream input("conv2d x;");

  // "conv2d x;" is 6 + 1 + 1 + 1 = 9 characters.
  EXPECT_EQ(input.size(), 9u);
  EXPECT_EQ(input.index(), 0u);
  EXPECT_EQ(input.LA(1), static_cast<size_t>('c'));
  EXPECT_EQ(input.LA(2), static_cast<size_t>('o'));

  input.consume();
  EXPECT_EQ(input.index(), 1u);
  EXPECT_EQ(input.LA(1), static_cast<size_t>('o'));
  EXPECT_EQ(input.LA(-1), static_cast<size_t>('c'));  // looks back

  // Intervals are inclusive: [0,5] is "conv2d", [7,8] is "x;".
  EXPECT_EQ(input.getText(antlr4::misc::Interval(ssize_t{0}, ssize_t{5})),
            "conv2d");
  EXPECT_EQ(input.getText(antlr4::misc::Interval(ssize_t{7}, ssize_t{8})),
            "x;");

  // Past the end, LA returns EOF.
  input.seek(9);
  EXPECT_EQ(input.LA(1), static_cast<size_t>(antlr4::IntStream::EOF));
}

TEST(AntlrRuntimeSmokeTest, InputStreamDecodesUtf8ToCodePoints) {
  // "a≤3": 'a' (1 byte), U+2264 (3 bytes), '3' (1 byte) = 5 bytes,
  // but 3 code points; the stream works in code points.
  const std::string text = "a\u2264" "3";
  ASSERT_EQ(text.size(), 5u);
  antlr4::ANTLRInputStream input(text);
  EXPECT_EQ(input.size(), 3u);
  EXPECT_EQ(input.LA(2), 0x2264u);
  EXPECT_EQ(input.getText(antlr4::misc::Interval(ssize_t{1}, ssize_t{2})),
            "\u2264" "3");
}
