// Layer shape inference and MAC counts, against hand derivations.
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace dfl;
using dfl::test::compile;

namespace {
const Layer &layer(const test::Compiled &c, const std::string &name) {
  const Network &n = c.model.networks.at(0);
  int i = n.findLayer(name);
  EXPECT_GE(i, 0) << name;
  return n.layers.at(i);
}
} // namespace

TEST(NetworkSema, ConvWithStridePadDilationAndGroups) {
  auto c = compile(R"(network n {
    batch N = 2;
    input x [C=8, X=17, Y=9];
    a = conv(x, K=16, R=3, S=5, stride=2, pad=1, dilation=2, groups=4);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Layer &a = layer(c, "a");
  // Xo = floor((17 + 2*1 - 2*(3-1) - 1) / 2) + 1 = floor(14/2) + 1 = 8
  // Yo = floor((9 + 2*1 - 2*(5-1) - 1) / 2) + 1 = floor(2/2) + 1 = 2
  EXPECT_EQ(a.ofmShape, (TensorShape{16, 8, 2}));
  // Per group: C = 8/4 = 2 input channels. MACs = K*Xo*Yo*(C/g)*R*S = 16*8*2*2*3*5 = 7680.
  EXPECT_EQ(a.macs, 7680);
  EXPECT_EQ(at(a.bounds, Dim::C), 2);
  EXPECT_EQ(at(a.bounds, Dim::N), 2);
  EXPECT_EQ(a.wgtSize, 16 * 2 * 3 * 5);
  EXPECT_EQ(c.model.networks[0].totalMacs(), 2 * 7680);
}

TEST(NetworkSema, DepthwiseFcPoolsAndEltwise) {
  auto c = compile(R"(network n {
    input x [C=32, X=14, Y=14];
    d = dwconv(x, R=3, pad=1, stride=2);
    p = maxpool(d, R=3, stride=2, ceil=true);
    q = avgpool(d, R=7);
    s = add(p, p);
    f = fc(s, K=10);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // dwconv: Xo = floor((14 + 2 - 2 - 1)/2) + 1 = 7; MACs = C*Xo*Yo*R*S = 32*7*7*9 = 14112.
  EXPECT_EQ(layer(c, "d").ofmShape, (TensorShape{32, 7, 7}));
  EXPECT_EQ(layer(c, "d").macs, 14112);
  EXPECT_EQ(layer(c, "d").wgtSize, 32 * 9);
  // maxpool ceil: ceil((7 - 3)/2) + 1 = 3.
  EXPECT_EQ(layer(c, "p").ofmShape, (TensorShape{32, 3, 3}));
  EXPECT_EQ(layer(c, "p").macs, 0);
  EXPECT_EQ(layer(c, "p").ops, 32 * 3 * 3 * 9);
  // avgpool 7x7 with default stride 7 over 7x7: 1x1.
  EXPECT_EQ(layer(c, "q").ofmShape, (TensorShape{32, 1, 1}));
  EXPECT_EQ(layer(c, "s").ops, 32 * 3 * 3);
  // fc flattens 32*3*3 = 288 inputs: MACs = 10*288; R and S cover the input (nn_dataflow's FC).
  EXPECT_EQ(layer(c, "f").macs, 2880);
  EXPECT_EQ(at(layer(c, "f").bounds, Dim::R), 3);
  EXPECT_EQ(layer(c, "f").ofmShape, (TensorShape{10, 1, 1}));
}

TEST(NetworkSema, MultiOperandConvConcatenatesChannels) {
  auto c = compile(R"(network n {
    input a [C=3, X=8, Y=8];
    input b [C=5, X=8, Y=8];
    k = conv(a, b, K=4, R=1);
    j = concat(a, b, k);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // C = 3 + 5 = 8; MACs = 4*8*8*8 = 2048.
  EXPECT_EQ(layer(c, "k").macs, 2048);
  EXPECT_EQ(layer(c, "j").ofmShape, (TensorShape{12, 8, 8}));
}

TEST(NetworkSema, MatMulForAttention) {
  auto c = compile(R"(network n {
    input q [C=64, X=16];
    input k [C=64, X=16];
    input v [C=64, X=16];
    s = matmul(q, k, heads=4);
    p = softmax(s, groups=4);
    o = matmul(p, v, heads=4, transpose_b=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // scores: h * Lb = 4 * 16 = 64 channels x 16 positions; MACs = X*Y*Lb*Ca = 16*16*64 = 16384
  // (per head 16x16 scores over 16 channels: 4 * 16*16*16 = 16384).
  EXPECT_EQ(layer(c, "s").ofmShape, (TensorShape{64, 16, 1}));
  EXPECT_EQ(layer(c, "s").macs, 16384);
  // context: Ca = 64 = 4 * 16; output [Cb=64, 16]; MACs = X*Y*Cb*Lb = 16*64*16 = 16384.
  EXPECT_EQ(layer(c, "o").ofmShape, (TensorShape{64, 16, 1}));
  EXPECT_EQ(layer(c, "o").macs, 16384);
  // softmax is a layer of its own: per head (groups=4) over the 16 keys, a
  // row of 64/4 = 16 channels; 5 operations per element (docs/directives.md
  // §7): 5 * 64*16 = 5120.
  const Layer &p = layer(c, "p");
  EXPECT_EQ(p.type, LayerType::Softmax);
  EXPECT_TRUE(layer(c, "s").activations.empty());
  EXPECT_EQ(p.ofmShape, (TensorShape{64, 16, 1}));
  EXPECT_EQ(p.rowLength(), 16);
  EXPECT_EQ(p.macs, 0);
  EXPECT_EQ(p.ops, 5120);
  EXPECT_EQ(p.nest.statement, Statement::Softmax);
  EXPECT_EQ(c.model.networks[0].layers.size(), 3u);
}

TEST(NetworkSema, NormalizationsAndGeluAreLayers) {
  auto c = compile(R"(network n {
    input x [C=6, X=4, Y=3];
    sx = softmax(x, axis=X);
    sy = softmax(x, axis=Y);
    ln = layernorm(x);
    gn = layernorm(x, groups=3);
    g = gelu(x);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // Rows: along X the 4 positions, along Y the 3, layernorm the 6 channels,
  // 3 groups of 2 channels; gelu has none. ops per element 5, 7, 9.
  EXPECT_EQ(layer(c, "sx").rowLength(), 4);
  EXPECT_EQ(layer(c, "sy").rowLength(), 3);
  EXPECT_EQ(layer(c, "ln").rowLength(), 6);
  EXPECT_EQ(layer(c, "gn").rowLength(), 2);
  EXPECT_EQ(layer(c, "g").rowLength(), 0);
  EXPECT_EQ(layer(c, "sx").ops, 5 * 72);
  EXPECT_EQ(layer(c, "ln").ops, 7 * 72);
  EXPECT_EQ(layer(c, "g").ops, 9 * 72);
  EXPECT_TRUE(layer(c, "g").channelWise());
  // The nest: one channel dim that is C and K, one ifm access, the ofm written.
  EXPECT_EQ(layer(c, "g").nest.text(), "ofm g[n, c, xo, yo] <- gelu(ifm x[n, c, xo, yo])");
}

TEST(NetworkSema, RmsNormIsALayerNormVariant) {
  auto c = compile(R"(network n {
    input x [C=6, X=4, Y=3];
    r = rmsnorm(x);
    rg = rmsnorm(x, groups=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // layernorm's rows (the 6 channels; 2 groups of 3), 4 ops per element
  // (x², the mean square, the scaling by 1/rms, γ·: docs/directives.md §7).
  const Layer &r = layer(c, "r");
  EXPECT_EQ(r.type, LayerType::LayerNorm);
  EXPECT_TRUE(r.rms);
  EXPECT_STREQ(r.kindName(), "rmsnorm");
  EXPECT_TRUE(r.normalizes());
  EXPECT_EQ(r.rowLength(), 6);
  EXPECT_EQ(layer(c, "rg").rowLength(), 3);
  EXPECT_EQ(r.ops, 4 * 72);
  EXPECT_EQ(r.macs, 0);
  EXPECT_EQ(r.nest.statement, Statement::RmsNorm);
  EXPECT_EQ(r.nest.text(), "ofm r[n, c, xo, yo] <- rmsnorm(ifm x[n, c, xo, yo])");
}

TEST(NetworkSema, UnaryFunctionsAreLayersOrFusedSigmoids) {
  auto c = compile(R"(network n {
    input x [C=6, X=4, Y=3];
    c = conv(x, K=6, R=1);
    s = sigmoid(c);      // c is read by m too: a layer
    m = mul(c, s);
    f = silu(m);
    q = sigmoid(x);      // a network input: a layer
    c2 = conv(f, K=2, R=1);
    g = sigmoid(c2);     // read by nothing else: fused into c2
  })");
  ASSERT_EQ(c.diagnostics(), "");   // no W0306: nothing reads a value the sigmoid changed
  // 6·4·3 = 72 elements; 4 operations each (docs/directives.md §7): sigmoid
  // 1/(1 + exp(-x)) and silu x/(1 + exp(-x)) both negate, exp, add 1, divide.
  for (const char *name : {"s", "f", "q"}) {
    EXPECT_EQ(layer(c, name).type, LayerType::Unary) << name;
    EXPECT_EQ(layer(c, name).ops, 4 * 72) << name;
    EXPECT_EQ(layer(c, name).macs, 0) << name;
    EXPECT_TRUE(layer(c, name).channelWise()) << name;
  }
  EXPECT_EQ(layer(c, "s").unary, UnaryFn::Sigmoid);
  EXPECT_EQ(layer(c, "f").unary, UnaryFn::Silu);
  EXPECT_STREQ(layer(c, "f").kindName(), "silu");
  EXPECT_STREQ(layer(c, "q").kindName(), "sigmoid");
  EXPECT_EQ(layer(c, "f").nest.text(), "ofm f[n, c, xo, yo] <- silu(ifm m[n, c, xo, yo])");
  EXPECT_EQ(layer(c, "s").nest.statement, Statement::Unary);
  EXPECT_EQ(layer(c, "c2").activations, std::vector<std::string>{"sigmoid"});
  EXPECT_EQ(c.model.networks[0].findLayer("g"), -1);
  EXPECT_EQ(c.model.networks[0].layers.size(), 6u);   // c, s, m, f, q, c2
}

TEST(NetworkSema, UnaryFunctionMisuse) {
  auto c = compile(R"(network n {
    input x [C=6, X=4];
    a = silu(x, x);
    b = sigmoid();
    d = silu(x, K=2);
  })");
  EXPECT_EQ(c.diagnostics(), "3:9: E0206 'silu' takes 1 operand, got 2\n"
                             "4:9: E0206 'sigmoid' takes 1 operand, got 0\n"
                             "5:17: E0204 'silu' has no parameter 'K'; it takes no parameters\n");
}

TEST(NetworkSema, NormalizationParameterErrors) {
  auto c = compile(R"(network n {
    input x [C=6, X=4];
    a = softmax(x, axis=K);
    b = softmax(x, axis=X, groups=2);
    d = layernorm(x, groups=4);
  })");
  std::string d = c.diagnostics();
  EXPECT_NE(d.find("E0210"), std::string::npos) << d;   // axis=K
  EXPECT_NE(d.find("groups=2 of 'b' must divide its channels along axis C, but its axis is not C"), std::string::npos) << d;
  EXPECT_NE(d.find("groups=4 of 'd' must divide its channels along axis C, but it has C=6"), std::string::npos) << d;
}

TEST(NetworkSema, ActivationSharedWithRawUseWarns) {
  auto c = compile(R"(network n {
    input x [C=4];
    a = fc(x, K=4);
    r = relu(a);
    b = fc(a, K=2);
  })");
  EXPECT_EQ(c.diagnostics(), "5:12: W0306 activation 'relu' fuses into 'a', which is also used by 'b'\n");
  EXPECT_FALSE(c.diags->hasErrors());
}

TEST(NetworkSema, Errors) {
  auto c = compile(R"(network n {
    input x [C=3, X=8, Y=8];
    a = conv(x, K=4, R=3, groups=2);
    b = add(x, y);
    e = conv(x, K=4, R=20);
  })");
  EXPECT_EQ(c.diagnostics(),
            "3:9: E0303 groups=2 of 'a' must divide both C=3 and K=4\n"
            "4:16: E0202 unknown tensor 'y'\n"
            "5:9: E0301 output of 'e' would have Xo=-11 (input width 8, window 20, stride 1, padding 0, dilation 1)\n");
}

TEST(NetworkSema, BroadcastOperandIsThePerSampleWgt) {
  auto c = compile(R"(network n {
    batch N = 2;
    input x [C=8, X=6, Y=4];
    input s [C=8];
    m = mul(x, s);
    a = add(s, m);
    e = add(s, s);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // [8,6,4] times [8,1,1]: the full shape out, one product per element, the
  // small operand (second or first) read as the wgt, C = 8 words per sample.
  for (const char *name : {"m", "a"}) {
    const Layer &l = layer(c, name);
    EXPECT_EQ(l.ofmShape, (TensorShape{8, 6, 4})) << name;
    EXPECT_EQ(l.ifmShape, (TensorShape{8, 6, 4})) << name;
    EXPECT_EQ(l.ops, 8 * 6 * 4) << name;
    EXPECT_EQ(l.wgtSize, 8) << name;
    EXPECT_EQ(l.ifmOperands().size(), 1u) << name;
  }
  EXPECT_EQ(layer(c, "m").broadcast, 1);
  EXPECT_EQ(layer(c, "a").broadcast, 0);
  // Its access has no X or Y terms: s[n, c, 0, 0].
  const std::vector<const Access *> w = layer(c, "m").nest.accessesOf(TensorRole::Wgt);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0]->tensor, "s");
  EXPECT_EQ(layer(c, "m").nest.exprText(w[0]->index[2]), "0");
  EXPECT_EQ(layer(c, "m").nest.exprText(w[0]->index[3]), "0");
  EXPECT_EQ(w[0]->extent, (std::vector<int64_t>{2, 8, 1, 1}));
  // Two [C,1,1] operands are equal shapes: no broadcast, no wgt.
  EXPECT_EQ(layer(c, "e").broadcast, -1);
  EXPECT_EQ(layer(c, "e").wgtSize, 0);
}

TEST(NetworkSema, BroadcastsTheLanguageCannotExpress) {
  // Another C, a row [C,X,1] or a [1,X,Y] plane, or a third operand: E0302.
  auto c = compile(R"(network n {
    input x [C=8, X=6, Y=4];
    input s [C=4]; input r [C=8, X=6]; input p [C=1, X=6, Y=4]; input t [C=8];
    a = mul(x, s);
    b = mul(x, r);
    d = add(p, x);
    e = add(x, x, t);
  })");
  EXPECT_EQ(c.diagnostics(),
            "4:16: E0302 operands of 'a' have different shapes: 'x' has [C=8, X=6, Y=4], 's' has [C=4, X=1, Y=1]\n"
            "5:16: E0302 operands of 'b' have different shapes: 'x' has [C=8, X=6, Y=4], 'r' has [C=8, X=6, Y=1]\n"
            "6:16: E0302 operands of 'd' have different shapes: 'p' has [C=1, X=6, Y=4], 'x' has [C=8, X=6, Y=4]\n"
            "7:19: E0302 operands of 'e' have different shapes: 'x' has [C=8, X=6, Y=4], 't' has [C=8, X=1, Y=1]\n");
}

TEST(NetworkSema, BroadcastTrains) {
  // The broadcast operand's gradient is m__wgrad's output, the wgt role
  // written; the large operand's is m__dgrad's (x is the input: none).
  auto c = compile(R"(network n {
    input x [C=8, X=6, Y=4];
    s = avgpool(x, R=6, S=4);
    m = mul(x, s);
  })", AnalyzeOptions{true, {}});
  ASSERT_EQ(c.diagnostics(), "");
  std::vector<std::string> names;
  for (const Layer &l : c.model.networks[0].layers)
    names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"s", "m", "m__wgrad"}));
  const Layer &w = c.model.networks[0].layers[2];
  EXPECT_EQ(w.output, TensorRole::Wgt);
  ASSERT_EQ(w.nest.accessesOf(TensorRole::Wgt).size(), 1u);
  EXPECT_EQ(w.nest.accessesOf(TensorRole::Wgt)[0]->tensor, "s__grad");
}

TEST(NetworkSema, StrideDilationAndPaddingPerAxis) {
  auto c = compile(R"(network n {
    input x [C=1, X=700, Y=161];
    a = conv(x, K=32, R=20, S=5, stride=8 x 2);
    b = conv(x, K=4, R=3, stride=2, pad=0 x 0, 1 x 1);
    d = dwconv(x, R=3, dilation=2 x 1, pad=2 x 0);
    p = maxpool(x, R=3, S=2, stride=2 x 1, pad=1 x 0, 0 x 1);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  // DeepBench's 20 x 5 filter at strides 8 (width) and 2 (height):
  // Xo = ⌊(700 − 20)/8⌋ + 1 = 86, Yo = ⌊(161 − 5)/2⌋ + 1 = 79;
  // MACs = K·Xo·Yo·C·R·S = 32·86·79·1·20·5 = 21740800.
  const Layer &a = layer(c, "a");
  EXPECT_EQ(a.ofmShape, (TensorShape{32, 86, 79}));
  EXPECT_EQ(a.macs, 21740800);
  EXPECT_EQ(a.window.x, (WindowAxis{8, 1, 0, 0}));
  EXPECT_EQ(a.window.y, (WindowAxis{2, 1, 0, 0}));
  EXPECT_EQ(a.nest.text(), "ofm a[n, k, xo, yo] <- mac(ifm x[n, c, 8*xo + r, 2*yo + s], wgt a__wgt[k, c, r, s])");
  // ONNX SAME_UPPER (pads top, left = 0, bottom, right = 1): Xo = ⌊(700 + 1 − 3)/2⌋
  // + 1 = 350 = ⌈700/2⌉, Yo = ⌊(161 + 1 − 3)/2⌋ + 1 = 80 = ⌈161/2⌉; the
  // window starts at 2·xo (no begin padding).
  const Layer &b = layer(c, "b");
  EXPECT_EQ(b.ofmShape, (TensorShape{4, 350, 80}));
  EXPECT_EQ(b.window.x, (WindowAxis{2, 1, 0, 1}));
  EXPECT_EQ(b.window.y, (WindowAxis{2, 1, 0, 1}));
  EXPECT_EQ(b.nest.text(), "ofm b[n, k, xo, yo] <- mac(ifm x[n, c, 2*xo + r, 2*yo + s], wgt b__wgt[k, c, r, s])");
  // Dilation 2 along the width, padding 2 there only: Xo = 700 + 4 − 4 − 1 + 1
  // = 700, Yo = 161 − 2 − 1 + 1 = 159.
  const Layer &d = layer(c, "d");
  EXPECT_EQ(d.ofmShape, (TensorShape{1, 700, 159}));
  EXPECT_EQ(d.nest.text(), "ofm d[n, c, xo, yo] <- mac(ifm x[n, c, xo + 2*r - 2, yo + s], wgt d__wgt[c, r, s])");
  // Pool 3 x 2, stride 2 x 1, pads left 1, top 0, right 0, bottom 1:
  // Xo = ⌊(700 + 1 − 3)/2⌋ + 1 = 350, Yo = ⌊(161 + 1 − 2)/1⌋ + 1 = 161.
  const Layer &p = layer(c, "p");
  EXPECT_EQ(p.ofmShape, (TensorShape{1, 350, 161}));
  EXPECT_EQ(p.window.x, (WindowAxis{2, 1, 1, 0}));
  EXPECT_EQ(p.window.y, (WindowAxis{1, 1, 0, 1}));
  // The loop nest's view gives the window back: the begin padding, and the end
  // padding the windows reach. b's last column is 2·349 + 2 = 700, one past
  // the 700 columns; its last row 2·79 + 2 = 160, the map's last (161 rows):
  // the floor leaves the declared bottom padding unused.
  EXPECT_EQ(kaplaView(b.nest).window.x, (WindowAxis{2, 1, 0, 1}));
  EXPECT_EQ(kaplaView(b.nest).window.y, (WindowAxis{2, 1, 0, 0}));
}

TEST(NetworkSema, PerAxisErrors) {
  auto c = compile(R"(network n {
    input x [C=3, X=8, Y=8];
    a = conv(x, K=4, R=3, stride=0 x 2);
    b = conv(x, K=4, R=3, stride=2, 2 x 2);
    e = conv(x, K=4, R=3, S=9, pad=1 x 0);
    f = maxpool(x, R=3, S=2, pad=1 x 3);
    g = conv(x, K=4, R=10, pad=0 x 0, 1 x 0);
    h = fc(x, K=4, pad=1 x 1);
  })");
  EXPECT_EQ(c.diagnostics(),
            "3:34: E0210 parameter 'stride' must be a positive integer or X x Y of positive integers, got 0 x 2\n"
            "4:37: E0210 parameter 'stride' must be a positive integer or X x Y of positive integers, got 2, 2 x 2\n"
            "5:9: E0301 output of 'e' would have Yo=0 (input height 8, window 9, stride 1, padding 0, dilation 1)\n"
            "6:9: E0307 padding 3 of 'f' must be smaller than its window 3\n"
            "7:9: E0301 output of 'g' would have Xo=0 (input width 8, window 10, stride 1, padding 0 + 1, dilation 1)\n"
            "8:20: E0204 'fc' has no parameter 'pad'; it takes K\n");
}
