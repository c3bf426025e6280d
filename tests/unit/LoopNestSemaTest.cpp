// The loop nests sema builds for every layer kind, backward layers and
// intrinsics, against hand derivations; and the nine-dim bounds derived from
// them against the bounds as sema computed them before the nests existed,
// for every layer of every stdlib network.
#include "TestUtil.h"

#include "frontend/Ast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace dfl;
using dfl::test::compile;

namespace {

test::Compiled compileTraining(const std::string &text) {
  test::Compiled c;
  LoadedFiles files = loadBuffer("test.dfl", text, LoadOptions{}, *c.sm, *c.diags);
  if (!c.diags->hasErrors())
    c.model = analyze(files.files, *c.diags, AnalyzeOptions{true, {}});
  return c;
}

const LoopNest &nestOf(const test::Compiled &c, const std::string &name) {
  const Network &n = c.model.networks.at(0);
  int i = n.findLayer(name);
  EXPECT_GE(i, 0) << name;
  return n.layers.at(static_cast<size_t>(i)).nest;
}

const Layer &layerOf(const test::Compiled &c, const std::string &name) {
  const Network &n = c.model.networks.at(0);
  return n.layers.at(static_cast<size_t>(std::max(0, n.findLayer(name))));
}

std::vector<std::string> maps(const LoopNest &nest) {
  std::vector<std::string> out;
  for (const Access &a : nest.accesses)
    out.push_back(nest.toIslMap(a));
  return out;
}

} // namespace

TEST(LoopNestSema, GroupedStridedPaddedConv) {
  auto c = compile(R"(network n {
    batch N = 2;
    input x [C=4, X=8, Y=8];
    a = conv(x, K=6, R=3, stride=2, pad=1, groups=2);
    d = conv(x, K=1, R=3, pad=2, dilation=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // a: Xo = ⌊(8 + 2 − 3)/2⌋ + 1 = 4; groups 2: C/G = 2, K/G = 3. Group g reads
  // channels 2g + c and writes 3g + k; the input column is 2·xo + r − 1.
  const LoopNest &a = nestOf(c, "a");
  EXPECT_EQ(a.toIslSet(), "{ a[n, g, k, c, xo, yo, r, s] : 0 <= n < 2 and 0 <= g < 2 and 0 <= k < 3 and "
                          "0 <= c < 2 and 0 <= xo < 4 and 0 <= yo < 4 and 0 <= r < 3 and 0 <= s < 3 }");
  EXPECT_EQ(maps(a), (std::vector<std::string>{
                         "{ a[n, g, k, c, xo, yo, r, s] -> x[n, 2*g + c, 2*xo + r - 1, 2*yo + s - 1] }",
                         "{ a[n, g, k, c, xo, yo, r, s] -> a__wgt[3*g + k, c, r, s] }",
                         "{ a[n, g, k, c, xo, yo, r, s] -> a[n, 3*g + k, xo, yo] }"}));
  EXPECT_EQ(a.accesses[1].extent, (std::vector<int64_t>{6, 2, 3, 3}));   // K x C/G x R x S
  EXPECT_EQ(a.statement, Statement::Mac);
  // d: dilation 2, pad 2: Xo = ⌊(8 + 4 − 2·2 − 1)/1⌋ + 1 = 8; column xo + 2·r − 2.
  const LoopNest &d = nestOf(c, "d");
  EXPECT_EQ(d.toIslMap(d.accesses[0]), "{ d[n, k, c, xo, yo, r, s] -> x[n, c, xo + 2*r - 2, yo + 2*s - 2] }");
  KaplaView v = kaplaView(d);
  for (const WindowAxis &a : {v.window.x, v.window.y}) {
    EXPECT_EQ(a.stride, 1);
    EXPECT_EQ(a.dilation, 2);
    EXPECT_EQ(a.padBegin, 2);
  }
}

TEST(LoopNestSema, ConvTransposeIsAConvsDataGradient) {
  auto c = compile(R"(network n {
    batch N = 2;
    input x [C=4, X=5, Y=3];
    u = conv_transpose(x, K=6, R=4, stride=2, pad=1, groups=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  auto t = compileTraining(R"(network n {
    batch N = 2;
    input z [C=6, X=10, Y=6];
    a = conv(z, K=6, R=1);
    b = conv(a, K=4, R=4, stride=2, pad=1, groups=2);
  })");
  ASSERT_EQ(t.diagnostics(), "");
  // u: (5 − 1)·2 − 2 + 4 = 10 wide, (3 − 1)·2 − 2 + 4 = 6 high: [6,10,6].
  // Group g reads x's channels 2g + ci (Cin/G = 2) and writes y's 3g + co
  // (Cout/G = 3) at column 2·xi + r − 1; weights PyTorch's [Cin, Cout/G, R, S].
  const Layer &u = layerOf(c, "u");
  EXPECT_EQ(u.ofmShape, (TensorShape{6, 10, 6}));
  EXPECT_EQ(u.output, TensorRole::Ifm);
  EXPECT_EQ(u.nest.output, TensorRole::Ifm);
  EXPECT_EQ(u.macs, 4 * 3 * 16 * 15);   // Cin·(Cout/G)·R·S·X·Y
  EXPECT_EQ(u.outputWords(), 6 * 10 * 6);
  EXPECT_EQ(maps(u.nest), (std::vector<std::string>{
                              "{ u[n, g, ci, co, xi, yi, r, s] -> u[n, 3*g + co, 2*xi + r - 1, 2*yi + s - 1] }",
                              "{ u[n, g, ci, co, xi, yi, r, s] -> u__wgt[2*g + ci, co, r, s] }",
                              "{ u[n, g, ci, co, xi, yi, r, s] -> x[n, 2*g + ci, xi, yi] }"}));
  EXPECT_EQ(u.nest.accesses[1].extent, (std::vector<int64_t>{4, 3, 4, 4}));
  // Its nine-dim view is the conv's from y to x: K = Cin, C = Cout/G, Xo = 5,
  // Xi = 10, stride 2, padding 1 at the begin and, the window spanning
  // 4·2 + 4 = 12 columns from −1, 1 at the end.
  const KaplaView v = kaplaView(u.nest);
  EXPECT_EQ(v.bounds, (DimVector{2, 3, 4, 10, 6, 5, 3, 4, 4}));
  EXPECT_EQ(v.window.x, (WindowAxis{2, 1, 1, 1}));
  EXPECT_EQ(u.window, v.window);
  // b's data gradient (the conv from a [6,10,6] to b [4,5,3]; its dY is read
  // where u reads x) has u's domain, accesses and roles, names aside.
  const Layer &dgrad = layerOf(t, "b__dgrad");
  EXPECT_EQ(dgrad.nest.output, TensorRole::Ifm);
  EXPECT_EQ(kaplaView(dgrad.nest).bounds, v.bounds);
  ASSERT_EQ(dgrad.nest.accesses.size(), u.nest.accesses.size());
  for (size_t i = 0; i < u.nest.accesses.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(dgrad.nest.accesses[i].role, u.nest.accesses[i].role);
    EXPECT_EQ(dgrad.nest.accesses[i].index, u.nest.accesses[i].index);
  }
}

TEST(LoopNestSema, MatMulHeadsPlainAndTransposed) {
  auto c = compile(R"(network m {
    input q [C=8, X=4, Y=1];
    input k [C=8, X=6, Y=1];
    input v [C=8, X=6, Y=1];
    s = matmul(q, k, heads=2);
    o = matmul(s, v, heads=2, transpose_b=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // s: h = 2 heads of C/h = 4 channels; k has Lb = 6·1 positions (kx, ky), so
  // s has 2·6 = 12 channels: head h's score for position kx is channel 6h + kx·1 + ky.
  const LoopNest &s = nestOf(c, "s");
  EXPECT_EQ(s.toIslSet(), "{ s[n, h, kx, ky, c, xo, yo] : 0 <= n < 1 and 0 <= h < 2 and 0 <= kx < 6 and "
                          "0 <= ky < 1 and 0 <= c < 4 and 0 <= xo < 4 and 0 <= yo < 1 }");
  EXPECT_EQ(maps(s), (std::vector<std::string>{"{ s[n, h, kx, ky, c, xo, yo] -> q[n, 4*h + c, xo, yo] }",
                                               "{ s[n, h, kx, ky, c, xo, yo] -> k[n, 4*h + c, kx, ky] }",
                                               "{ s[n, h, kx, ky, c, xo, yo] -> s[n, 6*h + kx + ky, xo, yo] }"}));
  EXPECT_EQ(s.reductionDims(), (std::vector<int>{4}));   // c
  // o: context over s's 12 = 2·6 channels; v's 8 channels are 2 heads of 4.
  const LoopNest &o = nestOf(c, "o");
  EXPECT_EQ(maps(o), (std::vector<std::string>{"{ o[n, h, k, cx, cy, xo, yo] -> s[n, 6*h + cx + cy, xo, yo] }",
                                               "{ o[n, h, k, cx, cy, xo, yo] -> v[n, 4*h + k, cx, cy] }",
                                               "{ o[n, h, k, cx, cy, xo, yo] -> o[n, 4*h + k, xo, yo] }"}));
  EXPECT_EQ(o.reductionDims(), (std::vector<int>{3, 4}));   // cx, cy
  // The nine-dim view: heads are batch, N = n·h = 1·2 = 2 (every tensor is
  // indexed by h, as by n); s has K = kx·ky = 6, C = 4; o has K = 4, C = 6·1 = 6.
  EXPECT_EQ(at(kaplaView(s).bounds, Dim::N), 2);
  EXPECT_EQ(at(kaplaView(s).bounds, Dim::K), 6);
  EXPECT_EQ(at(kaplaView(s).bounds, Dim::C), 4);
  EXPECT_EQ(at(kaplaView(o).bounds, Dim::N), 2);
  EXPECT_EQ(at(kaplaView(o).bounds, Dim::K), 4);
  EXPECT_EQ(at(kaplaView(o).bounds, Dim::C), 6);
}

TEST(LoopNestSema, CausalAttentionIsAGuardedDomain) {
  // 4 queries, 6 keys (2 cached): o = 6 − 4 = 2, query x sees keys j <= x + 2:
  // 3 + 4 + 5 + 6 = 18 (query, key) pairs per head of the square's 24.
  auto c = compile(R"(network m {
    input q [C=8, X=4];
    input k [C=8, X=6];
    input v [C=8, X=6];
    s = matmul(q, k, heads=2, causal=true);
    p = softmax(s, groups=2, causal=true);
    o = matmul(p, v, heads=2, transpose_b=true, causal=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const LoopNest &s = nestOf(c, "s");
  EXPECT_EQ(s.toIslSet(), "{ s[n, h, kx, ky, c, xo, yo] : 0 <= n < 1 and 0 <= h < 2 and 0 <= kx < 6 and "
                          "0 <= ky < 1 and 0 <= c < 4 and 0 <= xo < 4 and 0 <= yo < 1 and -kx + xo + 2 >= 0 }");
  // MACs: 2 heads x 18 pairs x 4 channels = 144 (the square: 4·6·8 = 192).
  EXPECT_EQ(s.points(), 144);
  EXPECT_EQ(layerOf(c, "s").macs, 144);
  // The softmax's channel is the group g and the key j (c = 6g + j), so the
  // guard is affine; 5 ops x 2 x 18 = 180.
  const LoopNest &p = nestOf(c, "p");
  EXPECT_EQ(p.toIslSet(), "{ p[n, g, j, xo, yo] : 0 <= n < 1 and 0 <= g < 2 and 0 <= j < 6 and 0 <= xo < 4 and "
                          "0 <= yo < 1 and -j + xo + 2 >= 0 }");
  EXPECT_EQ(maps(p)[0], "{ p[n, g, j, xo, yo] -> s[n, 6*g + j, xo, yo] }");
  EXPECT_EQ(layerOf(c, "p").ops, 180);
  EXPECT_EQ(layerOf(c, "p").bounds, (DimVector{1, 12, 12, 4, 1, 4, 1, 1, 1}));   // N C K Xi Yi Xo Yo R S
  // The context: 2 heads x 4 output channels x 18 = 144, the key cx.
  const LoopNest &o = nestOf(c, "o");
  EXPECT_EQ(o.guard.size(), 1u);
  EXPECT_EQ(o.exprText(o.guard[0]), "-cx + xo + 2");
  EXPECT_EQ(layerOf(c, "o").macs, 144);
}

TEST(LoopNestSema, GroupedQueryAttention) {
  auto c = compile(R"(network g {
    input q [C=16, X=3];
    input k [C=8, X=5];
    input p [C=20, X=3];
    s = matmul(q, k, heads=4, kv_heads=2);
    o = matmul(p, k, heads=4, kv_heads=2, transpose_b=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // s: query head h = 2g + m of C/h = 4 channels reads K head g; k has Lb = 5
  // positions, s 4·5 = 20 channels. The member m replaces the row yo.
  const LoopNest &s = nestOf(c, "s");
  EXPECT_EQ(maps(s), (std::vector<std::string>{"{ s[n, g, m, kx, ky, c, xo] -> q[n, 8*g + 4*m + c, xo, 0] }",
                                               "{ s[n, g, m, kx, ky, c, xo] -> k[n, 4*g + c, kx, ky] }",
                                               "{ s[n, g, m, kx, ky, c, xo] -> s[n, 10*g + 5*m + kx + ky, xo, 0] }"}));
  // o: head h's 5 scores (channels 5h..5h+4) times V head g's 4 channels.
  const LoopNest &o = nestOf(c, "o");
  EXPECT_EQ(maps(o), (std::vector<std::string>{"{ o[n, g, m, k, cx, cy, xo] -> p[n, 10*g + 5*m + cx + cy, xo, 0] }",
                                               "{ o[n, g, m, k, cx, cy, xo] -> k[n, 4*g + k, cx, cy] }",
                                               "{ o[n, g, m, k, cx, cy, xo] -> o[n, 8*g + 4*m + k, xo, 0] }"}));
  // The nine-dim view: N = n·g = 2 K/V heads, the members Yo = Yi = 2, so the
  // wgt (K, C, per-sample N) has no Yo and is reused across a group: s's
  // wgt 2·5·4 = 40 words = k, its ifm N·C·Xi·Yi = 2·4·3·2 = 48 = q.
  const DimVector b = kaplaView(s).bounds;
  EXPECT_EQ(at(b, Dim::N), 2);
  EXPECT_EQ(at(b, Dim::Yo), 2);
  EXPECT_EQ(at(b, Dim::Yi), 2);
  EXPECT_EQ(at(b, Dim::K), 5);
  EXPECT_EQ(at(b, Dim::C), 4);
  EXPECT_EQ(kaplaView(s).window.y, (WindowAxis{1, 1, 0, 0}));
  EXPECT_EQ(at(kaplaView(o).bounds, Dim::K), 4);
  EXPECT_EQ(at(kaplaView(o).bounds, Dim::C), 5);
}

TEST(LoopNestSema, ConcatAlongWidthAndHeight) {
  auto c = compile(R"(network c {
    input a [C=2, X=3, Y=4];
    input b [C=2, X=1, Y=4];
    w = concat(a, b, axis=X);
    h = concat(w, w, axis=Y);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // w: a supplies columns 0..2, b column 3 at xo − 3; the output is [2, 4, 4].
  const LoopNest &w = nestOf(c, "w");
  EXPECT_EQ(w.statement, Statement::Copy);
  EXPECT_EQ(maps(w), (std::vector<std::string>{
                         "{ w[n, c, xo, yo] -> a[n, c, xo, yo] : xo >= 0 and -xo + 2 >= 0 }",
                         "{ w[n, c, xo, yo] -> b[n, c, xo - 3, yo] : xo - 3 >= 0 and -xo + 3 >= 0 }",
                         "{ w[n, c, xo, yo] -> w[n, c, xo, yo] }"}));
  EXPECT_EQ(at(kaplaView(w).bounds, Dim::Xi), 4);
  EXPECT_EQ(at(kaplaView(w).bounds, Dim::Xo), 4);
  // h: w twice, rows 0..3 then 4..7 at yo − 4; Yi spans both.
  const LoopNest &h = nestOf(c, "h");
  EXPECT_EQ(maps(h)[1], "{ h[n, c, xo, yo] -> w[n, c, xo, yo - 4] : yo - 4 >= 0 and -yo + 7 >= 0 }");
  EXPECT_EQ(at(kaplaView(h).bounds, Dim::Yi), 8);
  EXPECT_EQ(at(kaplaView(h).bounds, Dim::C), 2);
}

TEST(LoopNestSema, BilinearUpsampleIsAGuardedWindow) {
  auto c = compile(R"(network r {
    input x [C=2, X=4, Y=5];
    u = upsample(x, scale=2 x 3, mode=bilinear);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // out[2·qx + px][3·qy + py] reads x at qx − 1 + u, qy − 1 + v over a 3 x 3
  // window; the guard keeps u ∈ {b, b + 1}, b = 1 if 2p + 1 >= s.
  const LoopNest &u = nestOf(c, "u");
  EXPECT_EQ(u.statement, Statement::Bilinear);
  EXPECT_EQ(maps(u), (std::vector<std::string>{
                         "{ u[n, c, px, py, qx, qy, u, v] -> x[n, c, qx + u - 1, qy + v - 1] }",
                         "{ u[n, c, px, py, qx, qy, u, v] -> u[n, c, px + 2*qx, py + 3*qy] }"}));
  // By hand, scale 2: p = 0 (b = 0) taps 0 1, p = 1 (b = 1) taps 1 2; scale
  // 3: p = 0 (b = 0) taps 0 1, p = 1 and 2 (b = 1) taps 1 2. Four points per
  // output word: 4 · 2 · 8 · 15 = 960 (the box has 9 · 240 = 2,160).
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t px = 0; px < 2; ++px)   // (n, c, px, py, qx, qy, u, v), v = 1 kept at py = 0
      EXPECT_EQ(u.inDomain({0, 0, px, 0, 0, 0, t, 1}), px == 0 ? t <= 1 : t >= 1) << px << " " << t;
    for (int64_t py = 0; py < 3; ++py)
      EXPECT_EQ(u.inDomain({0, 0, 0, py, 0, 0, 1, t}), py == 0 ? t <= 1 : t >= 1) << py << " " << t;
  }
  EXPECT_EQ(u.points(), 4 * 2 * 8 * 15);
  // Weights in units of 1/(2s), PyTorch's align_corners=False: scale 2, 1/4
  // and 3/4; scale 3 at p = 1 the source is q itself (6/6 and 0/6).
  EXPECT_EQ(bilinearWeight(0, 2, 0), 1);
  EXPECT_EQ(bilinearWeight(0, 2, 1), 3);
  EXPECT_EQ(bilinearWeight(1, 2, 1), 3);
  EXPECT_EQ(bilinearWeight(1, 2, 2), 1);
  EXPECT_EQ(bilinearWeight(0, 3, 0), 2);
  EXPECT_EQ(bilinearWeight(0, 3, 1), 4);
  EXPECT_EQ(bilinearWeight(1, 3, 1), 6);
  EXPECT_EQ(bilinearWeight(1, 3, 2), 0);
  EXPECT_EQ(bilinearWeight(2, 3, 1), 4);
  EXPECT_EQ(bilinearWeight(2, 3, 2), 2);
  // The nine-dim view: channels batch, phases K, a 3 x 3 window padded by 1.
  const KaplaView v = kaplaView(u);
  EXPECT_EQ(at(v.bounds, Dim::N), 2);
  EXPECT_EQ(at(v.bounds, Dim::K), 6);
  EXPECT_EQ(at(v.bounds, Dim::R), 3);
  EXPECT_EQ(at(v.bounds, Dim::S), 3);
  EXPECT_EQ(at(v.bounds, Dim::Xo), 4);
  EXPECT_EQ(at(v.bounds, Dim::Xi), 4);
  EXPECT_EQ(v.window.x.padBegin, 1);
  EXPECT_EQ(v.window.y.padEnd, 1);
}

TEST(LoopNestSema, UpsampleAndDepthToSpaceSplitTheOutputAxes) {
  auto c = compile(R"(network r {
    batch N = 2;
    input x [C=3, X=4, Y=5];
    u = upsample(x, scale=2 x 3);
    input z [C=8, X=2, Y=2];
    dcr = depth_to_space(z, block=2); crd = depth_to_space(z, block=2, mode=CRD);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // u: out[2·qx + px][3·qy + py] = x[qx][qy]; 2·3·3·2·4·5 = 720 points, one
  // per output word ([3, 8, 15] at batch 2).
  const LoopNest &u = nestOf(c, "u");
  EXPECT_EQ(u.statement, Statement::Copy);
  EXPECT_EQ(maps(u), (std::vector<std::string>{"{ u[n, c, px, py, qx, qy] -> x[n, c, qx, qy] }",
                                               "{ u[n, c, px, py, qx, qy] -> u[n, c, px + 2*qx, py + 3*qy] }"}));
  EXPECT_EQ(u.points(), 2 * 3 * 8 * 15);
  // Channels are batch (N = 2·3), the phases K (2·3); the plane the input's.
  const DimVector ub = kaplaView(u).bounds;
  EXPECT_EQ(at(ub, Dim::N), 6);
  EXPECT_EQ(at(ub, Dim::C), 1);
  EXPECT_EQ(at(ub, Dim::K), 6);
  EXPECT_EQ(at(ub, Dim::Xo), 4);
  EXPECT_EQ(at(ub, Dim::Xi), 4);
  EXPECT_EQ(at(ub, Dim::Yo), 5);
  // depth_to_space: the height's phase py before the width's px, as ONNX's
  // [N, C, H, W] (DCR: (py·2 + px)·2 + c; CRD: c·4 + py·2 + px), the dims
  // ordered so that channel is the C coordinate.
  EXPECT_EQ(maps(nestOf(c, "dcr")),
            (std::vector<std::string>{"{ dcr[n, py, px, c, x, y] -> z[n, 4*py + 2*px + c, x, y] }",
                                      "{ dcr[n, py, px, c, x, y] -> dcr[n, c, px + 2*x, py + 2*y] }"}));
  EXPECT_EQ(maps(nestOf(c, "crd")),
            (std::vector<std::string>{"{ crd[n, c, py, px, x, y] -> z[n, 4*c + 2*py + px, x, y] }",
                                      "{ crd[n, c, py, px, x, y] -> crd[n, c, px + 2*x, py + 2*y] }"}));
  const KaplaView d = kaplaView(nestOf(c, "crd"));
  EXPECT_TRUE(d.channelWise);
  EXPECT_EQ(at(d.bounds, Dim::C), 8);
  EXPECT_EQ(at(d.bounds, Dim::K), 8);
  EXPECT_EQ(at(d.bounds, Dim::Xo), 2);
}

TEST(LoopNestSema, RopeReadsEachWordAndItsPartner) {
  auto c = compile(R"(network r {
    input q [C=12, X=5];
    a = rope(q, heads=2, pos=4);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // d = 6: channel 6·i + 3·half + j, its partner 6·i + 3·(1 − half) + j.
  const LoopNest &a = nestOf(c, "a");
  EXPECT_EQ(a.statement, Statement::Rope);
  EXPECT_EQ(maps(a), (std::vector<std::string>{"{ a[n, i, half, j, xo, yo] -> q[n, 6*i + 3*half + j, xo, yo] }",
                                               "{ a[n, i, half, j, xo, yo] -> q[n, 6*i - 3*half + j + 3, xo, yo] }",
                                               "{ a[n, i, half, j, xo, yo] -> a[n, 6*i + 3*half + j, xo, yo] }"}));
  // One point per output word, 6 ops each: 12·5 = 60 points, 360 ops.
  EXPECT_EQ(a.points(), 60);
  const Layer &l = c.model.networks[0].layers[0];
  EXPECT_EQ(l.ops, 360);
  EXPECT_EQ(l.pointOperands(), 2);
  const KaplaView v = kaplaView(a);
  EXPECT_TRUE(v.channelWise);
  EXPECT_EQ(at(v.bounds, Dim::C), 12);
  EXPECT_EQ(at(v.bounds, Dim::K), 12);
  EXPECT_EQ(at(v.bounds, Dim::Xo), 5);
}

TEST(LoopNestSema, ConcatenatedOperandsPoolsAndEltwise) {
  auto c = compile(R"(network c {
    input a [C=3, X=5, Y=5];
    input b [C=5, X=5, Y=5];
    cat = concat(a, b);
    f = conv(a, b, K=2, R=1);
    p = maxpool(cat, R=2, stride=2, ceil=true);
    e = add(a, a);
    m = avgpool(a, R=3, stride=1, pad=1);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // cat: a supplies channels 0..2 (c >= 0, 2 − c >= 0), b channels 3..7 at c − 3.
  const LoopNest &cat = nestOf(c, "cat");
  EXPECT_EQ(cat.statement, Statement::Copy);
  EXPECT_EQ(maps(cat), (std::vector<std::string>{
                           "{ cat[n, c, xo, yo] -> a[n, c, xo, yo] : c >= 0 and -c + 2 >= 0 }",
                           "{ cat[n, c, xo, yo] -> b[n, c - 3, xo, yo] : c - 3 >= 0 and -c + 7 >= 0 }",
                           "{ cat[n, c, xo, yo] -> cat[n, c, xo, yo] }"}));
  // f: a conv over the 3 + 5 = 8 concatenated channels, 1x1 at stride 1.
  const LoopNest &f = nestOf(c, "f");
  EXPECT_EQ(f.dims[2].extent, 8);
  EXPECT_EQ(f.toIslMap(f.accesses[1]),
            "{ f[n, k, c, xo, yo, r, s] -> b[n, c - 3, xo + r, yo + s] : c - 3 >= 0 and -c + 7 >= 0 }");
  // p: ceil mode: Xo = ⌈(5 − 2)/2⌉ + 1 = 3; the last window (xo = 2, r = 1)
  // reads column 2·2 + 1 = 5, outside the 5 columns: padding, which max ignores.
  const LoopNest &p = nestOf(c, "p");
  EXPECT_EQ(p.statement, Statement::Max);
  EXPECT_EQ(p.toIslSet(), "{ p[n, c, xo, yo, r, s] : 0 <= n < 1 and 0 <= c < 8 and 0 <= xo < 3 and 0 <= yo < 3 and "
                          "0 <= r < 2 and 0 <= s < 2 }");
  EXPECT_EQ(p.text(), "ofm p[n, c, xo, yo] <- max(ifm cat[n, c, 2*xo + r, 2*yo + s])");
  EXPECT_EQ(p.accesses[0].index[2].evaluate({0, 0, 2, 0, 1, 0}), 5);
  // e: one access per operand, even the same tensor twice.
  EXPECT_EQ(nestOf(c, "e").text(), "ofm e[n, c, xo, yo] <- add(ifm a[n, c, xo, yo], ifm a[n, c, xo, yo])");
  // m: average over a 3x3 window padded by 1: Xo = ⌊(5 + 2 − 3)/1⌋ + 1 = 5.
  EXPECT_EQ(nestOf(c, "m").text(), "ofm m[n, c, xo, yo] <- average(ifm a[n, c, xo + r - 1, yo + s - 1])");
  // fc reads its input as an R x S = X x Y filter; the output is 1x1.
  auto fc = compile("network f { input x [C=2, X=3, Y=4]; y = fc(x, K=5); }");
  ASSERT_EQ(fc.diagnostics(), "");
  EXPECT_EQ(nestOf(fc, "y").toIslSet(),
            "{ y[n, k, c, r, s] : 0 <= n < 1 and 0 <= k < 5 and 0 <= c < 2 and 0 <= r < 3 and 0 <= s < 4 }");
  EXPECT_EQ(nestOf(fc, "y").text(), "ofm y[n, k, 0, 0] <- mac(ifm x[n, c, r, s], wgt y__wgt[k, c, r, s])");
}

TEST(LoopNestSema, BatchDeclaredAfterTheLayers) {
  auto c = compile("network b { input x [C=2]; y = fc(x, K=3); batch N = 7; }");
  ASSERT_EQ(c.diagnostics(), "");
  const LoopNest &y = nestOf(c, "y");
  EXPECT_EQ(y.dims[0].extent, 7);
  EXPECT_EQ(y.accesses[0].extent[0], 7);
  EXPECT_EQ(at(c.model.networks[0].layers[0].bounds, Dim::N), 7);
}

TEST(LoopNestSema, BackwardLayersWriteTheGradientOfAnotherRole) {
  auto c = compileTraining(R"(network t {
    input x [C=2, X=4, Y=4];
    a = conv(x, K=2, R=3, pad=1);
    relu_a = relu(a);
    b = maxpool(relu_a, R=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // b's data gradient routes dY to the window's max: written at the ifm's indices.
  const LoopNest &bd = nestOf(c, "b__dgrad");
  EXPECT_EQ(bd.output, TensorRole::Ifm);
  EXPECT_EQ(bd.text(), "ifm a__grad[n, c, 2*xo + r, 2*yo + s] <- max(ofm b__grad[n, c, xo, yo])");
  EXPECT_EQ(bd.toIslSet().substr(0, 27), "{ b__dgrad[n, c, xo, yo, r,");
  // a's weight gradient: dW[k, c, r, s] += X[n, c, xo + r − 1, yo + s − 1] · dY[n, k, xo, yo],
  // reducing over n, xo, yo; a reads only the input, so it has no data gradient.
  const LoopNest &aw = nestOf(c, "a__wgrad");
  EXPECT_EQ(aw.output, TensorRole::Wgt);
  EXPECT_EQ(aw.text(), "wgt a__wgt__grad[k, c, r, s] <- mac(ifm x[n, c, xo + r - 1, yo + s - 1], "
                       "ofm a__grad[n, k, xo, yo])");
  EXPECT_EQ(aw.reductionDims(), (std::vector<int>{0, 3, 4}));
  EXPECT_LT(c.model.networks[0].findLayer("a__dgrad"), 0);
}

TEST(LoopNestSema, IntrinsicKeepsItsStatementAsANest) {
  auto c = compile(R"(intrinsic gemm_1x16x16 (i=1, j=16, k=16) {
    c[i, j] += a[i, k] * b[j, k];
    latency = 1;
  })");
  ASSERT_FALSE(c.diags->hasErrors()) << c.diagnostics();
  const LoopNest &g = c.model.intrinsics.at(0).nest;
  EXPECT_EQ(g.toIslSet(), "{ gemm_1x16x16[i, j, k] : 0 <= i < 1 and 0 <= j < 16 and 0 <= k < 16 }");
  EXPECT_EQ(maps(g), (std::vector<std::string>{"{ gemm_1x16x16[i, j, k] -> c[i, j] }",
                                               "{ gemm_1x16x16[i, j, k] -> a[i, k] }",
                                               "{ gemm_1x16x16[i, j, k] -> b[j, k] }"}));
  EXPECT_EQ(g.text(), "ofm c[i, j] <- mac(ifm a[i, k], wgt b[j, k])");
  // c is indexed by i and j: the statement reduces over k (dim 2). Each
  // tensor's extents are its indices' extents: c is 1 x 16.
  EXPECT_EQ(g.reductionDims(), (std::vector<int>{2}));
  EXPECT_EQ(g.accesses[0].extent, (std::vector<int64_t>{1, 16}));
  // An undeclared index is still reported (E0701) at each of its two uses.
  auto bad = compile("intrinsic t (i=2) { c[i] += a[i, q] * b[q]; }");
  std::string text = bad.diagnostics();
  size_t first = text.find("E0701 index 'q'");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_NE(text.find("E0701 index 'q'", first + 1), std::string::npos) << text;
}

TEST(LoopNestSema, StdlibIntrinsicsAreTheirSourcesGemmsAndDotProduct) {
  // VTA: C[1][16] += A[1][16] * B[16][16]^T (B stored with the output
  // channel outer): 256 MACs, reducing over k. The 8x8x8 GEMM: 512 MACs.
  // SDOT's lane: 4 products into one accumulator.
  std::ifstream f(dfl::test::kStdlibRoot + "/stdlib/hw/intrinsics/gemm_dot.dfl");
  std::stringstream text;
  text << f.rdbuf();
  auto c = compile(text.str());
  ASSERT_FALSE(c.diags->hasErrors()) << c.diagnostics();
  ASSERT_EQ(c.model.intrinsics.size(), 3u);
  const LoopNest &vta = c.model.intrinsics[0].nest, &g8 = c.model.intrinsics[1].nest, &dot = c.model.intrinsics[2].nest;
  EXPECT_EQ(vta.points(), 256);
  EXPECT_EQ(vta.reductionDims(), (std::vector<int>{2}));
  EXPECT_EQ(vta.text(), "ofm c[i, j] <- mac(ifm a[i, k], wgt b[j, k])");
  EXPECT_EQ(g8.points(), 512);
  EXPECT_EQ(dot.points(), 4);
  EXPECT_EQ(dot.text(), "ofm c[i] <- mac(ifm a[i, k], wgt b[k])");
}

namespace {

/// Every layer's parameters as written, by network and layer name.
using Params = std::map<std::string, std::map<std::string, int64_t>>;

Params paramsOf(const LoadedFiles &files) {
  Params out;
  for (const ast::File &f : files.files)
    for (const ast::TopDecl &d : f.decls)
      if (const auto *n = std::get_if<ast::NetworkDecl>(&d))
        for (const ast::NetworkItem &item : n->items)
          if (const auto *l = std::get_if<ast::LayerDecl>(&item))
            for (const ast::KeywordArg &a : l->params)
              out[l->name.name][a.key.name] = static_cast<int64_t>(a.value.numeric);
  return out;
}

/// The nine-dim bounds as NetworkSema computed them before the loop nests
/// (docs/language.md's table), kept as an independent derivation.
DimVector boundsBeforeNests(const Network &net, const Layer &l, const std::map<std::string, int64_t> &p) {
  auto param = [&](const char *k, int64_t dflt) { return p.count(k) ? p.at(k) : dflt; };
  DimVector b{};
  b.fill(1);
  at(b, Dim::N) = net.batch;
  switch (l.type) {
  case LayerType::Conv:
  case LayerType::DwConv:
    at(b, Dim::C) = l.type == LayerType::DwConv ? l.ifmShape.C : l.ifmShape.C / l.groups;
    at(b, Dim::K) = l.ofmShape.C;
    at(b, Dim::R) = param("R", 1);
    at(b, Dim::S) = param("S", param("R", 1));
    break;
  case LayerType::FC:
    at(b, Dim::C) = l.ifmShape.C;
    at(b, Dim::K) = l.ofmShape.C;
    at(b, Dim::R) = l.ifmShape.X;
    at(b, Dim::S) = l.ifmShape.Y;
    break;
  case LayerType::MatMul: {
    const Layer &fwd = l.forwardOf.empty() ? l : net.layers[static_cast<size_t>(net.findLayer(l.forwardOf))];
    // b: the second operands joined along X (docs/language.md, "A KV cache").
    TensorShape bm;
    bm.X = 0;
    for (size_t i = 1; i < fwd.operands.size(); ++i) {
      TensorRef second = fwd.operands[i];
      const TensorShape s = second.isInput ? net.inputs[second.index].shape : net.layers[second.index].ofmShape;
      bm.X += s.X, bm.Y = s.Y;
    }
    at(b, Dim::C) = l.transposeB ? bm.X * bm.Y : l.ifmShape.C / l.groups;
    at(b, Dim::K) = l.ofmShape.C / l.groups;   // one head's output channels
    at(b, Dim::N) = net.batch * l.groups;      // heads are batch
    // Grouped-query attention (docs/language.md): the K/V heads are batch
    // (a group's h/kv query heads are rows, below).
    if (l.kvHeads < l.groups)
      at(b, Dim::N) = net.batch * l.kvHeads;
    break;
  }
  case LayerType::ConvTranspose:
    // The conv from the output to the input (docs/design.md, "ConvTranspose").
    at(b, Dim::C) = l.ofmShape.C / l.groups;
    at(b, Dim::K) = l.ifmShape.C;
    at(b, Dim::R) = param("R", 1);
    at(b, Dim::S) = param("S", param("R", 1));
    at(b, Dim::Xi) = l.ofmShape.X, at(b, Dim::Yi) = l.ofmShape.Y;
    at(b, Dim::Xo) = l.ifmShape.X, at(b, Dim::Yo) = l.ifmShape.Y;
    return b;
  case LayerType::MaxPool:
  case LayerType::AvgPool:
    at(b, Dim::C) = at(b, Dim::K) = l.ifmShape.C;
    at(b, Dim::R) = param("R", 1);
    at(b, Dim::S) = param("S", param("R", 1));
    break;
  case LayerType::Add:
  case LayerType::Mul:
  case LayerType::Concat:
  case LayerType::Softmax:
  case LayerType::LayerNorm:
  case LayerType::Rope:
  case LayerType::Unary: at(b, Dim::C) = at(b, Dim::K) = l.ofmShape.C; break;
  case LayerType::Upsample:
  case LayerType::DepthToSpace:
    // Over the input's plane (docs/language.md, "Resolution changes"):
    // upsample's channels are batch and its sx·sy phases K; depth_to_space
    // a channel-wise copy of the input's channels.
    if (l.type == LayerType::Upsample) {
      at(b, Dim::N) = net.batch * l.ifmShape.C, at(b, Dim::K) = l.resample.x * l.resample.y;
      if (l.resample.bilinear)   // a 3 x 3 window, two taps of each axis kept by the guard
        at(b, Dim::R) = at(b, Dim::S) = 3;
    } else {
      at(b, Dim::C) = at(b, Dim::K) = l.ifmShape.C;
    }
    at(b, Dim::Xi) = at(b, Dim::Xo) = l.ifmShape.X;
    at(b, Dim::Yi) = at(b, Dim::Yo) = l.ifmShape.Y;
    return b;
  }
  at(b, Dim::Xi) = l.ifmShape.X;
  at(b, Dim::Yi) = l.ifmShape.Y;
  at(b, Dim::Xo) = l.ofmShape.X;
  at(b, Dim::Yo) = l.ofmShape.Y;
  if (l.type == LayerType::MatMul && l.kvHeads < l.groups)   // a group's query heads: the rows
    at(b, Dim::Yi) = at(b, Dim::Yo) = l.groups / l.kvHeads;
  return b;
}

/// The least and greatest value of e over the nest's box.
std::pair<int64_t, int64_t> range(const LoopNest &nest, const AffineExpr &e) {
  int64_t lo = e.constant, hi = e.constant;
  for (auto [dim, coeff] : e.terms) {
    int64_t span = coeff * (nest.dims[static_cast<size_t>(dim)].extent - 1);
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

} // namespace

TEST(LoopNestSema, StdlibNineDimViewAgreesWithTheShapeFormulas) {
  std::string root = dfl::test::kStdlibRoot;
  int layers = 0;
  for (const auto &entry : std::filesystem::directory_iterator(root + "/stdlib/nets"))
    for (bool train : {false, true}) {
      SourceManager sm;
      DiagnosticsEngine diags(sm);
      LoadedFiles files = loadFiles({entry.path().string()}, LoadOptions{{root}}, sm, diags);
      // A decode step (a matmul of a KV cache and the new token) and a
      // causal prefill are inference only: their training is E0311, E0313.
      const std::string stem = entry.path().stem().string();
      if (train && (stem.find("decode") != std::string::npos || stem.find("prefill") != std::string::npos))
        continue;
      Model model = analyze(files.files, diags, AnalyzeOptions{train, {}});
      ASSERT_FALSE(diags.hasErrors()) << entry.path();
      Params params = paramsOf(files);
      for (const Network &net : model.networks)
        for (const Layer &l : net.layers) {
          SCOPED_TRACE(net.name + "." + l.name);
          ++layers;
          const std::string &source = l.forwardOf.empty() ? l.name : l.forwardOf;
          KaplaView v = kaplaView(l.nest);
          EXPECT_EQ(v.bounds, boundsBeforeNests(net, l, params[source]));
          EXPECT_EQ(v.bounds, l.bounds);
          for (auto [view, layer] : {std::pair(v.window.x, l.window.x), std::pair(v.window.y, l.window.y)}) {
            EXPECT_EQ(view.stride, layer.stride);
            EXPECT_EQ(view.dilation, layer.dilation);
            EXPECT_EQ(view.padBegin, layer.padBegin);
          }
          EXPECT_EQ(v.channelWise, l.channelWise());
          EXPECT_EQ(l.nest.output, l.output);
          // The domain counts the layer's work: MACs, or operations (n − 1
          // per point for n operands, a broadcast one read as the wgt), or
          // (concat) output words.
          int64_t pts = l.nest.points();
          switch (l.nest.statement) {
          case Statement::Mac: EXPECT_EQ(pts, l.macs * net.batch); break;
          case Statement::Max:
          case Statement::Bilinear:
          case Statement::Average: EXPECT_EQ(pts, l.ops * net.batch); break;
          case Statement::Add:
          case Statement::Mul:
            EXPECT_EQ(pts * static_cast<int64_t>(l.nest.accessesOf(TensorRole::Ifm).size() +
                                                 l.nest.accessesOf(TensorRole::Wgt).size() - 1),
                      l.ops * net.batch);
            break;
          case Statement::Copy: EXPECT_EQ(pts, l.ofmShape.size() * net.batch); break;
          case Statement::Unary:
          case Statement::Softmax:
          case Statement::LayerNorm:
          case Statement::RmsNorm:   // a point per element, each of several operations
          case Statement::Rope:
            EXPECT_EQ(pts * l.opsPerElement(), l.ops * net.batch);
            break;
          }
          // The window: the ifm's column index spans −pad .. windowSpan(Xo, R) − 1 − pad.
          const Access &ifm = *l.nest.accessesOf(TensorRole::Ifm).at(0);
          auto [lo, hi] = range(l.nest, ifm.index[2]);
          if (l.type != LayerType::FC) {
            EXPECT_EQ(lo, -l.window.x.padBegin);
            EXPECT_EQ(hi, windowSpan(at(l.bounds, Dim::Xo), at(l.bounds, Dim::R), l.window.x) - 1 - l.window.x.padBegin);
          }
          // Every output index stays inside its tensor: writes never fall in the padding.
          for (const Access *out : l.nest.accessesOf(TensorRole::Ofm))
            for (size_t i = 0; i < out->index.size(); ++i) {
              auto [olo, ohi] = range(l.nest, out->index[i]);
              EXPECT_GE(olo, 0);
              EXPECT_LT(ohi, out->extent[i]);
            }
        }
    }
  EXPECT_GT(layers, 500);   // ten networks, twice
}

// --batch (AnalyzeOptions::batch) is the same as declaring that batch: every
// nest, bound and backward layer is built with it, none patched afterwards.
TEST(LoopNestSema, BatchOverrideIsTheDeclaredBatch) {
  std::string root = dfl::test::kStdlibRoot;
  for (const char *name : {"mlp", "alexnet", "resnet18"})
    for (bool train : {false, true}) {
      SCOPED_TRACE(std::string(name) + (train ? " training" : ""));
      std::string path = root + "/stdlib/nets/" + name + ".dfl";
      SourceManager sm;
      DiagnosticsEngine diags(sm);
      LoadedFiles files = loadFiles({path}, LoadOptions{{root}}, sm, diags);
      Model overridden = analyze(files.files, diags, AnalyzeOptions{train, 64});
      // The same network with the declaration rewritten.
      std::string text = sm.text(files.roots.at(0));
      size_t pos = text.find("batch N = 1;");
      ASSERT_NE(pos, std::string::npos);
      text.replace(pos, std::string("batch N = 1;").size(), "batch N = 64;");
      SourceManager sm2;
      DiagnosticsEngine diags2(sm2);
      LoadedFiles files2 = loadBuffer(path, text, LoadOptions{{root}}, sm2, diags2);
      Model declared = analyze(files2.files, diags2, AnalyzeOptions{train, {}});
      ASSERT_FALSE(diags.hasErrors() || diags2.hasErrors());
      const Network &a = overridden.networks.at(0), &b = declared.networks.at(0);
      EXPECT_EQ(a.batch, 64);
      EXPECT_EQ(b.batch, 64);
      ASSERT_EQ(a.layers.size(), b.layers.size());
      for (size_t i = 0; i < a.layers.size(); ++i) {
        EXPECT_EQ(a.layers[i].bounds, b.layers[i].bounds) << a.layers[i].name;
        EXPECT_EQ(a.layers[i].nest.text(), b.layers[i].nest.text());
        EXPECT_EQ(a.layers[i].nest.toIslSet(), b.layers[i].nest.toIslSet());
        EXPECT_EQ(at(a.layers[i].bounds, Dim::N), 64);
      }
    }
}
