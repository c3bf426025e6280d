// The simulator's data and its independent reference (backend/SimData.h,
// backend/Reference.h; docs/simulator.md, "Data and the reference"): every
// layer kind against numbers derived by hand, and properties between kinds.
#include "backend/Reference.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

using namespace dfl;
using namespace dfl::sim;

namespace {

constexpr Word kMin = std::numeric_limits<Word>::min();

/// The network of `text`, with its backward layers if `train`.
test::Compiled compileNet(const std::string &text, bool train = false) {
  return test::compile(text, AnalyzeOptions{train, {}});
}

/// The one tensor layer `name` writes.
std::vector<Word> run(const Network &net, const std::string &name, const TensorStore &store) {
  const int l = net.findLayer(name);
  EXPECT_GE(l, 0) << name;
  return referenceLayer(net, l, store);
}

/// Σ a·b modulo 2^32: the inner product of two tensors in the words' ring.
Word dot(const std::vector<Word> &a, const std::vector<Word> &b) {
  uint32_t sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += static_cast<uint32_t>(a[i]) * static_cast<uint32_t>(b[i]);
  return static_cast<Word>(sum);
}

} // namespace

// ---- seeded data ------------------------------------------------------------

TEST(SimData, SeedsArePublishedSplitMixAndFnvValues) {
  // FNV-1a 64: the empty string hashes to the offset basis 0xcbf29ce484222325,
  // "a" to 0xaf63dc4c8601ec8c (the published test vectors).
  EXPECT_EQ(tensorKey("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(tensorKey("a", 0), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(tensorKey("a", 0xff), 0xaf63dc4c8601ec73ull);   // ...8c ^ ff = ...73
  // SplitMix64 from state 0 outputs 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4,
  // 0x06c45d188009454f: top nibbles 14, 6, 0, minus 8.
  EXPECT_EQ(seedWord(0, 0), 6);
  EXPECT_EQ(seedWord(0, 1), -2);
  EXPECT_EQ(seedWord(0, 2), -8);
  // The seed that makes the empty name's key 0 gives those words.
  EXPECT_EQ(seedTensor("", 3, 0xcbf29ce484222325ull), (std::vector<Word>{6, -2, -8}));
}

TEST(SimData, SeededWordsAreNarrowCounterBasedAndDeterministic) {
  const std::vector<Word> w = seedTensor("conv1__wgt", 4096, 7);
  std::set<Word> values(w.begin(), w.end());
  // Every value of [-8, 7] occurs, nothing else (4096 draws of 16 values).
  EXPECT_EQ(values.size(), 16u);
  EXPECT_EQ(*values.begin(), -8);
  EXPECT_EQ(*values.rbegin(), 7);
  EXPECT_EQ(seedTensor("conv1__wgt", 4096, 7), w);
  // Word i depends on the name, the seed and i alone, not on the size.
  const std::vector<Word> prefix = seedTensor("conv1__wgt", 100, 7);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), w.begin()));
  EXPECT_NE(seedTensor("conv1__wgt", 100, 8), prefix);
  EXPECT_NE(seedTensor("conv2__wgt", 100, 7), prefix);
}

TEST(SimData, SeedNetworkHoldsInputsWeightsAndUnwrittenGradients) {
  auto c = compileNet(R"(network t {
    batch N = 2;
    input x [C=3, X=5, Y=4];
    a = conv(x, K=4, R=3, S=2, groups=1);
    d = dwconv(a, R=2);
    f = fc(d, K=6);
    q = conv(x, K=4, R=1);
    m = matmul(a, q);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  const TensorStore s = seedNetwork(net, 1);
  EXPECT_EQ(s.at("x").extent, (std::vector<int64_t>{2, 3, 5, 4}));
  EXPECT_EQ(s.at("a__wgt").extent, (std::vector<int64_t>{4, 3, 3, 2}));   // [K][C/groups][R][S]
  EXPECT_EQ(s.at("d__wgt").extent, (std::vector<int64_t>{4, 2, 2}));      // [C][R][S]
  // d is 4 x 2 x 2 (5-3+1 = 3, then 3-2+1 = 2 wide; 4-2+1 = 3, then 2 high):
  // fc's weights are [K][C][X][Y] of its input.
  EXPECT_EQ(s.at("f__wgt").extent, (std::vector<int64_t>{6, 4, 2, 2}));
  EXPECT_EQ(s.at("x").data, seedTensor("x", 120, 1));
  // The matmul's wgt is its operand q, no stored weights.
  EXPECT_FALSE(s.contains("m__wgt"));
  // Training: f and m are last, nobody computes their gradients; a's comes
  // from d__dgrad and m__dgrad, d's from f__dgrad, q's from m__wgrad.
  EXPECT_TRUE(s.contains("f__grad"));
  EXPECT_TRUE(s.contains("m__grad"));
  EXPECT_EQ(s.at("f__grad").extent, (std::vector<int64_t>{2, 6, 1, 1}));
  EXPECT_FALSE(s.contains("a__grad"));
  EXPECT_FALSE(s.contains("d__grad"));
  EXPECT_FALSE(s.contains("q__grad"));
  EXPECT_FALSE(s.contains("x__grad"));
  // Nothing else: one input, four weights (a, d, f, q), two gradients.
  EXPECT_TRUE(s.contains("q__wgt"));
  EXPECT_EQ(s.tensors().size(), 7u);
}

TEST(SimData, FirstMismatchNamesTheElement) {
  const Tensor expected{{2, 3, 4}, std::vector<Word>(24, 1)};
  Tensor actual = expected;
  EXPECT_FALSE(firstMismatch(expected, actual));
  // Offsets 17 and 20 differ; 17 = (1·3 + 1)·4 + 1 is [1][1][1], the first.
  actual.data[20] = 5;
  actual.data[17] = -9;
  const std::optional<Mismatch> m = firstMismatch(expected, actual);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->offset, 17);
  EXPECT_EQ(m->index, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(m->expected, 1);
  EXPECT_EQ(m->actual, -9);
  EXPECT_THROW(firstMismatch(expected, Tensor{{24}, expected.data}), InternalError);
}

// ---- forward layers, by hand --------------------------------------------------

TEST(Reference, ConvStridePad) {
  auto c = compileNet("network t { input x [C=1, X=3, Y=3]; c = conv(x, K=1, R=2, stride=2, pad=1); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // x[i][j] = 3i + j + 1, w[r][s] = 2r + s + 1 (row-major [X][Y] and [R][S]).
  s.set("x", {{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}});
  s.set("c__wgt", {{1, 1, 2, 2}, {1, 2, 3, 4}});
  // Xo = floor((3 + 2 - 1 - 1) / 2) + 1 = 2, likewise Yo.
  // out[xo][yo] = Σ x[2xo + r - 1][2yo + s - 1] · w[r][s], padding 0:
  //   (0,0): only r = s = 1 inside: x[0][0]·w[1][1] = 1·4 = 4
  //   (0,1): r = 1, s = 0,1: x[0][1]·w[1][0] + x[0][2]·w[1][1] = 2·3 + 3·4 = 18
  //   (1,0): r = 0,1, s = 1: x[1][0]·w[0][1] + x[2][0]·w[1][1] = 4·2 + 7·4 = 36
  //   (1,1): all four: 5·1 + 6·2 + 8·3 + 9·4 = 77
  EXPECT_EQ(run(net, "c", s), (std::vector<Word>{4, 18, 36, 77}));
}

TEST(Reference, ConvTransposeScattersTaps) {
  auto c = compileNet(R"(network t {
    input x [C=1, X=3];
    input z [C=4];
    u = conv_transpose(x, K=1, R=3, S=1, stride=2 x 1, pad=1 x 0);
    g = conv_transpose(z, K=2, R=1, groups=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 1, 3, 1}, {1, 2, 3}});
  s.set("u__wgt", {{1, 1, 3, 1}, {1, 10, 100}});
  // Width (3 − 1)·2 − 2 + 3 = 5; y[2·xi + r − 1] += x[xi]·w[r]:
  //   xi = 0: r = 0 at −1 dropped, y[0] += 10, y[1] += 100
  //   xi = 1: y[1] += 2, y[2] += 20, y[3] += 200
  //   xi = 2: y[3] += 3, y[4] += 30, r = 2 at 5 dropped
  EXPECT_EQ(run(net, "u", s), (std::vector<Word>{10, 102, 20, 203, 30}));
  // Weights [Cin][Cout/G] = [4][1]: group 0 reads channels 0, 1 into output
  // 0, group 1 channels 2, 3 into output 1: 1·1 + 10·2 = 21, 100·3 + 1000·4 = 4300.
  s.set("z", {{1, 4, 1, 1}, {1, 10, 100, 1000}});
  s.set("g__wgt", {{4, 1, 1, 1}, {1, 2, 3, 4}});
  EXPECT_EQ(run(net, "g", s), (std::vector<Word>{21, 4300}));
}

TEST(Reference, ConvWrapsAroundModulo2To32) {
  auto c = compileNet("network t { input x [C=3]; f = fc(x, K=3); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 3, 1, 1}, {1 << 30, 2147483647, 65536}});
  s.set("f__wgt", {{3, 3, 1, 1}, {4, 1, 0, /**/ 0, 1, 1, /**/ 0, 0, 65536}});
  // k=0: 2^30·4 + (2^31 - 1) = 2^32 + 2^31 - 1 ≡ 2^31 - 1.
  // k=1: (2^31 - 1) + 65536 = 2^31 + 65535 ≡ 2^31 + 65535 - 2^32 = -2147418113.
  // k=2: 65536·65536 = 2^32 ≡ 0 (the product wraps).
  EXPECT_EQ(run(net, "f", s), (std::vector<Word>{2147483647, -2147418113, 0}));
}

TEST(Reference, ConvGroups) {
  auto c = compileNet("network t { input x [C=4]; c = conv(x, K=2, R=1, groups=2); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 4, 1, 1}, {1, 10, 100, 1000}});
  // Weights [K][C/groups][R][S] = [2][2][1][1]: group 0 reads channels 0, 1
  // into output 0; group 1 channels 2, 3 into output 1.
  s.set("c__wgt", {{2, 2, 1, 1}, {1, 2, 3, 4}});
  // out0 = 1·1 + 10·2 = 21; out1 = 100·3 + 1000·4 = 4300.
  EXPECT_EQ(run(net, "c", s), (std::vector<Word>{21, 4300}));
}

TEST(Reference, ConvDilation) {
  auto c = compileNet("network t { input x [C=1, X=5]; c = conv(x, K=1, R=2, S=1, dilation=2); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 1, 5, 1}, {1, 2, 3, 4, 5}});
  s.set("c__wgt", {{1, 1, 2, 1}, {10, 1}});
  // Xo = 5 - 2·(2-1) - 1 + 1 = 3; out[xo] = x[xo]·10 + x[xo + 2]·1:
  // 10 + 3, 20 + 4, 30 + 5.
  EXPECT_EQ(run(net, "c", s), (std::vector<Word>{13, 24, 35}));
}

TEST(Reference, DepthwiseConv) {
  auto c = compileNet("network t { input x [C=2, X=3]; d = dwconv(x, R=2, S=1); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 2, 3, 1}, {5, 7, 11, /**/ 1, 2, 3}});
  s.set("d__wgt", {{2, 2, 1}, {1, -1, /**/ 2, 3}});
  // Channel 0: 5 - 7 = -2, 7 - 11 = -4. Channel 1: 2 + 6 = 8, 4 + 9 = 13.
  EXPECT_EQ(run(net, "d", s), (std::vector<Word>{-2, -4, 8, 13}));
}

TEST(Reference, FullyConnectedFlattensAndConcatenates) {
  auto c = compileNet(R"(network t {
    input x [C=2, X=2]; input a [C=1, X=2]; input b [C=1, X=2];
    f = fc(x, K=1); g = fc(a, b, K=1);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 2, 2, 1}, {5, 6, 7, 8}});
  s.set("f__wgt", {{1, 2, 2, 1}, {1, 2, 3, 4}});
  // Flattened (c, x, y): 5·1 + 6·2 + 7·3 + 8·4 = 70.
  EXPECT_EQ(run(net, "f", s), (std::vector<Word>{70}));
  // Two operands read as their channel concatenation: the same input.
  s.set("a", {{1, 1, 2, 1}, {5, 6}});
  s.set("b", {{1, 1, 2, 1}, {7, 8}});
  s.set("g__wgt", {{1, 2, 2, 1}, {1, 2, 3, 4}});
  EXPECT_EQ(run(net, "g", s), (std::vector<Word>{70}));
}

TEST(Reference, MatMulHeads) {
  auto c = compileNet("network t { input a [C=2, X=2]; input b [C=2, X=1, Y=2]; m = matmul(a, b, heads=2); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("a", {{1, 2, 2, 1}, {1, 2, /**/ 3, 4}});   // a[c][x]
  s.set("b", {{1, 2, 1, 2}, {5, 6, /**/ 7, 8}});   // b[c][j], j = by
  // Lb = 2, head h owns channel h of each: out[2h + j][x] = a[h][x]·b[h][j].
  //   out[0] = [1, 2]·5, out[1] = [1, 2]·6, out[2] = [3, 4]·7, out[3] = [3, 4]·8
  EXPECT_EQ(run(net, "m", s), (std::vector<Word>{5, 10, 6, 12, 21, 28, 24, 32}));
}

TEST(Reference, MatMulTransposedHeads) {
  auto c = compileNet(
      "network t { input a [C=4]; input b [C=2, X=2]; m = matmul(a, b, heads=2, transpose_b=true); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("a", {{1, 4, 1, 1}, {1, 2, 3, 4}});
  s.set("b", {{1, 2, 2, 1}, {5, 6, /**/ 7, 8}});   // b[k][j], j = bx
  // Lb = 2, Cb/H = 1: out[h] = Σ_j a[2h + j]·b[h][j]:
  //   out[0] = 1·5 + 2·6 = 17, out[1] = 3·7 + 4·8 = 53.
  EXPECT_EQ(run(net, "m", s), (std::vector<Word>{17, 53}));
}

TEST(Reference, CausalAttentionSeesOnlyTheTriangle) {
  // 2 queries after 1 cached key: Lb = 3 keys, X = 2, offset o = 3 − 2 = 1:
  // query x sees keys j <= x + 1 (query 0 keys 0, 1; query 1 all three).
  auto c = compileNet(R"(network t {
    input q [C=1, X=2]; input k [C=1, X=3]; input v [C=1, X=3];
    s = matmul(q, k, causal=true);
    p = softmax(s, causal=true);
    o = matmul(p, v, transpose_b=true, causal=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore st;
  st.set("q", {{1, 1, 2, 1}, {1, 2}});      // q[x]
  st.set("k", {{1, 1, 3, 1}, {3, 5, 7}});   // k[j]
  st.set("v", {{1, 1, 3, 1}, {1, 2, 4}});   // v[j]
  // s[j][x] = q[x]·k[j] where j <= x + 1, else never computed (0):
  //   j = 0: 3, 6; j = 1: 5, 10; j = 2: 0 (masked at x = 0), 14.
  EXPECT_EQ(run(net, "s", st), (std::vector<Word>{3, 6, /**/ 5, 10, /**/ 0, 14}));
  // p over each query's seen keys alone; a masked word is exactly 0.
  // Query 0, scores (0, 0) seen (masked 7 would win were it read): e = 65536
  // twice, 16·65536/131072 = 8 each, the third 0. Query 1, (16, 16, 16)
  // seen: 16/3 -> 5 each. (Without the mask query 0 would be (0, 0, 7): t =
  // 7·23/16 = 10, e = 65536·22/32 = 45056 for the zeros: 16·45056/155648 = 4.)
  st.set("s", {{1, 3, 2, 1}, {0, 16, /**/ 0, 16, /**/ 7, 16}});
  EXPECT_EQ(run(net, "p", st), (std::vector<Word>{8, 5, /**/ 8, 5, /**/ 0, 5}));
  // o[x] = Σ_{j <= x + 1} p[j][x]·v[j]; p's masked word 9 is not read:
  //   x = 0: 1·1 + 2·2 = 5; x = 1: 3·1 + 4·2 + 5·4 = 31.
  st.set("p", {{1, 3, 2, 1}, {1, 3, /**/ 2, 4, /**/ 9, 5}});
  EXPECT_EQ(run(net, "o", st), (std::vector<Word>{5, 31}));
}

TEST(Reference, MatMulGroupedQueryHeads) {
  // 4 query heads of one channel, 2 K/V heads: query head h reads b's head h / 2.
  auto c = compileNet(R"(network t {
    input a [C=4]; input b [C=2, X=2]; input p [C=8];
    s = matmul(a, b, heads=4, kv_heads=2); o = matmul(p, b, heads=4, kv_heads=2, transpose_b=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore st;
  st.set("a", {{1, 4, 1, 1}, {1, 2, 3, 4}});
  st.set("b", {{1, 2, 2, 1}, {5, 6, /**/ 7, 8}});   // b[g][j]
  st.set("p", {{1, 8, 1, 1}, {1, 0, 0, 1, 1, 1, 2, -1}});
  // out[2h + j] = a[h]·b[h / 2][j]: 1·[5, 6], 2·[5, 6], 3·[7, 8], 4·[7, 8].
  EXPECT_EQ(run(net, "s", st), (std::vector<Word>{5, 6, 10, 12, 21, 24, 28, 32}));
  // out[h] = Σ_j p[2h + j]·b[h / 2][j]: 5, 6, 7 + 8 = 15, 14 − 8 = 6.
  EXPECT_EQ(run(net, "o", st), (std::vector<Word>{5, 6, 15, 6}));
}

TEST(Reference, MatMulOfJoinedSecondOperands) {
  // A decode step's scores and context: the cache b (2 tokens) and the new
  // token's n joined along X, Lb = 3, one head.
  auto c = compileNet(R"(network t {
    input a [C=2]; input b [C=2, X=2]; input n [C=2]; input p [C=3];
    s = matmul(a, b, n); o = matmul(p, b, n, transpose_b=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore st;
  st.set("a", {{1, 2, 1, 1}, {1, 2}});
  st.set("b", {{1, 2, 2, 1}, {3, 4, /**/ 5, 6}});   // b[c][j]: channel 0 is 3 4, channel 1 is 5 6
  st.set("n", {{1, 2, 1, 1}, {7, 8}});              // the new token: column j = 2
  st.set("p", {{1, 3, 1, 1}, {1, -1, 2}});
  // out[j] = Σ_c a[c]·b'[c][j], b' = [[3, 4, 7], [5, 6, 8]]: 1·3 + 2·5 = 13, 1·4 + 2·6 = 16, 1·7 + 2·8 = 23.
  EXPECT_EQ(run(net, "s", st), (std::vector<Word>{13, 16, 23}));
  // out[k] = Σ_j p[j]·b'[k][j]: 3 − 4 + 14 = 13, 5 − 6 + 16 = 15.
  EXPECT_EQ(run(net, "o", st), (std::vector<Word>{13, 15}));
}

TEST(Reference, MatMulOfJoinedSecondOperandsPerSample) {
  // Batch 2: each sample's first operand is its own, not joined with the new
  // token's n (which is read as the wgt, like the cache b).
  auto c = compileNet("network t { batch N = 2; input a [C=1]; input b [C=1]; input n [C=1]; s = matmul(a, b, n); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore st;
  st.set("a", {{2, 1, 1, 1}, {2, 3}});
  st.set("b", {{2, 1, 1, 1}, {5, 7}});
  st.set("n", {{2, 1, 1, 1}, {11, 13}});
  // out[n][j] = a[n]·[b[n], n[n]][j]: sample 0 2·[5, 11], sample 1 3·[7, 13].
  EXPECT_EQ(run(net, "s", st), (std::vector<Word>{10, 22, 21, 39}));
}

TEST(Reference, MaxPoolCeilModeReadsMinusInfinityPastTheInput) {
  auto c = compileNet(R"(network t {
    input x [C=1, X=4]; input y [C=1, X=4, Y=4];
    p = maxpool(x, R=2, S=1, stride=3, ceil=true);
    q = maxpool(y, R=2, stride=3, pad=1, ceil=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // Xo = ceil((4 - 2) / 3) + 1 = 2: windows [0, 1] and [3, 4], 4 past the input.
  // All negative, so a 0 for the missing element would show.
  s.set("x", {{1, 1, 4, 1}, {-5, -3, -9, -7}});
  EXPECT_EQ(run(net, "p", s), (std::vector<Word>{-3, -7}));
  // 4 x 4, pad 1: ceil((4 + 2 - 2) / 3) + 1 = 3 windows, x in [-1, 0],
  // [2, 3], [5, 6]; the last starts at 5, past the input, and is dropped as
  // Caffe drops it ((3 - 1)·3 = 6 >= 4 + 1): Xo = 2 (once it was kept, its
  // max of nothing −∞). y[i][j] = -(4i + j + 1), so a window's max is at
  // its smallest inside i and j:
  //   (0,0) {0}x{0}: -1    (0,1) {0}x{2,3}: -3    (1,0) {2,3}x{0}: -9
  //   (1,1) {2,3}x{2,3}: -11
  std::vector<Word> y;
  for (int i = 0; i < 16; ++i)
    y.push_back(-(i + 1));
  s.set("y", {{1, 1, 4, 4}, y});
  EXPECT_EQ(net.layers[static_cast<size_t>(net.findLayer("q"))].ofmShape.X, 2);
  EXPECT_EQ(run(net, "q", s), (std::vector<Word>{-1, -3, -9, -11}));
}

TEST(Reference, AvgPoolSumsTruncatedTerms) {
  auto c = compileNet(R"(network t {
    input x [C=1, X=2, Y=2]; input z [C=1, X=3];
    a = avgpool(x, R=2);
    b = avgpool(z, R=2, S=1, stride=2, ceil=true);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // Σ trunc(x / 4): 7/4 → 1, -7/4 → -1, 5/4 → 1, 3/4 → 0; sum 1 (the exact
  // mean, 8/4 = 2, is not what a sum of per-element terms gives).
  s.set("x", {{1, 1, 2, 2}, {7, -7, 5, 3}});
  EXPECT_EQ(run(net, "a", s), (std::vector<Word>{1}));
  // Xo = ceil((3 - 2) / 2) + 1 = 2, windows [0, 1] and [2, 3]; the divisor is
  // R·S = 2 for both, the element past the input contributes 0:
  //   trunc(8/2) + trunc(-3/2) = 4 - 1 = 3;  trunc(5/2) + 0 = 2.
  s.set("z", {{1, 1, 3, 1}, {8, -3, 5}});
  EXPECT_EQ(run(net, "b", s), (std::vector<Word>{3, 2}));
}

TEST(Reference, AddMulConcat) {
  auto c = compileNet(R"(network t {
    batch N = 2;
    input a [C=1, X=2]; input b [C=2, X=2]; input u [C=2]; input v [C=2]; input w [C=2];
    s = add(u, v, w); m = mul(u, v, w); k = concat(a, b);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // Two samples each.
  s.set("u", {{2, 2, 1, 1}, {1, -2, /**/ 1, 65536}});
  s.set("v", {{2, 2, 1, 1}, {3, 4, /**/ 3, 65536}});
  s.set("w", {{2, 2, 1, 1}, {5, 6, /**/ 5, 7}});
  // add: 1+3+5 = 9, -2+4+6 = 8, 9, 65536·2 + 7 = 131079.
  EXPECT_EQ(run(net, "s", s), (std::vector<Word>{9, 8, 9, 131079}));
  // mul: 15, -2·4·6 = -48, 15, 65536·65536·7 = 7·2^32 ≡ 0.
  EXPECT_EQ(run(net, "m", s), (std::vector<Word>{15, -48, 15, 0}));
  // concat along C, per sample: a's channel, then b's two.
  s.set("a", {{2, 1, 2, 1}, {1, 2, /**/ 3, 4}});
  s.set("b", {{2, 2, 2, 1}, {10, 11, 12, 13, /**/ 14, 15, 16, 17}});
  EXPECT_EQ(run(net, "k", s), (std::vector<Word>{1, 2, 10, 11, 12, 13, /**/ 3, 4, 14, 15, 16, 17}));
}

TEST(Reference, ConcatAlongWidthAndHeight) {
  auto c = compileNet(R"(network t {
    batch N = 2;
    input a [C=2, X=2, Y=1]; input b [C=2, X=1, Y=1];
    input p [C=1, X=2, Y=2]; input q [C=1, X=2, Y=1];
    kx = concat(a, b, axis=X); ky = concat(p, q, axis=Y);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // [N][C][X][Y]: a's channel 0 is 1 2, channel 1 3 4; b one column per channel.
  s.set("a", {{2, 2, 2, 1}, {1, 2, 3, 4, /**/ 5, 6, 7, 8}});
  s.set("b", {{2, 2, 1, 1}, {10, 11, /**/ 12, 13}});
  // Along X, per sample and channel: a's two columns, then b's one.
  EXPECT_EQ(run(net, "kx", s), (std::vector<Word>{1, 2, 10, 3, 4, 11, /**/ 5, 6, 12, 7, 8, 13}));
  // p: column 0 is rows 1 2, column 1 rows 3 4; q one row per column.
  s.set("p", {{2, 1, 2, 2}, {1, 2, 3, 4, /**/ 5, 6, 7, 8}});
  s.set("q", {{2, 1, 2, 1}, {10, 11, /**/ 12, 13}});
  // Along Y, per sample and column: p's two rows, then q's one.
  EXPECT_EQ(run(net, "ky", s), (std::vector<Word>{1, 2, 10, 3, 4, 11, /**/ 5, 6, 12, 7, 8, 13}));
}

TEST(Reference, UpsampleAndDepthToSpace) {
  auto c = compileNet(R"(network t {
    input x [C=1, X=2, Y=2]; input z [C=4, X=1, Y=2];
    u = upsample(x, scale=2 x 1);
    dcr = depth_to_space(z, block=2); crd = depth_to_space(z, block=2, mode=CRD);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // [N][C][X][Y]: x's column 0 is rows 1 2, column 1 rows 3 4.
  s.set("x", {{1, 1, 2, 2}, {1, 2, 3, 4}});
  // Nearest, 2 along X: columns 0 0 1 1 of x, each with its rows.
  EXPECT_EQ(run(net, "u", s), (std::vector<Word>{1, 2, 1, 2, 3, 4, 3, 4}));
  // z: channel k at (0, y) is 10·k + y. ONNX's DepthToSpace on [1, 4, H=2,
  // W=1] (W is DFL's X, H its Y), output [1, 1, H=4, W=2]: DCR reads channel
  // (i·2 + j)·1 + 0 at (h·2 + i, w·2 + j), CRD 0·4 + i·2 + j — equal for
  // one output channel: out(x = j, y = 2h + i) = z[2i + j][0][h].
  s.set("z", {{1, 4, 1, 2}, {0, 1, 10, 11, 20, 21, 30, 31}});
  // [X=2][Y=4]: x = 0 (j = 0): y = 0..3 is (h, i) = (0,0) (0,1) (1,0) (1,1):
  // channels 0 2 0 2 at h 0 0 1 1: 0 20 1 21; x = 1: channels 1 3: 10 30 11 31.
  const std::vector<Word> oneChannel{0, 20, 1, 21, 10, 30, 11, 31};
  EXPECT_EQ(run(net, "dcr", s), oneChannel);
  EXPECT_EQ(run(net, "crd", s), oneChannel);
}

TEST(Reference, BilinearUpsample) {
  // PyTorch's F.interpolate(mode="bilinear", align_corners=False): output o
  // of an axis scaled by 2 samples the input at (o + 0.5)/2 − 0.5, clamped
  // to [0, X − 1]: 0, 0.25, 0.75, 1 for X = 2. Weights in quarters per
  // axis scaled by 2, halves per axis scaled by 1; each term x·wx·wy / (4·sx·sy)
  // rounded toward zero.
  auto c = compileNet(R"(network t {
    input x [C=1, X=2, Y=1]; input z [C=1, X=2, Y=2];
    u = upsample(x, scale=2 x 1, mode=bilinear); v = upsample(z, scale=2, mode=bilinear);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // [8, 16]: 8; 0.75·8 + 0.25·16 = 10; 0.25·8 + 0.75·16 = 14; 16 (PyTorch's values).
  s.set("x", {{1, 1, 2, 1}, {8, 16}});
  EXPECT_EQ(run(net, "u", s), (std::vector<Word>{8, 10, 14, 16}));
  // [1, 2]: each term rounded toward zero: 1·4·2/8 = 1; 1·3·2/8 = 0.75 → 0
  // and 2·1·2/8 = 0.5 → 0, so 0 (1.25 in floating point); 1·1·2/8 → 0 and
  // 2·3·2/8 = 1.5 → 1; 2.
  s.set("x", {{1, 1, 2, 1}, {1, 2}});
  EXPECT_EQ(run(net, "u", s), (std::vector<Word>{1, 0, 1, 2}));
  // z[i][j] = 32·i + 16·j is linear, so is its interpolation: out(ox, oy) =
  // 32·(0, 0.25, 0.75, 1)[ox] + 16·(0, 0.25, 0.75, 1)[oy], every term exact
  // (x a multiple of 16, weights in sixteenths).
  s.set("z", {{1, 1, 2, 2}, {0, 16, 32, 48}});
  EXPECT_EQ(run(net, "v", s), (std::vector<Word>{0, 4, 12, 16, 8, 12, 20, 24, 24, 28, 36, 40, 32, 36, 44, 48}));
}

TEST(Reference, Rope) {
  // x [C=4, X=3]: rows c0 16 32 48, c1 160 320 480, c2 -16 64 80, c3 8 8 8.
  // The angle index a = ((t + pos) >> j) mod 8 (multiples of 45°); cos·16 and
  // sin·16 at a = 0..7: 16 11 0 -11 -16 -11 0 11 and 0 11 16 11 0 -11 -16 -11.
  // First half out = (x·cos − partner·sin)/16, second (x·cos + partner·sin)/16,
  // each quotient truncated toward zero.
  auto c = compileNet(R"(network t {
    input x [C=4, X=3];
    r = rope(x); p = rope(x, heads=2, pos=5);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 4, 3, 1}, {16, 32, 48, 160, 320, 480, -16, 64, 80, 8, 8, 8}});
  // r: d = 4, pairs (c0, c2) at j = 0 (a = t: 0 1 2) and (c1, c3) at j = 1
  // (a = t >> 1: 0 0 1). c0: 16; (32·11 − 64·11)/16 = −22; (0 − 80·16)/16 = −80.
  // c1: 160; 320; (480·11 − 8·11)/16 = 324.5 → 324. c2: −16; (64·11 + 32·11)/16
  // = 66; 48·16/16 = 48. c3: 8; 8; (8·11 + 480·11)/16 = 335.5 → 335.
  EXPECT_EQ(run(net, "r", s), (std::vector<Word>{16, -22, -80, 160, 320, 324, -16, 66, 48, 8, 8, 335}));
  // p: d = 2, pairs (c0, c1) and (c2, c3), j = 0, a = t + 5: 5 6 7
  // (cos −11 0 11, sin −11 −16 −11). c0: (−176 + 1760)/16 = 99; 5120/16 = 320;
  // (528 + 5280)/16 = 363. c1: −1936/16 = −121; −512/16 = −32; (5280 − 528)/16
  // = 297. c2: (176 + 88)/16 = 16.5 → 16; 128/16 = 8; (880 + 88)/16 = 60.5 → 60.
  // c3: (−88 + 176)/16 = 5.5 → 5; −1024/16 = −64; (88 − 880)/16 = −49.5 → −49.
  EXPECT_EQ(run(net, "p", s), (std::vector<Word>{99, 320, 363, -121, -32, 297, 16, 8, 60, 5, -64, -49}));
}

TEST(Reference, DepthToSpaceModesDiffer) {
  // Two output channels, block 2 on one position: DCR reads channel
  // (i·2 + j)·2 + c, CRD c·4 + i·2 + j (ONNX's definitions).
  auto c = compileNet(R"(network t {
    input z [C=8, X=1, Y=1];
    dcr = depth_to_space(z, block=2); crd = depth_to_space(z, block=2, mode=CRD);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("z", {{1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7}});
  // out[c][x = j][y = i], in [C][X][Y] order: (j, i) = (0,0) (0,1) (1,0) (1,1).
  // DCR: c = 0 reads 0, 4, 2, 6; c = 1 reads 1, 5, 3, 7.
  EXPECT_EQ(run(net, "dcr", s), (std::vector<Word>{0, 4, 2, 6, 1, 5, 3, 7}));
  // CRD: c = 0 reads 0, 2, 1, 3; c = 1 reads 4, 6, 5, 7.
  EXPECT_EQ(run(net, "crd", s), (std::vector<Word>{0, 2, 1, 3, 4, 6, 5, 7}));
}

TEST(Reference, BroadcastAddMul) {
  auto c = compileNet(R"(network t {
    batch N = 2;
    input x [C=2, X=2]; input s [C=2];
    m = mul(x, s); a = add(s, x);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore st;
  // Per sample: channel 0 is x0 x1, channel 1 x2 x3; s one word per channel.
  st.set("x", {{2, 2, 2, 1}, {1, 2, 3, 4, /**/ 5, 6, 7, 65536}});
  st.set("s", {{2, 2, 1, 1}, {10, -1, /**/ 2, 65536}});
  // mul: 1·10, 2·10, 3·−1, 4·−1; 5·2, 6·2, 7·65536 = 458752, 65536·65536 = 2^32 ≡ 0.
  EXPECT_EQ(run(net, "m", st), (std::vector<Word>{10, 20, -3, -4, /**/ 10, 12, 458752, 0}));
  // add (the broadcast operand first): 11, 12, 2, 3; 7, 8, 65543, 131072.
  EXPECT_EQ(run(net, "a", st), (std::vector<Word>{11, 12, 2, 3, /**/ 7, 8, 65543, 131072}));
}

TEST(Reference, ActivationIntegerForms) {
  // Fixed point with 4 fraction bits: 16 is 1.0.
  EXPECT_EQ(activate("identity", kMin), kMin);
  EXPECT_EQ(activate("relu", -5), 0);
  EXPECT_EQ(activate("relu", 7), 7);
  EXPECT_EQ(activate("relu6", 100), 96);   // 6.0
  EXPECT_EQ(activate("relu6", 50), 50);
  EXPECT_EQ(activate("relu6", -1), 0);
  // hardswish t·relu6(t + 3)/6 at t = x/16: x·(x + 48)/96 between -48 and 48.
  EXPECT_EQ(activate("hardswish", 16), 10);     // t = 1: 1·4/6 = 0.67; 16·64/96 = 10.67 -> 10
  EXPECT_EQ(activate("hardswish", -24), -6);    // t = -1.5: -1.5·1.5/6 = -0.375 = -6/16
  EXPECT_EQ(activate("hardswish", -16), -5);    // t = -1: -1/3; -16·32/96 = -5.33 -> -5
  EXPECT_EQ(activate("hardswish", 48), 48);     // t = 3: 3·6/6 = 3
  EXPECT_EQ(activate("hardswish", -48), 0);
  EXPECT_EQ(activate("hardswish", 2147483647), 2147483647);   // no product formed
  EXPECT_EQ(activate("sigmoid", 0), 8);     // 0.5
  EXPECT_EQ(activate("sigmoid", -6), 7);    // trunc(-6/4) = -1, + 8
  EXPECT_EQ(activate("sigmoid", 40), 16);   // 10 + 8 clamped to 16
  EXPECT_EQ(activate("sigmoid", -40), 0);
  EXPECT_EQ(activate("tanh", 20), 16);
  EXPECT_EQ(activate("tanh", -20), -16);
  EXPECT_EQ(activate("tanh", 5), 5);
  EXPECT_EQ(activate("batchnorm", -7), -2);   // trunc(-7/2) + 1
  EXPECT_EQ(activate("batchnorm", 10), 6);
  EXPECT_EQ(activate("batchnorm", kMin), -(1 << 30) + 1);
  for (const std::string &a : activationNames())   // every one has a form
    EXPECT_NO_THROW(activate(a, 3)) << a;
  EXPECT_THROW(activate("swish", 3), InternalError);
  EXPECT_THROW(activate("gelu", 3), InternalError);   // a layer now, not an activation
}

TEST(Reference, UnaryFunctionIntegerForms) {
  // docs/simulator.md, "The unary functions"; 16 is 1.0. v is read by both,
  // so the sigmoid is a layer, not fused into a producer.
  auto c = compileNet(R"(network t {
    input v [C=12, X=1];
    s = sigmoid(v);
    h = silu(v);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  ASSERT_EQ(net.layers.size(), 2u);
  TensorStore st;
  st.set("v", {{1, 12, 1, 1}, {0, -6, 20, 40, -40, 8, -8, 16, -16, 31, -31, 2147483647}});
  // sigmoid: clamp(x/4 + 8, 0, 16), x/4 truncated: 0 -> 8 (0.5); -6 -> -1 + 8 = 7;
  // 20 -> 5 + 8 = 13; 40 -> 18, clamped to 16; -40 -> -2, clamped to 0;
  // 8 -> 10; -8 -> 6; 16 -> 12; -16 -> 4; 31 -> 7 + 8 = 15; -31 -> 1; 2^31 - 1 -> 16.
  EXPECT_EQ(run(net, "s", st), (std::vector<Word>{8, 7, 13, 16, 0, 10, 6, 12, 4, 15, 1, 16}));
  // silu: x·sigmoid(x)/16 in (-32, 32), x from 32 up, 0 from -32 down:
  // 0; -6·7/16 = -42/16 -> -2; 20·13/16 = 260/16 -> 16; 40 (>= 32); 0 (<= -32);
  // 8·10/16 = 5; -8·6/16 = -3; 16·12/16 = 12 (0.75; SiLU(1) = 0.731);
  // -16·4/16 = -4 (-0.25; SiLU(-1) = -0.269); 31·15/16 = 465/16 -> 29;
  // -31·1/16 -> -1 (truncated toward 0); 2^31 - 1 itself (no product formed).
  EXPECT_EQ(run(net, "h", st), (std::vector<Word>{0, -2, 16, 40, 0, 5, -3, 12, -4, 29, -1, 2147483647}));
  // The sigmoid layer is the fused sigmoid.
  for (Word x = -100; x <= 100; ++x)
    EXPECT_EQ(unary(UnaryFn::Sigmoid, x), activate("sigmoid", x)) << x;
  EXPECT_EQ(unary(UnaryFn::Silu, -2147483647 - 1), 0);
}

TEST(Reference, GeluSoftmaxLayerNormIntegerForms) {
  // docs/simulator.md, "softmax, layernorm and gelu"; 16 is 1.0.
  auto c = compileNet(R"(network t {
    input x [C=2, X=2]; input y [C=4, X=1]; input z [C=1, X=3]; input w [C=2]; input v [C=4, X=1]; input u [C=10, X=1];
    g = gelu(u);
    sc = softmax(x);
    sg = softmax(y, groups=2);
    sx = softmax(z, axis=X);
    ln = layernorm(y);
    lw = layernorm(w);
    lg = layernorm(v, groups=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // gelu: x·(7x/16 + 8)/16 in (-19, 19), x from 19 up, 0 from -19 down:
  // 8·(56/16 -> 3, + 8 = 11)/16 = 88/16 -> 5; -8·(-56/16 -> -3, + 8 = 5)/16 =
  // -40/16 -> -2; 40; 0; 16·(7 + 8)/16 = 15 (silu's 12: GELU is steeper);
  // -16·(-7 + 8)/16 = -1; 18·(126/16 -> 7, + 8)/16 = 270/16 -> 16; 19 itself;
  // -18·(-7 + 8)/16 = -18/16 -> -1; -19 -> 0.
  s.set("u", {{1, 10, 1, 1}, {8, -8, 40, -40, 16, -16, 18, 19, -18, -19}});
  EXPECT_EQ(run(net, "g", s), (std::vector<Word>{5, -2, 40, 0, 15, -1, 16, 19, -1, 0}));
  // softmax along C, x[c][x] = [[16, 0], [0, 0]]: the row at x = 0 is (16, 0):
  // d = 0, 16; t = 0, 23·16/16 = 23; q = 0, 1; f = 0, 7; e = 65536,
  // 32768·(32 - 7)/32 = 25600; Σ = 91136; out = 16·65536/91136 = 11 (11.5),
  // 16·25600/91136 = 4 (4.49) — exactly 0.731, 0.269 = 11.7, 4.3 in 16ths.
  // At x = 1, (0, 0): e = 65536 twice, out = 16·65536/131072 = 8 each.
  s.set("x", {{1, 2, 2, 1}, {16, 0, /**/ 0, 0}});
  EXPECT_EQ(run(net, "sc", s), (std::vector<Word>{11, 8, /**/ 4, 8}));
  // Two groups of two channels: (16, 0) as above; (0, -1000): d = 1000,
  // t = 1437, q = 89 > 16, e = 0: out 16, 0.
  s.set("y", {{1, 4, 1, 1}, {16, 0, 0, -1000}});
  EXPECT_EQ(run(net, "sg", s), (std::vector<Word>{11, 4, 16, 0}));
  // Along X, the row (16, 0, 0): e = 65536, 25600, 25600, Σ = 116736;
  // 16·65536/116736 = 8 (8.98), 16·25600/116736 = 3 (3.51).
  s.set("z", {{1, 1, 3, 1}, {16, 0, 0}});
  EXPECT_EQ(run(net, "sx", s), (std::vector<Word>{8, 3, 3}));
  // layernorm over C of (1.0, 0, 3.0, 2.0) = (16, 0, 48, 32): μ = 96/4 = 24;
  // deviations -8, -24, 24, 8; σ² = (64 + 576 + 576 + 64)/4 = 320; σ = 17
  // (17² = 289 <= 320 < 324); out = 16·(-8)/17 = -7, -384/17 = -22, 22, 7
  // (exactly ∓0.447, ∓1.342: ∓7.2, ∓21.5).
  s.set("y", {{1, 4, 1, 1}, {16, 0, 48, 32}});
  EXPECT_EQ(run(net, "ln", s), (std::vector<Word>{-7, -22, 22, 7}));
  // Saturated to 16 bits: (100000, 0) is (32767, 0); μ = 16383; deviations
  // 16384, -16383; σ² = (268435456 + 268402689)/2 = 268419072; σ = 16383
  // (16383² = 268402689 <= σ² < 16384²); out = 16·16384/16383 = 16, -16.
  s.set("w", {{1, 2, 1, 1}, {100000, 0}});
  EXPECT_EQ(run(net, "lw", s), (std::vector<Word>{16, -16}));
  // Groups of two channels: (8, -8): μ = 0, σ² = 64, σ = 8, out 16, -16;
  // (40, 40): σ² = 0, σ = max(0, 1) = 1, out 0, 0.
  s.set("v", {{1, 4, 1, 1}, {8, -8, 40, 40}});
  EXPECT_EQ(run(net, "lg", s), (std::vector<Word>{16, -16, 0, 0}));
}

TEST(Reference, RmsNormIntegerForm) {
  // docs/simulator.md: layernorm's form with the mean 0, σ = max(1, ⌊√(Σv²/L)⌋),
  // out = 16·v/σ; 16 is 1.0.
  auto c = compileNet(R"(network t {
    input y [C=4, X=1]; input t [C=3]; input w [C=2]; input v [C=4, X=1];
    ry = rmsnorm(y);
    rt = rmsnorm(t);
    rw = rmsnorm(w);
    rg = rmsnorm(v, groups=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // (1.0, 0, 3.0, 2.0) = (16, 0, 48, 32): Σv² = 256 + 0 + 2304 + 1024 = 3584,
  // /4 = 896; σ = 29 (841 <= 896 < 900); out = 256/29 = 8, 0, 768/29 = 26,
  // 512/29 = 17 (float: rms √3.5 = 1.871, out 0.535, 0, 1.604, 1.069 =
  // 8.6, 0, 25.7, 17.1 in 16ths; σ rounded down makes them larger). layernorm
  // of the same row is -7, -22, 22, 7: the mean is not subtracted.
  s.set("y", {{1, 4, 1, 1}, {16, 0, 48, 32}});
  EXPECT_EQ(run(net, "ry", s), (std::vector<Word>{8, 0, 26, 17}));
  // (-24, 0, 24): Σv² = 1152, /3 = 384, σ = 19 (361 <= 384 < 400);
  // 16·(-24)/19 = -384/19 = -20 (-20.2, toward zero), 0, 20.
  s.set("t", {{1, 3, 1, 1}, {-24, 0, 24}});
  EXPECT_EQ(run(net, "rt", s), (std::vector<Word>{-20, 0, 20}));
  // Saturated to 16 bits: (100000, 0) is (32767, 0); Σv² = 1073676289,
  // /2 = 536838144; σ = 23169 (23169² = 536802561 <= it < 23170² =
  // 536848900); out = 16·32767/23169 = 524272/23169 = 22 (22.6), 0.
  s.set("w", {{1, 2, 1, 1}, {100000, 0}});
  EXPECT_EQ(run(net, "rw", s), (std::vector<Word>{22, 0}));
  // Groups of two channels: (8, -8): Σv²/2 = 64, σ = 8, out 16, -16;
  // (40, 40): 1600, σ = 40, out 16, 16 (layernorm: 0, 0).
  s.set("v", {{1, 4, 1, 1}, {8, -8, 40, 40}});
  EXPECT_EQ(run(net, "rg", s), (std::vector<Word>{16, -16, 16, 16}));
  // A row of zeros: σ = max(0, 1) = 1, out 0.
  s.set("t", {{1, 3, 1, 1}, {0, 0, 0}});
  EXPECT_EQ(run(net, "rt", s), (std::vector<Word>{0, 0, 0}));
}

TEST(Reference, GroupNormRowsSpanThePlane) {
  // groupnorm: layernorm's form over a group's C/G channels at every position
  // (docs/simulator.md), which layernorm(x, groups=G) is not.
  auto c = compileNet(R"(network t {
    input x [C=4, X=2];
    gn = groupnorm(x, groups=2);
    ln = layernorm(x, groups=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // [c][x]: c0 = (16, 0), c1 = (48, 32), c2 = (8, -8), c3 = (8, -8). Group 0
  // is the row (16, 0, 48, 32): μ = 24, σ² = 320, σ = 17, out -7, -22, 22, 7
  // (ReferenceTest's layernorm row); group 1 (8, -8, 8, -8): μ = 0, σ² = 64,
  // σ = 8, out 16, -16, 16, -16.
  s.set("x", {{1, 4, 2, 1}, {16, 0, 48, 32, 8, -8, 8, -8}});
  EXPECT_EQ(run(net, "gn", s), (std::vector<Word>{-7, -22, 22, 7, 16, -16, 16, -16}));
  // layernorm per position: (16, 48) at x = 0: μ = 32, σ² = 256, σ = 16,
  // out -16, 16; (0, 32) likewise; (8, 8): σ = 1, out 0; (-8, -8) 0.
  EXPECT_EQ(run(net, "ln", s), (std::vector<Word>{-16, -16, 16, 16, 0, 0, 0, 0}));
  const Layer &gn = net.layers[static_cast<size_t>(net.findLayer("gn"))];
  EXPECT_EQ(gn.rowLength(), 4);
  EXPECT_STREQ(gn.kindName(), "groupnorm");
}

TEST(Reference, FusedActivationsApplyInOrder) {
  auto c = compileNet("network t { input x [C=1]; f = fc(x, K=2); b = batchnorm(f); r = relu(b); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 1, 1, 1}, {1}});
  s.set("f__wgt", {{2, 1, 1, 1}, {-5, 40}});
  // Pre-activation -5, 40; batchnorm: trunc(-5/2) + 1 = -1, 21; relu: 0, 21.
  // (relu first would give batchnorm(0) = 1 for the first.)
  EXPECT_EQ(run(net, "f", s), (std::vector<Word>{0, 21}));
}

// ---- training -----------------------------------------------------------------

TEST(Reference, ConvDataAndWeightGradients) {
  auto c = compileNet(R"(network t {
    input x [C=1, X=3, Y=3];
    a = conv(x, K=1, R=1);
    c = conv(a, K=1, R=2, stride=2, pad=1);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  const int dgrad = net.findLayer("c__dgrad"), wgrad = net.findLayer("c__wgrad");
  ASSERT_GE(dgrad, 0);
  ASSERT_GE(wgrad, 0);
  EXPECT_EQ(outputNames(net, dgrad), (std::vector<std::string>{"a__grad"}));
  EXPECT_EQ(outputNames(net, wgrad), (std::vector<std::string>{"c__wgt__grad"}));
  TensorStore s;
  s.set("a", {{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}});
  s.set("c__wgt", {{1, 1, 2, 2}, {1, 2, 3, 4}});
  s.set("c__grad", {{1, 1, 2, 2}, {1, 2, 3, 4}});   // dY
  // Forward (ConvStridePad): a[2xo + r - 1][2yo + s - 1] meets w[r][s] at
  // out[xo][yo]. Each input row i has one (xo, r): i=0 (0,1), i=1 (1,0), i=2
  // (1,1) (and (0,0) reaches the padding row -1, dropped); columns likewise.
  // dA[i][j] = dY[xo(i)][yo(j)]·w[r(i)][s(j)]:
  //   row 0: dY[0][0]·w[1][1] = 4, dY[0][1]·w[1][0] = 6, dY[0][1]·w[1][1] = 8
  //   row 1: dY[1][0]·w[0][1] = 6, dY[1][1]·w[0][0] = 4, dY[1][1]·w[0][1] = 8
  //   row 2: dY[1][0]·w[1][1] = 12, dY[1][1]·w[1][0] = 12, dY[1][1]·w[1][1] = 16
  EXPECT_EQ(referenceLayer(net, dgrad, s), (std::vector<Word>{4, 6, 8, 6, 4, 8, 12, 12, 16}));
  // dW[r][s] = Σ a[2xo + r - 1][2yo + s - 1]·dY[xo][yo], padding 0:
  //   (0,0): rows and columns -1, 1: a[1][1]·dY[1][1] = 5·4 = 20
  //   (0,1): rows -1, 1, columns 0, 2: a[1][0]·3 + a[1][2]·4 = 12 + 24 = 36
  //   (1,0): rows 0, 2, columns -1, 1: a[0][1]·2 + a[2][1]·4 = 4 + 32 = 36
  //   (1,1): rows 0, 2, columns 0, 2: 1·1 + 3·2 + 7·3 + 9·4 = 64
  EXPECT_EQ(referenceLayer(net, wgrad, s), (std::vector<Word>{20, 36, 36, 64}));
  const TensorStore out = referenceOutputs(net, wgrad, s);
  EXPECT_EQ(out.at("c__wgt__grad").extent, (std::vector<int64_t>{1, 1, 2, 2}));
}

TEST(Reference, PoolAndMulDataGradients) {
  auto c = compileNet(R"(network t {
    input x [C=1, X=5];
    a = conv(x, K=1, R=1);
    b = conv(x, K=1, R=1);
    p = maxpool(a, R=2, S=1, stride=3);
    q = avgpool(a, R=2, S=1, stride=3);
    m = mul(a, b);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  // Xo = floor((5 - 2) / 3) + 1 = 2: windows [0, 1] and [3, 4]; 2 in none.
  s.set("p__grad", {{1, 1, 2, 1}, {5, -2}});
  s.set("q__grad", {{1, 1, 2, 1}, {5, -3}});
  // maxpool's: each input gets the largest dY of the windows holding it, one
  // in no window the maximum of nothing, −∞.
  EXPECT_EQ(run(net, "p__dgrad", s), (std::vector<Word>{5, 5, kMin, -2, -2}));
  // avgpool's: Σ trunc(dY / (R·S)) over the windows: 5/2 → 2, -3/2 → -1.
  EXPECT_EQ(run(net, "q__dgrad", s), (std::vector<Word>{2, 2, 0, -1, -1}));
  // mul's: dY to every operand (the product of what the layer reads: dY).
  const int dm = net.findLayer("m__dgrad");
  s.set("m__grad", {{1, 1, 5, 1}, {1, 2, 3, 4, 5}});
  const TensorStore out = referenceOutputs(net, dm, s);
  EXPECT_EQ(out.tensors().size(), 2u);
  EXPECT_EQ(out.at("a__grad").data, (std::vector<Word>{1, 2, 3, 4, 5}));
  EXPECT_EQ(out.at("b__grad").data, (std::vector<Word>{1, 2, 3, 4, 5}));
  EXPECT_THROW(referenceLayer(net, dm, s), InternalError);   // two tensors
}

TEST(Reference, ResampleGradients) {
  // dX of a copy: each output word's dY back to the input word it copied.
  // upsample 2 along X sums the two phases of each input column; depth_to_space
  // permutes dY back (its forward, run backwards).
  auto c = compileNet(R"(network t {
    input v [C=1, X=2, Y=1]; input w [C=4, X=1, Y=1];
    a = conv(v, K=1, R=1); u = upsample(a, scale=2 x 1);
    b = conv(w, K=4, R=1); d = depth_to_space(b, block=2);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  EXPECT_EQ(outputNames(net, net.findLayer("u__dgrad")), (std::vector<std::string>{"a__grad"}));
  EXPECT_EQ(outputNames(net, net.findLayer("d__dgrad")), (std::vector<std::string>{"b__grad"}));
  TensorStore st;
  // u's output columns 0 1 copy a's column 0, columns 2 3 its column 1:
  // dA = 1 + 2, 10 + 20.
  st.set("u__grad", {{1, 1, 4, 1}, {1, 2, 10, 20}});
  EXPECT_EQ(run(net, "u__dgrad", st), (std::vector<Word>{3, 30}));
  // d (DCR, one output channel) out(x = j, y = i) = b[2i + j]: [X=2][Y=2] is
  // b's 0 2 1 3; dB gives each channel its word back: 5 7 6 8 -> 5 6 7 8.
  st.set("d__grad", {{1, 1, 2, 2}, {5, 7, 6, 8}});
  EXPECT_EQ(run(net, "d__dgrad", st), (std::vector<Word>{5, 6, 7, 8}));
}

TEST(Reference, BroadcastGradients) {
  // x [C=2, X=2] and s [C=1 a channel]: m = mul(x, s), a = add(s, x), each
  // out[n][c][x] = x[n][c][x] (op) s[n][c]. x and s are layers, so their
  // gradients are derived: m__dgrad (dX = dY·s), m__wgrad and a__wgrad
  // (ds, read as the wgt); a routes dX, no layer.
  auto c = compileNet(R"(network t {
    batch N = 2;
    input u [C=2, X=2]; input v [C=2];
    x = conv(u, K=2, R=1); s = fc(v, K=2);
    m = mul(x, s); a = add(s, x);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  EXPECT_LT(net.findLayer("a__dgrad"), 0);
  EXPECT_EQ(outputNames(net, net.findLayer("m__dgrad")), (std::vector<std::string>{"x__grad"}));
  EXPECT_EQ(outputNames(net, net.findLayer("m__wgrad")), (std::vector<std::string>{"s__grad"}));
  EXPECT_EQ(outputNames(net, net.findLayer("a__wgrad")), (std::vector<std::string>{"s__grad"}));
  TensorStore st;
  st.set("x", {{2, 2, 2, 1}, {1, 2, 3, 4, /**/ 5, 6, 7, 65536}});   // [n][c][x]
  st.set("s", {{2, 2, 1, 1}, {10, -1, /**/ 2, 65536}});             // [n][c]
  st.set("m__grad", {{2, 2, 2, 1}, {1, 2, 3, 4, /**/ -1, 1, 2, 65536}});
  st.set("a__grad", {{2, 2, 2, 1}, {1, 2, 3, 4, /**/ 5, 6, 2147483647, 2}});
  // dX[n][c][x] = dY[n][c][x]·s[n][c]: 1·10, 2·10, 3·−1, 4·−1; −1·2, 1·2,
  // 2·65536 = 131072, 65536·65536 = 2^32 ≡ 0.
  EXPECT_EQ(run(net, "m__dgrad", st), (std::vector<Word>{10, 20, -3, -4, /**/ -2, 2, 131072, 0}));
  // mul: ds[n][c] = Σ_x dY·x: 1·1 + 2·2 = 5, 3·3 + 4·4 = 25; −1·5 + 1·6 = 1,
  // 2·7 + 65536·65536 = 14 + 2^32 ≡ 14.
  EXPECT_EQ(run(net, "m__wgrad", st), (std::vector<Word>{5, 25, /**/ 1, 14}));
  // add: ds[n][c] = Σ_x dY (dY routed to s, which every x reads): 3, 7; 11,
  // (2^31 − 1) + 2 ≡ −2^31 + 1.
  EXPECT_EQ(run(net, "a__wgrad", st), (std::vector<Word>{3, 7, /**/ 11, -2147483647}));
  EXPECT_EQ(referenceOutputs(net, net.findLayer("a__wgrad"), st).at("s__grad").extent,
            (std::vector<int64_t>{2, 2, 1, 1}));
}

TEST(Reference, MatMulGradients) {
  auto c = compileNet(R"(network t {
    input p [C=2]; input b [C=2, X=1, Y=2];
    a = add(p, p);
    m = matmul(a, b);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  EXPECT_EQ(outputNames(net, net.findLayer("m__dgrad")), (std::vector<std::string>{"a__grad"}));
  EXPECT_EQ(outputNames(net, net.findLayer("m__wgrad")), (std::vector<std::string>{"b__grad"}));
  TensorStore s;
  s.set("a", {{1, 2, 1, 1}, {1, 2}});
  s.set("b", {{1, 2, 1, 2}, {3, 4, /**/ 5, 6}});   // b[c][j]
  s.set("m__grad", {{1, 2, 1, 1}, {7, 8}});          // dY[j]
  // out[j] = Σ_c a[c]·b[c][j]. dA[c] = Σ_j dY[j]·b[c][j] = 7·3 + 8·4, 7·5 + 8·6.
  EXPECT_EQ(run(net, "m__dgrad", s), (std::vector<Word>{53, 83}));
  // dB[c][j] = a[c]·dY[j] = 7, 8, 14, 16.
  EXPECT_EQ(run(net, "m__wgrad", s), (std::vector<Word>{7, 8, 14, 16}));
}

TEST(Reference, DataGradientSumsAnOperandReadTwice) {
  auto c = compileNet(R"(network t {
    input x [C=1];
    a = conv(x, K=1, R=1);
    f = fc(a, a, K=1);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("f__wgt", {{1, 2, 1, 1}, {3, 5}});
  s.set("f__grad", {{1, 1, 1, 1}, {2}});
  // f reads [a, a]: dA = dY·w[0] + dY·w[1] = 6 + 10.
  EXPECT_EQ(run(net, "f__dgrad", s), (std::vector<Word>{16}));
}

// ---- properties -----------------------------------------------------------------

TEST(ReferenceProperty, GroupedConvWithGroupsCIsDepthwise) {
  // Stride, padding and dilation in both dims, batch 2: Xo = floor((6 + 2 -
  // 2·2 - 1) / 2) + 1 = 2, Yo = floor((5 + 2 - 2 - 1) / 2) + 1 = 3.
  auto c = compileNet(R"(network t {
    batch N = 2;
    input x [C=3, X=6, Y=5];
    d = dwconv(x, R=3, S=2, stride=2, pad=1, dilation=2);
    g = conv(x, K=3, R=3, S=2, stride=2, pad=1, dilation=2, groups=3);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s = seedNetwork(net, 42);
  // The same weights: [C][R][S] and [K][C/groups = 1][R][S] hold them alike.
  s.set("g__wgt", {s.at("g__wgt").extent, s.at("d__wgt").data});
  const std::vector<Word> d = run(net, "d", s);
  EXPECT_EQ(d.size(), 2u * 3 * 2 * 3);
  EXPECT_EQ(run(net, "g", s), d);
  // And not trivially: other weights give another result.
  s.set("g__wgt", {s.at("g__wgt").extent, seedTensor("other", 18, 42)});
  EXPECT_NE(run(net, "g", s), d);
}

TEST(ReferenceProperty, FullyConnectedIsConvOverTheWholeInput) {
  auto c = compileNet(R"(network t {
    batch N = 3;
    input x [C=3, X=4, Y=2];
    f = fc(x, K=5);
    c = conv(x, K=5, R=4, S=2);
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s = seedNetwork(net, 9);
  ASSERT_EQ(s.at("f__wgt").extent, s.at("c__wgt").extent);   // [5][3][4][2]
  s.set("c__wgt", s.at("f__wgt"));
  EXPECT_EQ(run(net, "c", s), run(net, "f", s));
}

TEST(ReferenceProperty, GradientsAreAdjointsOfTheForwardLayer) {
  // Over Z/2^32 a linear layer y = L(x, w) satisfies <dX, x> = <dY, y> for
  // dX = Lᵀ_w dY, and <dW, w> = <dY, y> for dW = Lᵀ_x dY: the gradients are
  // the forward relation read backward, padding included.
  auto c = compileNet(R"(network t {
    batch N = 2;
    input x [C=4, X=7, Y=6];
    a = conv(x, K=4, R=1);
    c = conv(a, K=4, R=3, S=2, stride=2, pad=1, dilation=2, groups=2);
    d = dwconv(a, R=3, stride=2, pad=2);
    f = fc(a, a, K=3);
    m = matmul(a, c, heads=2);
    n = matmul(m, c, heads=2, transpose_b=true);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s = seedNetwork(net, 5);
  runReference(net, s);
  for (const char *name : {"c", "d", "f", "m", "n"}) {
    const Layer &l = net.layers[static_cast<size_t>(net.findLayer(name))];
    SCOPED_TRACE(name);
    // Forward outputs without activations, against fresh seeded gradients.
    TensorStore t = s;
    const std::vector<Word> y = run(net, name, t);
    const std::string dyName = gradientName(name);
    const std::vector<Word> dy = seedTensor("dy", static_cast<int64_t>(y.size()), 1);
    t.set(dyName, {t.at(name).extent, dy});
    const Word expected = dot(dy, y);
    const std::vector<Word> x = referenceLayer(net, net.findLayer(std::string(name) + "__dgrad"), t);
    // The layer's ifm (the matmul's first operand; f's is [a, a]: both halves
    // are a, so <dA, a> sums over them).
    const std::string xName = operandName(net, l.operands[0]);
    EXPECT_EQ(dot(x, t.at(xName).data), expected);
    const std::vector<Word> dw = referenceLayer(net, net.findLayer(std::string(name) + "__wgrad"), t);
    const std::string wName = l.type == LayerType::MatMul ? operandName(net, l.operands[1]) : weightName(l);
    EXPECT_EQ(dot(dw, t.at(wName).data), expected);
  }
}

TEST(ReferenceProperty, ConvTransposeIsTheConvsDataGradient) {
  // PyTorch's definition, computed on its own, equals the data gradient of
  // the conv from y's shape to x's with the same weights, dY = x: grouped,
  // strided, padded, and with output_padding (an output column no tap reaches).
  auto c = compileNet(R"(network t {
    batch N = 2;
    input x [C=6, X=5, Y=3];
    u = conv_transpose(x, K=4, R=4, S=3, stride=2, pad=1, output_padding=1, groups=2);
  })");
  auto t = compileNet(R"(network t {
    batch N = 2;
    input z [C=4, X=11, Y=6];
    a = conv(z, K=4, R=1);
    c = conv(a, K=6, R=4, S=3, stride=2, pad=1, groups=2);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  ASSERT_EQ(t.diagnostics(), "");
  const Network &net = c.model.networks[0], &conv = t.model.networks[0];
  const Layer &u = net.layers[static_cast<size_t>(net.findLayer("u"))];
  ASSERT_EQ(u.ofmShape, (TensorShape{4, 11, 6}));   // (5 − 1)·2 − 2 + 4 + 1, (3 − 1)·2 − 2 + 3 + 1
  TensorStore s = seedNetwork(net, 9), g = seedNetwork(conv, 9);
  g.set("c__wgt", s.at("u__wgt"));
  g.set("c__grad", s.at("x"));
  const TensorStore dgrad = referenceOutputs(conv, conv.findLayer("c__dgrad"), g);
  EXPECT_EQ(run(net, "u", s), dgrad.at("a__grad").data);
}

TEST(ReferenceProperty, ConvTransposeGradientsAreAdjoints) {
  // As GradientsAreAdjointsOfTheForwardLayer: over Z/2^32, <dX, x> = <dY, y>
  // = <dW, w> for a conv_transpose's gradients, grouped, strided, padded and
  // with output_padding (taps dropped in the padding are dropped both ways).
  auto c = compileNet(R"(network t {
    batch N = 2;
    input v [C=6, X=5, Y=3];
    x = conv(v, K=6, R=1);
    u = conv_transpose(x, K=4, R=4, S=3, stride=2 x 1, pad=1 x 2, output_padding=1 x 0, groups=2);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  const int dgrad = net.findLayer("u__dgrad"), wgrad = net.findLayer("u__wgrad");
  ASSERT_GE(dgrad, 0);
  ASSERT_GE(wgrad, 0);
  EXPECT_EQ(outputNames(net, dgrad), (std::vector<std::string>{"x__grad"}));
  EXPECT_EQ(outputNames(net, wgrad), (std::vector<std::string>{"u__wgt__grad"}));
  TensorStore s = seedNetwork(net, 7);
  runReference(net, s);
  const std::vector<Word> y = run(net, "u", s);
  const std::vector<Word> dy = seedTensor("dy", static_cast<int64_t>(y.size()), 1);
  s.set("u__grad", {s.at("u").extent, dy});
  const Word expected = dot(dy, y);
  EXPECT_EQ(dot(referenceLayer(net, dgrad, s), s.at("x").data), expected);
  EXPECT_EQ(dot(referenceLayer(net, wgrad, s), s.at("u__wgt").data), expected);
}

/// Every layer kind with stride, padding, dilation, groups, heads, ceil mode,
/// several operands and fused activations, a scatter (conv_transpose, whose
/// output role is ifm), on planes that are not square (a
/// 7 x 5, d 3 x 2, p and q 2 x 1), trained.
const char *const kMixed = R"(network t {
    batch N = 2;
    input x [C=4, X=7, Y=5];
    input y [C=2, X=7, Y=5];
    a = conv(x, y, K=4, R=3, pad=1, groups=2);
    r = relu(a);
    d = dwconv(r, R=3, stride=2, pad=1, dilation=2);
    p = maxpool(d, R=2, ceil=true);
    q = avgpool(d, R=2, stride=1);
    m = mul(q, q);
    s = add(m, q);
    k = concat(s, q);
    f = fc(k, K=8);
    g = gelu(f);
    h = silu(g);
    hs = sigmoid(g);   // g read by h too: a sigmoid layer
    mm = matmul(r, d, heads=2);
    sm = softmax(mm, groups=2);
    mt = matmul(sm, d, heads=2, transpose_b=true);
    u = sigmoid(mt);
    ln = layernorm(u);
    ct = conv_transpose(ln, K=2, R=3, stride=2, pad=1);
  })";

/// Calls f(net, i, store) for every layer i of kMixed, trained, with every
/// tensor of a reference run from `seed` in the store.
template <class F> void forEachMixedLayer(uint64_t seed, F f) {
  auto c = compileNet(kMixed, true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s = seedNetwork(net, seed);
  runReference(net, s);
  for (size_t i = 0; i < net.layers.size(); ++i) {
    SCOPED_TRACE(net.layers[i].name);
    f(net, i, s);
  }
}

TEST(ReferenceProperty, OutputsAreTheTensorsTheNestWrites) {
  // Every layer kind, forward and backward: the reference writes exactly the
  // tensors the layer's loop nest writes, with the nest's extents, and reads
  // weights under the nest's names and extents.
  forEachMixedLayer(3, [](const Network &net, size_t i, const TensorStore &s) {
    const Layer &l = net.layers[i];
    std::set<std::string> written;
    for (const Access &a : l.nest.accesses) {
      if (a.role == l.output)
        written.insert(a.tensor);
      if (s.contains(a.tensor))
        EXPECT_EQ(s.at(a.tensor).extent, a.extent) << a.tensor;
      else
        ADD_FAILURE() << "no tensor " << a.tensor;
      if (a.role == TensorRole::Wgt && l.type != LayerType::MatMul) {
        EXPECT_EQ(a.tensor, l.output == TensorRole::Wgt ? gradientName(weightName(l)) : weightName(l));
        EXPECT_EQ(a.extent, weightExtent(l));
      }
    }
    const std::vector<std::string> names = outputNames(net, static_cast<int>(i));
    EXPECT_EQ(written, std::set<std::string>(names.begin(), names.end()));
  });
}

TEST(ReferenceProperty, LayerReadsAreWhatTheReferenceReads) {
  // Every layer kind, forward and backward: layerReads names the tensors the
  // reference reads, with their extents, and no other: on those alone it
  // computes the same outputs, and without any one of them it cannot run.
  forEachMixedLayer(5, [](const Network &net, size_t i, const TensorStore &s) {
    const auto reads = layerReads(net, static_cast<int>(i));
    TensorStore only;
    for (const auto &[name, extent] : reads) {
      ASSERT_TRUE(s.contains(name)) << name;
      EXPECT_EQ(s.at(name).extent, extent) << name;
      only.set(name, s.at(name));
    }
    const TensorStore want = referenceOutputs(net, static_cast<int>(i), s);
    const TensorStore got = referenceOutputs(net, static_cast<int>(i), only);
    ASSERT_EQ(got.tensors().size(), want.tensors().size());
    for (const auto &[name, t] : want.tensors())
      EXPECT_EQ(got.at(name).data, t.data) << name;
    for (const auto &[left, extent] : reads) {
      TensorStore less;
      for (const auto &[name, e] : reads)
        if (name != left)
          less.set(name, s.at(name));
      EXPECT_THROW(referenceOutputs(net, static_cast<int>(i), less), InternalError) << left << " is not read";
    }
    // The kernel reads what the nest reads: the same tensors.
    const Layer &l = net.layers[i];
    for (const Access &a : l.nest.accesses) {
      const bool listed = std::any_of(reads.begin(), reads.end(), [&](const auto &r) { return r.first == a.tensor; });
      EXPECT_TRUE(a.role == l.output || listed) << a.tensor << " is read by the nest, not by layerReads";
    }
  });
}

namespace {

/// A layer's loop nest run point by point with the statement semantics
/// docs/simulator.md gives it: written apart from the reference (it knows no
/// layer kind, only the nest's accesses), as a check that the two agree.
TensorStore interpretNest(const Layer &l, const TensorStore &store) {
  const LoopNest &nest = l.nest;
  const bool max = nest.statement == Statement::Max;
  std::map<std::string, Tensor> outs;
  for (const Access &a : nest.accesses)
    if (a.role == nest.output)
      outs.try_emplace(a.tensor, Tensor{a.extent, std::vector<Word>(static_cast<size_t>(elementCount(a.extent)),
                                                                    max ? kMin : 0)});
  std::vector<int64_t> point(nest.dims.size(), 0);
  // The row-major offset of the access at `point`; -1 outside the tensor, -2
  // where a guard fails (no access).
  auto offset = [&](const Access &a) -> int64_t {
    for (const AffineExpr &g : a.guard)
      if (g.evaluate(point) < 0)
        return -2;
    int64_t off = 0;
    for (size_t d = 0; d < a.index.size(); ++d) {
      const int64_t v = a.index[d].evaluate(point);
      if (v < 0 || v >= a.extent[d])
        return -1;
      off = off * a.extent[d] + v;
    }
    return off;
  };
  const int64_t window = at(l.bounds, Dim::R) * at(l.bounds, Dim::S);
  for (;;) {
    std::vector<Word> reads;
    Word dy = 0;   // a backward layer's read of dY
    for (const Access &a : nest.accesses)
      if (a.role != nest.output) {
        const int64_t off = offset(a);
        if (off != -2)
          reads.push_back(off < 0 ? (max ? kMin : 0) : store.at(a.tensor).data[static_cast<size_t>(off)]);
        if (a.role == TensorRole::Ofm && off >= 0)
          dy = reads.back();
      }
    uint32_t v = nest.statement == Statement::Add ? 0 : 1;
    for (Word r : reads)
      v = nest.statement == Statement::Add ? v + static_cast<uint32_t>(r) : v * static_cast<uint32_t>(r);
    // A broadcast operand's gradient sums over X and Y; an add's is dY alone (routed).
    const bool reduces = nest.output == TensorRole::Wgt &&
                         (nest.statement == Statement::Add || nest.statement == Statement::Mul);
    if (reduces && nest.statement == Statement::Add)
      v = static_cast<uint32_t>(dy);
    if (nest.statement == Statement::Average)
      v = static_cast<uint32_t>(reads.at(0) / window);
    if (nest.statement == Statement::Unary && nest.output == TensorRole::Ofm) {
      const Word x = reads.at(0);
      if (nest.unary == UnaryFn::Sigmoid)   // 16·clamp(t/4 + 1/2, 0, 1) at t = x/16
        v = static_cast<uint32_t>(std::min(std::max(x / 4 + 8, 0), 16));
      else if (nest.unary == UnaryFn::Silu)   // x·(x/4 + 8)/16 in (-32, 32)
        v = static_cast<uint32_t>(x >= 32 ? x : x <= -32 ? 0 : x * (x / 4 + 8) / 16);
      else   // gelu: x·(7x/16 + 8)/16 in (-19, 19)
        v = static_cast<uint32_t>(x >= 19 ? x : x <= -19 ? 0 : x * (7 * x / 16 + 8) / 16);
    }
    if (nest.statement == Statement::Rope) {   // (x·cos ∓ partner·sin)/16 at a = ((t + pos) >> j) mod 8
      static const int32_t cos16[8] = {16, 11, 0, -11, -16, -11, 0, 11}, sin16[8] = {0, 11, 16, 11, 0, -11, -16, -11};
      const int64_t j = point[static_cast<size_t>(nest.findDim("j"))];
      const int64_t a = ((point[static_cast<size_t>(nest.findDim("xo"))] + l.ropePos) >> std::min<int64_t>(j, 62)) & 7;
      const int32_t sin = point[static_cast<size_t>(nest.findDim("half"))] ? sin16[a] : -sin16[a];
      v = static_cast<uint32_t>(static_cast<Word>(static_cast<uint32_t>(reads.at(0)) * static_cast<uint32_t>(cos16[a]) +
                                                  static_cast<uint32_t>(reads.at(1)) * static_cast<uint32_t>(sin)) / 16);
    }
    if (nest.statement == Statement::Bilinear) {
      // x·wx·wy / (4·sx·sy), the weights from the tap's phase (model/LoopNest.h);
      // a tap whose partner lies past the input's edge weighs 2s.
      auto weight = [&](const char *p, const char *u, const char *q, int64_t sc, int64_t extent) {
        const int64_t pv = point[static_cast<size_t>(nest.findDim(p))], uv = point[static_cast<size_t>(nest.findDim(u))];
        const int64_t partner = point[static_cast<size_t>(nest.findDim(q))] - 1 + 2 * bilinearBase(pv, sc) + 1 - uv;
        return static_cast<uint32_t>(partner < 0 || partner >= extent ? 2 * sc : bilinearWeight(pv, sc, uv));
      };
      const uint32_t term = static_cast<uint32_t>(reads.at(0)) * weight("px", "u", "qx", l.resample.x, l.ifmShape.X) *
                            weight("py", "v", "qy", l.resample.y, l.ifmShape.Y);
      v = static_cast<uint32_t>(
          static_cast<Word>(static_cast<int64_t>(static_cast<Word>(term)) / (4 * l.resample.x * l.resample.y)));
    }
    // Outside the domain's guard (a bilinear tap of another phase) nothing is written.
    for (const Access &a : nest.accesses) {
      const int64_t off = a.role == nest.output && nest.inDomain(point) ? offset(a) : -1;
      if (off < 0)
        continue;
      Word &out = outs.at(a.tensor).data[static_cast<size_t>(off)];
      if (max)
        out = std::max(out, reads.at(0));
      else if (nest.statement == Statement::Mac || nest.statement == Statement::Average ||
               nest.statement == Statement::Bilinear || reduces)
        out = static_cast<Word>(static_cast<uint32_t>(out) + v);
      else   // add, mul, copy: one point per output element
        out = static_cast<Word>(v);
    }
    size_t d = 0;   // the next point, the last dimension fastest
    for (; d < point.size(); ++d) {
      const size_t i = point.size() - 1 - d;
      if (++point[i] < nest.dims[i].extent)
        break;
      point[i] = 0;
    }
    if (d == point.size())
      break;
  }
  TensorStore result;
  for (auto &[name, t] : outs) {
    for (const std::string &act : l.activations)
      for (Word &w : t.data)
        w = activate(act, w);
    result.set(name, std::move(t));
  }
  return result;
}

/// Each named layer of `text`'s network: the reference's output equals what
/// its loop nest computes point by point (extent and words), on seeded inputs.
void expectReferenceIsItsNest(const std::string &text, uint64_t seed, std::initializer_list<const char *> names) {
  auto c = compileNet(text);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s = seedNetwork(net, seed);
  runReference(net, s);
  for (const char *name : names) {
    SCOPED_TRACE(name);
    const int i = net.findLayer(name);
    ASSERT_GE(i, 0);
    const TensorStore ref = referenceOutputs(net, i, s), nest = interpretNest(net.layers[static_cast<size_t>(i)], s);
    EXPECT_EQ(ref.at(name).extent, nest.at(name).extent);
    EXPECT_EQ(ref.at(name).data, nest.at(name).data);
  }
}

} // namespace

TEST(ReferenceProperty, AgreesWithTheLoopNestOnEveryLayer) {
  forEachMixedLayer(11, [](const Network &net, size_t i, const TensorStore &s) {
    // A softmax's or layernorm's rows are normalized after its nest's pass,
    // which the nest does not say: GeluSoftmaxLayerNormIntegerForms checks them.
    if (net.layers[i].normalizes() && net.layers[i].output == TensorRole::Ofm)
      return;
    const TensorStore ref = referenceOutputs(net, static_cast<int>(i), s);
    const TensorStore nest = interpretNest(net.layers[i], s);
    ASSERT_EQ(ref.tensors().size(), nest.tensors().size());
    for (const auto &[name, t] : ref.tensors()) {
      EXPECT_EQ(t.extent, nest.at(name).extent) << name;
      EXPECT_EQ(t.data, nest.at(name).data) << name;
    }
  });
}

TEST(ReferenceProperty, BroadcastAgreesWithItsLoopNest) {
  // The broadcast operand read through its access s[n, c, 0, 0] at every
  // point: forward and backward, the nest's products and sums equal the
  // reference's, and the reference writes the tensors the nest writes.
  auto c = compileNet(R"(network t {
    batch N = 2;
    input u [C=3, X=4, Y=2]; input v [C=3];
    x = conv(u, K=3, R=1); s = fc(v, K=3);
    m = mul(x, s); a = add(s, m);
  })", true);
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s = seedNetwork(net, 5);
  runReference(net, s);
  for (const char *name : {"m", "a", "m__dgrad", "m__wgrad", "a__wgrad"}) {
    SCOPED_TRACE(name);
    const int i = net.findLayer(name);
    ASSERT_GE(i, 0);
    const Layer &l = net.layers[static_cast<size_t>(i)];
    const TensorStore ref = referenceOutputs(net, i, s), nest = interpretNest(l, s);
    const std::vector<std::string> names = outputNames(net, i);
    ASSERT_EQ(ref.tensors().size(), 1u);
    ASSERT_EQ(nest.tensors().size(), 1u);
    EXPECT_EQ(names, std::vector<std::string>{ref.tensors().begin()->first});
    EXPECT_EQ(ref.at(names[0]).extent, nest.at(names[0]).extent);
    EXPECT_EQ(ref.at(names[0]).data, nest.at(names[0]).data);
  }
}

TEST(ReferenceProperty, RopeAgreesWithItsLoopNest) {
  // Its two ifm accesses (the word and its partner) through the nest's point.
  expectReferenceIsItsNest(R"(network t {
    batch N = 2;
    input x [C=12, X=70, Y=2];
    a = rope(x, heads=3, pos=9); b = rope(x, heads=1);
  })", 7, {"a", "b"});
}

TEST(ReferenceProperty, BilinearAgreesWithItsLoopNest) {
  // The guarded 3 x 3 window with the weights' rule, point by point, against
  // the reference's PyTorch rule (clamped source, merged taps): edges, odd
  // and even scales, a scale of 1 and a one-word axis.
  expectReferenceIsItsNest(R"(network t {
    batch N = 2;
    input x [C=3, X=4, Y=3]; input z [C=2, X=1, Y=5];
    u = upsample(x, scale=2, mode=bilinear);
    v = upsample(x, scale=3 x 1, mode=bilinear);
    w = upsample(z, scale=4 x 5, mode=bilinear);
  })", 13, {"u", "v", "w"});
}

TEST(ReferenceProperty, ResampleAgreesWithItsLoopNest) {
  expectReferenceIsItsNest(R"(network t {
    batch N = 2;
    input x [C=3, X=3, Y=2];
    u = upsample(x, scale=2 x 3);
    a = conv(u, K=8, R=1);
    dcr = depth_to_space(a, block=2); crd = depth_to_space(a, block=2, mode=CRD);
  })", 3, {"u", "dcr", "crd"});
}

TEST(Reference, MissingOrMisshapenInputIsAnInternalError) {
  auto c = compileNet("network t { input x [C=1, X=3]; c = conv(x, K=1, R=2, S=1); }");
  ASSERT_EQ(c.diagnostics(), "");
  const Network &net = c.model.networks[0];
  TensorStore s;
  s.set("x", {{1, 1, 3, 1}, {1, 2, 3}});
  EXPECT_THROW(run(net, "c", s), InternalError);   // no c__wgt
  s.set("c__wgt", {{1, 1, 1, 2}, {1, 2}});         // [R=1][S=2]: not [2][1]
  EXPECT_THROW(run(net, "c", s), InternalError);
  EXPECT_THROW(s.set("c__wgt", {{1, 1, 2, 1}, {1}}), InternalError);   // 1 word for 2
}
