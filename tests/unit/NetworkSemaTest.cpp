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
    p = softmax(s);
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
  // softmax fused into s.
  EXPECT_EQ(layer(c, "s").activations, std::vector<std::string>{"softmax"});
  EXPECT_EQ(c.model.networks[0].layers.size(), 2u);
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
