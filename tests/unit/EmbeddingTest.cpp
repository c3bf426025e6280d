// Intrinsic embedding (scheduler/embedding/IntrinsicEmbedding.h): small operators whose
// embeddings are derived by hand in the comments, and every candidate re-run
// as its transformed nest against a direct evaluation written here.
#include "TestUtil.h"

#include "scheduler/embedding/EmbeddingTransform.h"
#include "scheduler/embedding/IntrinsicEmbedding.h"

#include <gtest/gtest.h>

namespace dfl {
namespace {

using test::compile;

const char *const kGemms = R"(
intrinsic vta (i=1, j=16, k=16) { c[i, j] += a[i, k] * b[j, k]; }
intrinsic g8 (i=8, j=8, k=8) { c[i, j] += a[i, k] * b[j, k]; }
intrinsic t49 (i=1, j=4, k=9) { c[i, j] += a[i, k] * b[j, k]; }
intrinsic t2 (i=2, j=16, k=16) { c[i, j] += a[i, k] * b[j, k]; }
)";

struct Case {
  test::Compiled c;
  const LoopNest &layer(const std::string &name) const {
    const Network &n = c.model.networks.at(0);
    return n.layers.at(static_cast<size_t>(n.findLayer(name))).nest;
  }
  const LoopNest &intrinsic(const std::string &name) const {
    for (const Intrinsic &i : c.model.intrinsics)
      if (i.name == name)
        return i.nest;
    throw std::runtime_error("no intrinsic " + name);
  }
};

Case load(const std::string &network) {
  Case k{compile(network + kGemms)};
  EXPECT_FALSE(k.c.diags->hasErrors()) << k.c.diagnostics();
  return k;
}

int64_t flat(const Access &a, const std::vector<int64_t> &x) {
  int64_t f = 0;
  for (size_t t = 0; t < a.index.size(); ++t) {
    int64_t i = a.index[t].evaluate(x);
    if (i < 0 || i >= a.extent[t])
      return -1;
    f = f * a.extent[t] + i;
  }
  return f;
}

int64_t size(const Access &a) {
  int64_t n = 1;
  for (int64_t e : a.extent)
    n *= e;
  return n;
}

/// The operator computed directly: every point of its domain, in order.
std::vector<int64_t> direct(const LoopNest &op, const std::vector<int64_t> &ifm, const std::vector<int64_t> &wgt) {
  const Access &o = *op.accessesOf(TensorRole::Ofm)[0], &i = *op.accessesOf(TensorRole::Ifm)[0],
               &w = *op.accessesOf(TensorRole::Wgt)[0];
  std::vector<int64_t> out(static_cast<size_t>(size(o)), 0);
  std::vector<int64_t> x(op.dims.size(), 0);
  for (int64_t n = 0; n < op.points(); ++n) {
    int64_t rest = n;
    for (size_t d = op.dims.size(); d-- > 0;) {
      x[d] = rest % op.dims[d].extent;
      rest /= op.dims[d].extent;
    }
    int64_t fo = flat(o, x), fi = flat(i, x), fw = flat(w, x);
    if (fo >= 0 && fi >= 0 && fw >= 0)
      out[static_cast<size_t>(fo)] += ifm[static_cast<size_t>(fi)] * wgt[static_cast<size_t>(fw)];
  }
  return out;
}

/// Every candidate's transformed nest computes the operator's result.
void expectSameResult(const LoopNest &op, const LoopNest &in, const EmbeddingResult &r) {
  std::vector<int64_t> ifm(static_cast<size_t>(size(*op.accessesOf(TensorRole::Ifm)[0]))),
      wgt(static_cast<size_t>(size(*op.accessesOf(TensorRole::Wgt)[0])));
  for (size_t i = 0; i < ifm.size(); ++i)
    ifm[i] = static_cast<int64_t>((i * 7 + 3) % 11) - 5;
  for (size_t i = 0; i < wgt.size(); ++i)
    wgt[i] = static_cast<int64_t>((i * 5 + 1) % 13) - 6;
  const std::vector<int64_t> want = direct(op, ifm, wgt);
  for (const Embedding &e : r.candidates)
    EXPECT_EQ(runEmbedded(op, in, e, ifm, wgt), want) << transformFor(op, in, e).loopNest;
}

bool anyLayoutHas(const EmbeddingTransform &t, const std::string &word) {
  for (const std::string &l : t.layouts)
    if (l.find(word) != std::string::npos)
      return true;
  return false;
}

TEST(Embedding, PointwiseConvIsAGemmWithoutLayoutChange) {
  // conv dims: xo 4, yo 4, r 1, s 1, n 1, k 32, c 32. Labels: i indexes c and
  // a (out, lhs) like n, xo, yo; j (out, rhs) like k; k (lhs, rhs) like c.
  // Strict, lhs on ifm: i = 1 takes nothing, j <- k (16 | 32), k <- c: one
  // solution. lhs on wgt: j must index ofm and ifm: xo*yo (4*4, the only
  // product of their divisors that is 16), k <- c: one more. No padding, no
  // stencil: MACs and tensor sizes are the operator's.
  Case k = load("network n { input x [C=32, X=4, Y=4]; a = conv(x, K=32, R=1, S=1); }");
  const LoopNest &op = k.layer("a"), &in = k.intrinsic("vta");
  EmbeddingResult r = embedIntrinsic(op, in);
  ASSERT_EQ(r.status, EmbeddingResult::Status::Found) << r.reason;
  EXPECT_EQ(r.stats.solutions, 2u);
  const Embedding &best = r.candidates.at(0);
  EXPECT_EQ(best.model, EmbeddingModel::Strict);
  EXPECT_FALSE(best.operandsSwapped);
  EXPECT_EQ(best.macs, 4 * 4 * 32 * 32);
  EXPECT_EQ(best.macs, best.macsMin);
  EXPECT_EQ(best.data, best.dataMin);
  EXPECT_EQ(best.side[1][static_cast<size_t>(op.findDim("k"))], 16);
  EXPECT_EQ(best.side[2][static_cast<size_t>(op.findDim("c"))], 16);
  EmbeddingTransform t = transformFor(op, in, best);
  EXPECT_FALSE(anyLayoutHas(t, "im2col"));
  EXPECT_EQ(t.dimMapping, (std::vector<std::string>{"i <- - (1)", "j <- k (16)", "k <- c (16)"}));
  // One call covers 16 output and 16 input channels of one pixel.
  EXPECT_EQ(at(t.unit, Dim::K), 16);
  EXPECT_EQ(at(t.unit, Dim::C), 16);
  EXPECT_EQ(at(t.unit, Dim::Xo), 1);
  expectSameResult(op, in, r);
}

TEST(Embedding, ThreeByThreeConvNeedsIm2col) {
  // t49's k (9 points over lhs and rhs) can only come from c (1), r (3) and
  // s (3); r and s share the ifm's x and y indices with xo and yo, so the
  // strict model (linear access) has none. Relaxed, lhs on ifm: k <- r*s
  // (3*3), j <- k (4): one; lhs on wgt: j <- xo (4), yo (4) or xo*yo (2*2):
  // three. All compute 4*4*9*4 = 576 MACs, none padded; the ifm (1x1x6x6 =
  // 36) unrolls x = xo + r and y = yo + s into 4*3 each: 144, so data is
  // 64 (ofm) + 144 + 36 (wgt) = 244 against 136.
  Case k = load("network n { input x [C=1, X=6, Y=6]; a = conv(x, K=4, R=3, S=3); }");
  const LoopNest &op = k.layer("a"), &in = k.intrinsic("t49");
  EmbeddingOptions strict;
  strict.lastModel = EmbeddingModel::Strict;
  EmbeddingResult none = embedIntrinsic(op, in, strict);
  EXPECT_EQ(none.status, EmbeddingResult::Status::Infeasible);
  EXPECT_NE(none.reason.find("linear access and dense exclude r (3), s (3)"), std::string::npos) << none.reason;
  EmbeddingResult r = embedIntrinsic(op, in);
  ASSERT_EQ(r.status, EmbeddingResult::Status::Found) << r.reason;
  EXPECT_EQ(r.stats.solutions, 4u);
  for (const Embedding &e : r.candidates) {
    EXPECT_EQ(e.model, EmbeddingModel::Relaxed);
    EXPECT_EQ(e.macs, 576);
    EXPECT_EQ(e.macsMin, 576);
    EXPECT_EQ(e.data, 244);
    EXPECT_EQ(e.dataMin, 136);
    EXPECT_TRUE(anyLayoutHas(transformFor(op, in, e), "im2col"));
  }
  expectSameResult(op, in, r);
}

TEST(Embedding, ThreeChannelsNeedPadding) {
  // k (16) over c (3), r (1), s (1): no product of divisors of both is 16,
  // with or without stencils, so only the padded model embeds it; every
  // call then does 16 reduction steps of which 3 are real: utilization
  // 3/16 (MACs 4*4*16*16 = 4096 for 768).
  Case k = load("network n { input x [C=3, X=4, Y=4]; a = conv(x, K=16, R=1, S=1); }");
  const LoopNest &op = k.layer("a"), &in = k.intrinsic("vta");
  EmbeddingOptions relaxed;
  relaxed.lastModel = EmbeddingModel::Relaxed;
  EmbeddingResult none = embedIntrinsic(op, in, relaxed);
  EXPECT_EQ(none.status, EmbeddingResult::Status::Infeasible);
  EXPECT_NE(none.reason.find("multiply to intrinsic dim k (16) without padding"), std::string::npos) << none.reason;
  EmbeddingResult r = embedIntrinsic(op, in);
  ASSERT_EQ(r.status, EmbeddingResult::Status::Found) << r.reason;
  const Embedding &best = r.candidates.at(0);
  EXPECT_EQ(best.model, EmbeddingModel::Padded);
  EXPECT_EQ(best.macsMin, 768);
  EXPECT_EQ(best.macs, 4096);
  EXPECT_DOUBLE_EQ(best.utilization(), 3.0 / 16.0);
  expectSameResult(op, in, r);
}

TEST(Embedding, BatchOfOneOnAnEightRowGemm) {
  // A 3x3 conv, batch 1, C = K = 8, 8x8 outputs (10x10 input). g8's i
  // (out, lhs) wants n (1), xo or yo; xo and yo are stencil dims, so the
  // strict model fails and the relaxed one packs 8 output pixels into i:
  // full utilization (8*8*9*8*8 = 36864 MACs), at the im2col's data cost.
  Case k = load("network n { input x [C=8, X=10, Y=10]; a = conv(x, K=8, R=3, S=3); }");
  const LoopNest &op = k.layer("a"), &in = k.intrinsic("g8");
  EmbeddingResult r = embedIntrinsic(op, in);
  ASSERT_EQ(r.status, EmbeddingResult::Status::Found) << r.reason;
  const Embedding &best = r.candidates.at(0);
  EXPECT_EQ(best.model, EmbeddingModel::Relaxed);
  EXPECT_EQ(best.macs, 36864);
  EXPECT_EQ(best.macsMin, 36864);
  expectSameResult(op, in, r);
}

TEST(Embedding, FullyConnectedBatchOneOnlyPadded) {
  // fc: n (1), k (64), c (64), r = s = 1. g8's i indexes out and lhs: only
  // n does (extent 1), so only padding n to 8 embeds it: utilization 1/8.
  Case k = load("network n { input x [C=64, X=1, Y=1]; f = fc(x, K=64); }");
  const LoopNest &op = k.layer("f"), &in = k.intrinsic("g8");
  EmbeddingResult r = embedIntrinsic(op, in);
  ASSERT_EQ(r.status, EmbeddingResult::Status::Found) << r.reason;
  EXPECT_EQ(r.candidates.at(0).model, EmbeddingModel::Padded);
  EXPECT_DOUBLE_EQ(r.candidates.at(0).utilization(), 1.0 / 8.0);
  expectSameResult(op, in, r);
}

TEST(Embedding, DepthwiseConvCannotTakeATwoRowGemm) {
  // A depthwise conv's channel c indexes ofm, ifm and wgt; n, xo, yo index
  // ofm and ifm; r, s ifm and wgt. t2's j indexes out and rhs: lhs on ifm,
  // no dim indexes ofm and wgt only; lhs on wgt, i (2) needs the same.
  Case k = load("network n { input x [C=8, X=6, Y=6]; d = dwconv(x, R=3, S=3); }");
  EmbeddingResult r = embedIntrinsic(k.layer("d"), k.intrinsic("t2"));
  EXPECT_EQ(r.status, EmbeddingResult::Status::Infeasible);
  EXPECT_NE(r.reason.find("lhs on ifm: dataflow edge: intrinsic dim j (16) indexes out and rhs"), std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("lhs on wgt: dataflow edge: intrinsic dim i (2)"), std::string::npos) << r.reason;
}

TEST(Embedding, PoolingIsNotAMultiplyAccumulate) {
  Case k = load("network n { input x [C=8, X=4, Y=4]; p = maxpool(x, R=2, stride=2); }");
  EmbeddingResult r = embedIntrinsic(k.layer("p"), k.intrinsic("vta"));
  EXPECT_EQ(r.status, EmbeddingResult::Status::Unsupported);
  EXPECT_NE(r.reason.find("computes max"), std::string::npos) << r.reason;
}

TEST(Embedding, BadSizesAreReasonsNotCrashes) {
  // 64*64*64 = 262144 intrinsic operations: beyond the model's 65536.
  auto big = compile("intrinsic big (i=64, j=64, k=64) { c[i, j] += a[i, k] * b[j, k]; }");
  ASSERT_FALSE(big.diags->hasErrors()) << big.diagnostics();
  Case k = load("network n { input x [C=32, X=4, Y=4]; a = conv(x, K=32, R=1, S=1); }");
  EmbeddingResult r = embedIntrinsic(k.layer("a"), big.model.intrinsics.at(0).nest);
  EXPECT_EQ(r.status, EmbeddingResult::Status::Unsupported);
  EXPECT_NE(r.reason.find("262144 operations"), std::string::npos) << r.reason;
  // A GEMM whose input index is offset by 2^40: no Gecode int holds it.
  LoopNest op;
  op.name = "far";
  AffineExpr m = op.addDim("m", 16), n = op.addDim("n", 16), q = op.addDim("q", 16);
  const int64_t far = int64_t{1} << 40;
  op.accesses.push_back({TensorRole::Ifm, "a", {m, q + far}, {16, far + 16}, {}});
  op.accesses.push_back({TensorRole::Wgt, "b", {n, q}, {16, 16}, {}});
  op.accesses.push_back({TensorRole::Ofm, "c", {m, n}, {16, 16}, {}});
  EmbeddingResult f = embedIntrinsic(op, k.intrinsic("vta"));
  EXPECT_EQ(f.status, EmbeddingResult::Status::Unsupported);
  EXPECT_NE(f.reason.find("integer range"), std::string::npos) << f.reason;
}

TEST(Embedding, SolutionLimitIsReported) {
  // The pointwise conv has one strict embedding per operand order (above):
  // a limit of one keeps both and says the enumeration was cut.
  Case k = load("network n { input x [C=32, X=4, Y=4]; a = conv(x, K=32, R=1, S=1); }");
  EmbeddingOptions one;
  one.solutionLimit = 1;
  EmbeddingResult r = embedIntrinsic(k.layer("a"), k.intrinsic("vta"), one);
  EXPECT_TRUE(r.solutionLimitHit);
  EXPECT_EQ(r.stats.solutions, 2u);
  EXPECT_FALSE(embedIntrinsic(k.layer("a"), k.intrinsic("vta")).solutionLimitHit);
}

TEST(Embedding, PortfolioFindsOneEmbeddingPerOperandOrder) {
  // The 3x3 conv above: strict has none, relaxed one per lhs-on-ifm and three
  // per lhs-on-wgt. A portfolio of four assets (each branching over the
  // operator's dims from another one first) stops at the first of each
  // order: two embeddings, both relaxed, both computing the conv.
  Case k = load("network n { input x [C=1, X=6, Y=6]; a = conv(x, K=4, R=3, S=3); }");
  const LoopNest &op = k.layer("a"), &in = k.intrinsic("t49");
  EmbeddingOptions portfolio;
  portfolio.portfolioAssets = 4;
  EmbeddingResult r = embedIntrinsic(op, in, portfolio);
  ASSERT_EQ(r.status, EmbeddingResult::Status::Found) << r.reason;
  EXPECT_EQ(r.stats.solutions, 2u);
  EXPECT_FALSE(r.solutionLimitHit);
  for (const Embedding &e : r.candidates)
    EXPECT_EQ(e.model, EmbeddingModel::Relaxed);
  expectSameResult(op, in, r);
}

TEST(Embedding, WorkLimitsStopTheSearchAtTheSamePoint) {
  // The 3x3 conv above enumerates more than a few nodes. A node limit of 3
  // stops every model and operand order after at most 3 + 1 nodes (Gecode
  // asks the stop before each node), so the whole search counts at most
  // 3 models x 2 orders x 4 nodes = 24; the failure limit likewise. Both are
  // work, not time: two runs stop at the same node with the same candidates.
  Case k = load("network n { input x [C=1, X=6, Y=6]; a = conv(x, K=4, R=3, S=3); }");
  const LoopNest &op = k.layer("a"), &in = k.intrinsic("t49");
  EmbeddingOptions few;
  few.nodeLimit = 3;
  EmbeddingResult a = embedIntrinsic(op, in, few), b = embedIntrinsic(op, in, few);
  EXPECT_TRUE(a.hitLimit);
  EXPECT_FALSE(a.timeLimitHit);
  EXPECT_LE(a.stats.nodes, 24u);
  EXPECT_EQ(a.stats.nodes, b.stats.nodes);
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (size_t i = 0; i < a.candidates.size(); ++i)
    EXPECT_EQ(a.candidates[i].side, b.candidates[i].side);
  EmbeddingOptions noFailure;
  noFailure.failureLimit = 0;
  EmbeddingResult f = embedIntrinsic(op, in, noFailure);
  EXPECT_EQ(f.hitLimit, f.stats.failures > 0);
  // Unlimited, the same conv finds every embedding (one per lhs-on-ifm and
  // three per lhs-on-wgt, above) without a limit.
  EmbeddingResult all = embedIntrinsic(op, in);
  EXPECT_FALSE(all.hitLimit);
  EXPECT_EQ(all.stats.solutions, 4u);
}

TEST(Embedding, ModelSizeIsRefusedUpFront) {
  // A model above maxModelSize is never built: Unsupported, with its size and
  // the limit in the reason (and no blame on the integer range).
  Case k = load("network n { input x [C=32, X=4, Y=4]; a = conv(x, K=32, R=1, S=1); }");
  EmbeddingOptions tight;
  tight.maxModelSize = 100;
  EmbeddingResult r = embedIntrinsic(k.layer("a"), k.intrinsic("vta"), tight);
  EXPECT_EQ(r.status, EmbeddingResult::Status::Unsupported);
  EXPECT_GT(r.modelSize, 100);
  EXPECT_NE(r.reason.find("constraint model would have " + std::to_string(r.modelSize)), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("at most 100"), std::string::npos) << r.reason;
  EXPECT_EQ(r.stats.nodes, 0u);
  // At its own size the model is built and solved.
  tight.maxModelSize = r.modelSize;
  EXPECT_EQ(embedIntrinsic(k.layer("a"), k.intrinsic("vta"), tight).status, EmbeddingResult::Status::Found);
}

} // namespace
} // namespace dfl
