#include "support/SourceManager.h"

#include <gtest/gtest.h>

using namespace dfl;

TEST(SourceManager, LineColumnAndLineText) {
  SourceManager sm;
  // Offsets: 'a'=0 'b'=1 '\n'=2 'c'=3 '\r'=4 '\n'=5 'd'=6
  uint32_t id = sm.addBuffer("t.dfl", "ab\nc\r\nd");
  EXPECT_EQ(sm.lineCol({id, 0}).line, 1u);
  EXPECT_EQ(sm.lineCol({id, 1}).column, 2u);
  EXPECT_EQ(sm.lineCol({id, 3}).line, 2u);
  EXPECT_EQ(sm.lineCol({id, 6}).line, 3u);
  EXPECT_EQ(sm.lineCol({id, 6}).column, 1u);
  EXPECT_EQ(sm.lineText(id, 2), "c");   // the \r is not part of the line
  EXPECT_EQ(sm.lineText(id, 3), "d");
  EXPECT_EQ(sm.offsetOf(id, {3, 1}), 6u);
  EXPECT_EQ(sm.textOf({{id, 3}, {id, 4}}), "c");
}

TEST(SourceManager, LoneCarriageReturnEndsALine) {
  SourceManager sm;
  // Offsets: 'a'=0 '\r'=1 'b'=2 '\r'=3 '\n'=4 'c'=5
  uint32_t id = sm.addBuffer("t.dfl", "a\rb\r\nc");
  EXPECT_EQ(sm.lineCol({id, 2}).line, 2u);
  EXPECT_EQ(sm.lineCol({id, 5}).line, 3u);
  EXPECT_EQ(sm.lineText(id, 1), "a");
  EXPECT_EQ(sm.lineText(id, 2), "b");
  EXPECT_EQ(sm.lineText(id, 3), "c");
}
