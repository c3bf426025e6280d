// The loop-nest IR on its own, nests built by hand (this executable links
// dfl_model alone): affine expressions, the isl text the isl stage parses,
// the KAPLA nine-dim view, the window formula, a backward layer's nest, and
// the halos of a piece of a layer's output (model/Geometry.h).
#include "model/Geometry.h"
#include "model/LoopNest.h"
#include "model/TrainingGraph.h"

#include <gtest/gtest.h>

using namespace dfl;

namespace {

/// conv1 = conv(data [C=3, X=8, Y=8], K=16, R=3, stride=2, pad=1), batch 2,
/// as sema builds it: Xo = ⌊(8 + 2·1 − 3)/2⌋ + 1 = 4 (likewise Yo), and the
/// input is read at x = 2·xo + r − 1.
LoopNest conv3x3s2p1(const std::string &name = "conv1", const std::string &input = "data") {
  LoopNest nest;
  nest.name = name;
  AffineExpr n = nest.addDim("n", 2, {Dim::N});
  AffineExpr k = nest.addDim("k", 16, {Dim::K}), c = nest.addDim("c", 3, {Dim::C});
  AffineExpr xo = nest.addDim("xo", 4, {Dim::Xo}), yo = nest.addDim("yo", 4, {Dim::Yo});
  AffineExpr r = nest.addDim("r", 3, {Dim::R}), s = nest.addDim("s", 3, {Dim::S});
  nest.accesses.push_back({TensorRole::Ifm, input, {n, c, 2 * xo + r - 1, 2 * yo + s - 1}, {2, 3, 8, 8}, {}});
  nest.accesses.push_back({TensorRole::Wgt, name + "__wgt", {k, c, r, s}, {16, 3, 3, 3}, {}});
  nest.accesses.push_back({TensorRole::Ofm, name, {n, k, xo, yo}, {2, 16, 4, 4}, {}});
  return nest;
}

/// cat = concat(a [C=3], b [C=5]) on 2x2, batch 1: b supplies channels
/// 3..7, read at c − 3 where c − 3 >= 0 and 3 + 5 − 1 − c = 7 − c >= 0.
LoopNest concat3and5() {
  LoopNest nest;
  nest.name = "cat";
  nest.statement = Statement::Copy;
  AffineExpr n = nest.addDim("n", 1, {Dim::N}), c = nest.addDim("c", 8, {Dim::C, Dim::K});
  AffineExpr x = nest.addDim("xo", 2, {Dim::Xo}), y = nest.addDim("yo", 2, {Dim::Yo});
  nest.accesses.push_back({TensorRole::Ifm, "a", {n, c, x, y}, {1, 3, 2, 2}, {c, 2 - c}});
  nest.accesses.push_back({TensorRole::Ifm, "b", {n, c - 3, x, y}, {1, 5, 2, 2}, {c - 3, 7 - c}});
  nest.accesses.push_back({TensorRole::Ofm, "cat", {n, c, x, y}, {1, 8, 2, 2}, {}});
  return nest;
}

} // namespace

TEST(AffineExpr, ArithmeticKeepsTermsSortedWithoutZeros) {
  AffineExpr x = AffineExpr::dim(3), r = AffineExpr::dim(1);
  AffineExpr e = 2 * x + r - 1;   // terms by dimension: r (1) then x (3)
  ASSERT_EQ(e.terms.size(), 2u);
  EXPECT_EQ(e.terms[0], (std::pair<int, int64_t>{1, 1}));
  EXPECT_EQ(e.terms[1], (std::pair<int, int64_t>{3, 2}));
  EXPECT_EQ(e.constant, -1);
  EXPECT_EQ(e.coefficient(3), 2);
  EXPECT_EQ(e.coefficient(0), 0);
  // At (_, r=2, _, x=3): 2·3 + 2 − 1 = 7.
  EXPECT_EQ(e.evaluate({0, 2, 0, 3}), 7);
  // e − 2x leaves r − 1: the x term cancels and is dropped.
  AffineExpr rest = e - 2 * x;
  EXPECT_EQ(rest, r - 1);
  EXPECT_EQ(rest.terms.size(), 1u);
}

TEST(LoopNest, ConvPrintsIslSetAndAccessMaps) {
  LoopNest nest = conv3x3s2p1();
  EXPECT_EQ(nest.toIslSet(), "{ conv1[n, k, c, xo, yo, r, s] : 0 <= n < 2 and 0 <= k < 16 and 0 <= c < 3 and "
                             "0 <= xo < 4 and 0 <= yo < 4 and 0 <= r < 3 and 0 <= s < 3 }");
  EXPECT_EQ(nest.toIslMap(nest.accesses[0]),
            "{ conv1[n, k, c, xo, yo, r, s] -> data[n, c, 2*xo + r - 1, 2*yo + s - 1] }");
  EXPECT_EQ(nest.toIslMap(nest.accesses[1]), "{ conv1[n, k, c, xo, yo, r, s] -> conv1__wgt[k, c, r, s] }");
  EXPECT_EQ(nest.toIslMap(nest.accesses[2]), "{ conv1[n, k, c, xo, yo, r, s] -> conv1[n, k, xo, yo] }");
  EXPECT_EQ(LoopNest::toIslTensorSet(nest.accesses[0]),
            "{ data[i0, i1, i2, i3] : 0 <= i0 < 2 and 0 <= i1 < 3 and 0 <= i2 < 8 and 0 <= i3 < 8 }");
  EXPECT_EQ(nest.text(), "ofm conv1[n, k, xo, yo] <- mac(ifm data[n, c, 2*xo + r - 1, 2*yo + s - 1], "
                         "wgt conv1__wgt[k, c, r, s])");
  // 2·16·3·4·4·3·3 = 13824 MACs; the output is not indexed by c, r, s (dims 2, 5, 6).
  EXPECT_EQ(nest.points(), 13824);
  EXPECT_EQ(nest.reductionDims(), (std::vector<int>{2, 5, 6}));
}

TEST(LoopNest, PaddingIsAnIndexOutsideTheTensor) {
  LoopNest nest = conv3x3s2p1();
  const AffineExpr &x = nest.accesses[0].index[2];
  // Point (n, k, c, xo, yo, r, s): xo = 0, r = 0 reads x = −1, the left padding;
  // xo = 3, r = 2 reads x = 2·3 + 2 − 1 = 7, the last column of the 8-wide input.
  EXPECT_EQ(x.evaluate({0, 0, 0, 0, 0, 0, 0}), -1);
  EXPECT_EQ(x.evaluate({0, 0, 0, 3, 0, 2, 0}), 7);
}

TEST(LoopNest, GuardedAccessOfAConcatenatedOperand) {
  LoopNest nest = concat3and5();
  EXPECT_EQ(nest.toIslMap(nest.accesses[1]),
            "{ cat[n, c, xo, yo] -> b[n, c - 3, xo, yo] : c - 3 >= 0 and -c + 7 >= 0 }");
  // One channel dim that is both C and K: C = K = 8; Xi = Xo = 2.
  KaplaView v = kaplaView(nest);
  EXPECT_TRUE(v.channelWise);
  EXPECT_EQ(at(v.bounds, Dim::C), 8);
  EXPECT_EQ(at(v.bounds, Dim::K), 8);
  EXPECT_EQ(at(v.bounds, Dim::Xi), 2);
  EXPECT_EQ(at(v.bounds, Dim::R), 1);
}

TEST(LoopNest, HalosOfTwoInstancesOfAStridedConv) {
  // conv3x3s2p1's output [2, 16, 4, 4] cut into 2 equal pieces along Xo
  // (tensor dim 2): columns [0, 1] and [2, 3].
  LoopNest nest = conv3x3s2p1();
  const Access &ofm = nest.accesses[2];
  EXPECT_EQ(equalPiece({0, 3}, 2, 0), (Interval{0, 1}));
  EXPECT_EQ(equalPiece({0, 3}, 2, 1), (Interval{2, 3}));
  // The second piece: xo in [2, 3], every other dim whole (n, k, c, xo, yo, r, s).
  IntervalBox piece{{0, 1}, {0, 15}, {2, 3}, {0, 3}};
  const IntervalBox it = outputPreimage(nest, ofm, piece);
  EXPECT_EQ(it, (IntervalBox{{0, 1}, {0, 15}, {0, 2}, {2, 3}, {0, 3}, {0, 2}, {0, 2}}));
  // x = 2·xo + r − 1 over xo in [2, 3], r in [0, 2]: [3, 7], inside the
  // 8-wide input; y over the whole yo: [−1, 7], clipped to [0, 7].
  EXPECT_EQ(accessImage(nest.accesses[0], it), (IntervalBox{{0, 1}, {0, 2}, {3, 7}, {0, 7}}));
  // The first piece reads x in [−1, 3], clipped to [0, 3]: column 3 is both
  // pieces' halo. The weights are whole either way.
  piece[2] = {0, 1};
  const IntervalBox first = outputPreimage(nest, ofm, piece);
  EXPECT_EQ(accessImage(nest.accesses[0], first), (IntervalBox{{0, 1}, {0, 2}, {0, 3}, {0, 7}}));
  EXPECT_EQ(accessImage(nest.accesses[1], first), (IntervalBox{{0, 15}, {0, 2}, {0, 2}, {0, 2}}));
}

TEST(LoopNest, HalosOfAScatterNeedEveryInputATapOfWhichReaches) {
  // A conv_transpose's written index xi·2 + r − 1 (R = 4): output columns
  // [4, 7] need every xi with some tap there: 2·xi + 3 − 1 >= 4 and 2·xi − 1
  // <= 7, xi in [1, 4] (xi = 1 reaches column 4 with r = 3).
  LoopNest nest;
  nest.name = "u";
  AffineExpr xi = nest.addDim("xi", 6, {Dim::Xo}), r = nest.addDim("r", 4, {Dim::R});
  nest.accesses.push_back({TensorRole::Ifm, "y", {xi * 2 + r - 1}, {12}, {}});
  nest.accesses.push_back({TensorRole::Ofm, "x", {xi}, {6}, {}});
  nest.output = TensorRole::Ifm;
  const IntervalBox it = outputPreimage(nest, nest.accesses[0], {{4, 7}});
  EXPECT_EQ(it, (IntervalBox{{1, 4}, {0, 3}}));
  EXPECT_EQ(accessImage(nest.accesses[1], it), (IntervalBox{{1, 4}}));
}

TEST(LoopNest, HalosOfAChannelSliceOfAConcatenation) {
  // concat3and5's channels [0, 2] read a's [0, 2] and nothing of b, whose
  // guard c − 3 >= 0 leaves no c in [0, 2].
  LoopNest nest = concat3and5();
  const IntervalBox it = outputPreimage(nest, nest.accesses[2], {{0, 0}, {0, 2}, {0, 1}, {0, 1}});
  EXPECT_EQ(it, (IntervalBox{{0, 0}, {0, 2}, {0, 1}, {0, 1}}));
  EXPECT_EQ(accessImage(nest.accesses[0], it), (IntervalBox{{0, 0}, {0, 2}, {0, 1}, {0, 1}}));
  const IntervalBox none = accessImage(nest.accesses[1], it);
  EXPECT_TRUE(boxEmpty(none));
  // An empty box adds nothing to a hull.
  IntervalBox hull = accessImage(nest.accesses[0], it);
  hullInto(hull, none);
  EXPECT_EQ(hull, (IntervalBox{{0, 0}, {0, 2}, {0, 1}, {0, 1}}));
}

TEST(LoopNest, KaplaViewOfAConv) {
  KaplaView v = kaplaView(conv3x3s2p1());
  // Each bound is its one dim's extent; Xi, Yi the input's 8; the ifm's width
  // index 2·xo + 1·r − 1 gives stride 2, dilation 1, pad 1.
  DimVector expect{};
  for (auto [d, b] : {std::pair{Dim::N, 2}, {Dim::C, 3}, {Dim::K, 16}, {Dim::Xi, 8}, {Dim::Yi, 8}, {Dim::Xo, 4},
                      {Dim::Yo, 4}, {Dim::R, 3}, {Dim::S, 3}})
    at(expect, d) = b;
  EXPECT_EQ(v.bounds, expect);
  // Both axes alike; the window ends at 2·3 + 2 + 1 − 1 = 8 − 1: no end padding used.
  for (const WindowAxis &a : {v.window.x, v.window.y})
    EXPECT_EQ(a, (WindowAxis{2, 1, 1, 0}));
  EXPECT_FALSE(v.channelWise);
}

TEST(LoopNest, KaplaViewMultipliesTheDimsFoldedIntoOne) {
  // A grouped conv, groups 2, K = 6: g < 2 and k < 3 both fold into K, 2·3 = 6.
  LoopNest nest;
  AffineExpr n = nest.addDim("n", 1, {Dim::N}), g = nest.addDim("g", 2, {Dim::K});
  AffineExpr k = nest.addDim("k", 3, {Dim::K}), c = nest.addDim("c", 2, {Dim::C});
  nest.accesses.push_back({TensorRole::Ifm, "x", {n, 2 * g + c, 0, 0}, {1, 4, 1, 1}, {}});
  nest.accesses.push_back({TensorRole::Ofm, "y", {n, 3 * g + k, 0, 0}, {1, 6, 1, 1}, {}});
  EXPECT_EQ(at(kaplaView(nest).bounds, Dim::K), 6);
  EXPECT_EQ(at(kaplaView(nest).bounds, Dim::C), 2);
}

TEST(LoopNest, WindowFormula) {
  // 4 outputs at stride 2 with 3 taps at dilation 1: (4−1)·2 + (3−1)·1 + 1 = 9.
  EXPECT_EQ(windowSpan(4, 3, 2, 1), 9);
  // Dilation 2: (4−1)·2 + (3−1)·2 + 1 = 11.
  EXPECT_EQ(windowSpan(4, 3, 2, 2), 11);
  // The inverse: 9 = 6 + (taps−1)·1 + 1 gives 3 taps; 8 = 6 + (taps−1)·2 + 1 has none.
  EXPECT_EQ(windowTaps(9, 4, 2, 1), 3);
  EXPECT_EQ(windowTaps(8, 4, 2, 2), 0);
  EXPECT_EQ(windowTaps(5, 4, 2, 1), 0);   // shorter than the outputs alone (7)
  DimVector e{};
  at(e, Dim::Xo) = 4, at(e, Dim::R) = 3, at(e, Dim::Yo) = 1, at(e, Dim::S) = 1;
  deriveInputExtents(e, Window{{2, 1}, {2, 1}});
  EXPECT_EQ(at(e, Dim::Xi), 9);
  EXPECT_EQ(at(e, Dim::Yi), 1);   // (1−1)·2 + (1−1)·1 + 1
}

TEST(LoopNest, BackwardLayersKeepTheDomainAndWriteAnotherRole) {
  // data -> c1 -> c2: c2's operand is a layer, so c2 gets a data gradient.
  Network net;
  net.batch = 2;
  net.inputs.push_back({"data", {3, 8, 8}, {}, {}});
  for (const char *name : {"c1", "c2"}) {
    Layer l;
    l.name = name;
    l.operands = {{net.layers.empty(), 0}};
    l.wgtSize = 16 * 3 * 9;
    l.nest = conv3x3s2p1(name, net.layers.empty() ? "data" : "c1");
    net.layers.push_back(std::move(l));
  }
  addBackwardLayers(net);
  const Layer &dgrad = net.layers[static_cast<size_t>(net.findLayer("c2__dgrad"))];
  const Layer &wgrad = net.layers[static_cast<size_t>(net.findLayer("c2__wgrad"))];
  const LoopNest &fwd = net.layers[1].nest;
  // Same domain, same index functions; dX = c1__grad written at the ifm's
  // indices from dY = c2__grad and the weights.
  EXPECT_EQ(dgrad.nest.toIslSet(), "{ c2__dgrad" + fwd.toIslSet().substr(4));
  EXPECT_EQ(dgrad.nest.output, TensorRole::Ifm);
  EXPECT_EQ(dgrad.nest.text(), "ifm c1__grad[n, c, 2*xo + r - 1, 2*yo + s - 1] <- mac(wgt c2__wgt[k, c, r, s], "
                               "ofm c2__grad[n, k, xo, yo])");
  // Every dim but k (dim 1) indexes dX: k is the one dim reduced over whole;
  // the (xo, r) pairs that meet at one column add up too, as the relation shows.
  EXPECT_EQ(dgrad.nest.reductionDims(), (std::vector<int>{1}));
  EXPECT_EQ(wgrad.nest.text(), "wgt c2__wgt__grad[k, c, r, s] <- mac(ifm c1[n, c, 2*xo + r - 1, 2*yo + s - 1], "
                               "ofm c2__grad[n, k, xo, yo])");
  // dW reduces over n, xo, yo (dims 0, 3, 4).
  EXPECT_EQ(wgrad.nest.reductionDims(), (std::vector<int>{0, 3, 4}));
  // c1 reads only the network input: no data gradient, a weight gradient.
  EXPECT_LT(net.findLayer("c1__dgrad"), 0);
  EXPECT_GE(net.findLayer("c1__wgrad"), 0);
}

TEST(LoopNest, GuardedDomainCountsItsPointsExactly) {
  // A triangle b <= a over 0 <= a, b < 5 (5 + 4 + ... = 15 points), times a
  // free dim of 3: 45. toIslSet prints the guard, inDomain tests it.
  LoopNest nest;
  nest.name = "t";
  AffineExpr f = nest.addDim("f", 3), a = nest.addDim("a", 5), b = nest.addDim("b", 5);
  nest.guard = {a - b};
  EXPECT_EQ(nest.points(), 45);
  EXPECT_EQ(nest.toIslSet(), "{ t[f, a, b] : 0 <= f < 3 and 0 <= a < 5 and 0 <= b < 5 and a - b >= 0 }");
  EXPECT_TRUE(nest.inDomain({0, 2, 2}));
  EXPECT_FALSE(nest.inDomain({0, 2, 3}));
  // Two guards with coefficients, 2a − b >= 0 and b − 1 >= 0: a = 0 none;
  // a = 1, b in [1, 2]: 2; a = 2, 3, 4, b in [1, 4]: 4 each. x3 = 42.
  nest.guard = {2 * a - b, b - 1};
  EXPECT_EQ(nest.points(), 42);
  // An empty domain, and a guard on one dim alone (b >= 7 never holds).
  nest.guard = {b - 7};
  EXPECT_EQ(nest.points(), 0);
  nest.guard.clear();
  EXPECT_EQ(nest.points(), 75);
}
