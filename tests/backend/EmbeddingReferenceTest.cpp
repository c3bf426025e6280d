// Intrinsic embedding re-checked by the simulator's reference (issue 15's
// "the transformed loop nest computes the same result"): every embedding
// candidate of small layers, run as its transformed nest (runEmbedded: tiles
// of intrinsic calls, operands packed by the layout transformations), equals
// backend/Reference.cpp's naive evaluation of the layer, which is written from
// the layer's parameters and shares nothing with its loop nest.
#include "TestUtil.h"

#include "backend/Reference.h"
#include "scheduler/embedding/EmbeddingTransform.h"
#include "scheduler/embedding/IntrinsicEmbedding.h"

#include <gtest/gtest.h>

namespace dfl {
namespace {

const char *const kGemms = R"(
intrinsic vta (i=1, j=16, k=16) { c[i, j] += a[i, k] * b[j, k]; }
intrinsic g8 (i=8, j=8, k=8) { c[i, j] += a[i, k] * b[j, k]; }
)";

/// Deterministic small words, positive and negative.
sim::Tensor filled(const std::vector<int64_t> &extent, int64_t seed) {
  sim::Tensor t;
  t.extent = extent;
  t.data.resize(static_cast<size_t>(sim::elementCount(extent)));
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = static_cast<sim::Word>((static_cast<int64_t>(i) * 7 + seed) % 11 - 5);
  return t;
}

/// Every candidate of every intrinsic that embeds layer `name` of `net`
/// computes the reference's result; returns the candidates checked.
int checkAgainstReference(const std::string &net, const std::string &name) {
  test::Compiled c = test::compile(net + kGemms);
  EXPECT_FALSE(c.diags->hasErrors()) << c.diagnostics();
  const Network &n = c.model.networks.at(0);
  const int li = n.findLayer(name);
  const Layer &layer = n.layers.at(static_cast<size_t>(li));
  const LoopNest &op = layer.nest;
  const Access &ifmA = *op.accessesOf(TensorRole::Ifm)[0], &wgtA = *op.accessesOf(TensorRole::Wgt)[0];
  // The simulator's tensors are row-major over the access extents, as the
  // transformed nest reads them.
  sim::TensorStore store;
  store.set(ifmA.tensor, filled(ifmA.extent, 3));
  store.set(wgtA.tensor, filled(wgtA.extent, 1));
  const std::vector<sim::Word> want = sim::referenceLayer(n, li, store);
  std::vector<int64_t> ifm(store.at(ifmA.tensor).data.begin(), store.at(ifmA.tensor).data.end()),
      wgt(store.at(wgtA.tensor).data.begin(), store.at(wgtA.tensor).data.end());
  int checked = 0;
  for (const Intrinsic &in : c.model.intrinsics) {
    EmbeddingResult r = embedIntrinsic(op, in.nest);
    EXPECT_EQ(r.status, EmbeddingResult::Status::Found) << name << " on " << in.name << ": " << r.reason;
    for (const Embedding &e : r.candidates) {
      std::vector<int64_t> got = runEmbedded(op, in.nest, e, ifm, wgt);
      std::vector<sim::Word> words(got.begin(), got.end());   // small values: no wrap-around
      EXPECT_EQ(words, want) << name << " on " << in.name << "\n" << transformFor(op, in.nest, e).loopNest;
      ++checked;
    }
  }
  return checked;
}

TEST(EmbeddingReference, PointwiseConv) {
  EXPECT_GT(checkAgainstReference("network n { input x [C=32, X=4, Y=4]; a = conv(x, K=32, R=1, S=1); }", "a"), 0);
}

TEST(EmbeddingReference, PaddedThreeByThreeConv) {
  // Stencil unrolling (im2col) and padding of C = 3 to the GEMM's k.
  EXPECT_GT(checkAgainstReference("network n { input x [C=3, X=6, Y=6]; a = conv(x, K=16, R=3, S=3, pad=1); }", "a"), 0);
}

TEST(EmbeddingReference, RectangularFilterWithStridePerAxis) {
  // DeepBench's kind: a 5 x 3 filter at strides 2 x 1 with asymmetric padding.
  EXPECT_GT(checkAgainstReference("network n { input x [C=8, X=11, Y=6]; "
                                  "a = conv(x, K=16, R=5, S=3, stride=2 x 1, pad=0 x 1, 1 x 1); }",
                                  "a"),
            0);
}

TEST(EmbeddingReference, FullyConnectedBatchOfEight) {
  EXPECT_GT(checkAgainstReference("network n { batch N = 8; input x [C=24, X=1, Y=1]; a = fc(x, K=16); }", "a"), 0);
}

} // namespace
} // namespace dfl
