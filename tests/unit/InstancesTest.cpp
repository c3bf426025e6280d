// Instance-split temporal segments (scheduler/analysis/Instances.h, docs/directives.md
// §9 "Instances"): the spans each instance computes, the piece of a layer,
// and what cannot be split — derived by hand in the comments.
#include "scheduler/analysis/Instances.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

namespace dfl {
namespace {

// x [X=6, Y=12] -> a: 3x3 conv, pad 1 (6 x 12) -> p: 2x2 max pool, stride 2
// (3 x 6) -> c: 3x3 conv, pad 1 (3 x 6) -> f: fc.
const char *const kPadded = R"(network r {
  input x [C=2, X=6, Y=12];
  a = conv(x, K=4, R=3, S=3, pad=1);
  p = maxpool(a, R=2, S=2, stride=2);
  c = conv(p, K=2, R=3, S=3, pad=1);
  f = fc(c, K=10);
}
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 1; access_energy = 1 pJ; }
  level GBUF { capacity = 1 KiB; array = 1; access_energy = 2 pJ; }
  level DRAM { access_energy = 100 pJ; }
  pipeline { temporal = true; }
}
)";

TEST(Instances, SpansFollowTheWindowsBackwards) {
  test::Compiled c = test::compile(kPadded);
  ASSERT_FALSE(c.diags->hasErrors()) << c.diagnostics();
  const Network &net = c.model.networks[0];
  // Three instances of c's 6 rows: [0,2), [2,4), [4,6). c reads p at rows
  // o - 1 .. o + 1 (pad 1), clipped to [0,6): [0,3), [1,5), [3,6). p reads a
  // at 2o .. 2o + 1: [0,6), [2,10), [6,12).
  auto spans = instanceSpans(net, {0, 1, 2}, Dim::Yo, 3);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0], (std::vector<Span>{{0, 6}, {0, 3}, {0, 2}}));
  EXPECT_EQ(spans[1], (std::vector<Span>{{2, 10}, {1, 5}, {2, 4}}));
  EXPECT_EQ(spans[2], (std::vector<Span>{{6, 12}, {3, 6}, {4, 6}}));
}

TEST(Instances, APieceIsTheLayerCutToItsRows) {
  test::Compiled c = test::compile(kPadded);
  ASSERT_FALSE(c.diags->hasErrors()) << c.diagnostics();
  const Layer &a = c.model.networks[0].layers[0];
  // a's rows [0,6): its window starts at padded row 0, one row of padding
  // above x's first, and spans (6-1) + (3-1) + 1 = 8 padded rows: x rows
  // [0,7), 7 of them, one row of padding before, none after.
  Layer first = instanceLayer(a, Dim::Yo, {0, 6});
  EXPECT_EQ(at(first.bounds, Dim::Yo), 6);
  EXPECT_EQ(first.ifmShape.Y, 7);
  EXPECT_EQ(first.ofmShape.Y, 6);
  EXPECT_EQ(first.window.y.padBegin, 1);
  EXPECT_EQ(first.window.y.padEnd, 0);
  EXPECT_EQ(first.macs, a.macs / 2);
  // Rows [2,10): padded rows [2,12), x rows [1,11): 10 rows, no padding.
  Layer middle = instanceLayer(a, Dim::Yo, {2, 10});
  EXPECT_EQ(middle.ifmShape.Y, 10);
  EXPECT_EQ(middle.window.y.padBegin, 0);
  EXPECT_EQ(middle.window.y.padEnd, 0);
  EXPECT_EQ(middle.macs, a.macs / 12 * 8);
  // Rows [6,12): padded [6,14), x rows [5,12): 7 rows, one of padding after.
  Layer last = instanceLayer(a, Dim::Yo, {6, 12});
  EXPECT_EQ(last.ifmShape.Y, 7);
  EXPECT_EQ(last.window.y.padBegin, 0);
  EXPECT_EQ(last.window.y.padEnd, 1);
  // The columns and the nest's other extents are untouched.
  EXPECT_EQ(last.ifmShape.X, a.ifmShape.X);
  EXPECT_EQ(at(last.bounds, Dim::K), at(a.bounds, Dim::K));
}

TEST(Instances, PiecesGroupEqualShapes) {
  test::Compiled c = test::compile(kPadded);
  ASSERT_FALSE(c.diags->hasErrors()) << c.diagnostics();
  const Network &net = c.model.networks[0];
  // p's spans over the three instances above: [0,3), [1,5), [3,6): pieces of
  // 3, 4 and 3 rows, the first reading a's rows [0,6), the last [6,12):
  // equal shapes (no padding either side), so two pieces, the 4-row one first.
  LayerPieces p = layerPieces(net, {0, 1, 2}, Dim::Yo, instanceSpans(net, {0, 1, 2}, Dim::Yo, 3), 1);
  ASSERT_EQ(p.pieces.size(), 2u);
  EXPECT_EQ(p.pieces[0].ofmShape.Y, 4);
  EXPECT_EQ(p.counts, (std::vector<int64_t>{1, 2}));
}

TEST(Instances, WhatCannotBeSplit) {
  test::Compiled c = test::compile(kPadded);
  ASSERT_FALSE(c.diags->hasErrors()) << c.diagnostics();
  const Network &net = c.model.networks[0];
  EXPECT_EQ(instanceSplitRefusal(net, {0, 1, 2}, Dim::Yo, 3), "");
  EXPECT_EQ(instanceSplitRefusal(net, {0, 1, 2}, Dim::Xo, 3), "");
  // c has 6 rows and 3 columns.
  EXPECT_EQ(instanceSplitRefusal(net, {0, 1, 2}, Dim::Yo, 4),
            "4 does not divide Yo=6 of 'c', the segment's output");
  EXPECT_EQ(instanceSplitRefusal(net, {0, 1, 2}, Dim::Xo, 2),
            "2 does not divide Xo=3 of 'c', the segment's output");
  EXPECT_EQ(instanceSplitRefusal(net, {0, 1, 2}, Dim::K, 2),
            "instances are pieces of the output's rows (Yo) or columns (Xo)");
  EXPECT_EQ(instanceSplitRefusal(net, {0, 1, 2}, Dim::Yo, 1), "a split needs 2 instances or more");
  // {a, p, c, f} does not split: f reads all of c's rows.
  EXPECT_EQ(instanceSplitRefusal(net, {0, 1, 2, 3}, Dim::Yo, 2), "'f' (fc) has no Yo positions of its own");
  // {a, c} leaves out p, a's reader.
  EXPECT_EQ(instanceSplitRefusal(net, {0, 2}, Dim::Yo, 2), "'a' is read outside the segment; only its last layer may be");
}

} // namespace
} // namespace dfl
