// A network: a DAG of layers in topological order, each with its loop bounds,
// tensor shapes and MAC count, and the source range it came from.
#pragma once

#include "model/Dims.h"
#include "model/LoopNest.h"
#include "support/SourceManager.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dfl {

// ---- network ----------------------------------------------------------------

enum class LayerType { Conv, DwConv, FC, MatMul, MaxPool, AvgPool, Add, Mul, Concat, Softmax, LayerNorm, Unary,
                       Upsample, DepthToSpace /* resolution changes: copies through split dims */,
                       Rope /* rotary position embeddings: element-wise, two reads of one tensor */,
                       ConvTranspose /* a conv's data-gradient nest run forward: its output is the nest's ifm */ };
const char *layerTypeName(LayerType t);   // "unary" for Unary: Layer::kindName names the function
/// The element-wise operators fused into their producer (docs/language.md).
const std::vector<std::string> &activationNames();

/// An activation's shape per batch sample: channels x width x height.
struct TensorShape {
  int64_t C = 1, X = 1, Y = 1;
  int64_t size() const { return C * X * Y; }
  friend bool operator==(const TensorShape &, const TensorShape &) = default;
};

/// What a layer operand refers to: a network input or an earlier layer.
struct TensorRef {
  bool isInput = false;
  int index = 0;
};

struct Input {
  std::string name;
  TensorShape shape;
  SourceRange range, nameRange;
};

/// rope's operations per element (docs/directives.md §7): the angle θ = (t +
/// pos)·base^(−2j/d), its cosine and sine generated on the fly (not stored),
/// two products and their sum.
constexpr int64_t kRopeOpsPerElement = 6;

struct Layer {
  std::string name;
  LayerType type = LayerType::Conv;
  std::vector<TensorRef> operands;
  std::vector<std::string> operandNames;   // as written (after alias resolution)
  /// The layer's loop nest: its iteration domain and the access function of
  /// every operand, the weights and the result (model/LoopNest.h).
  LoopNest nest;
  /// The nest in KAPLA's nine dims (kaplaView(nest).bounds; N is the batch).
  DimVector bounds{};
  int64_t groups = 1;                      // conv/matmul groups (matmul: heads)
  /// matmul: the second operand's heads (`kv_heads`, grouped-query attention):
  /// query head i reads head i / (groups / kvHeads) of it; groups without it.
  int64_t kvHeads = 1;
  /// Stride, dilation and padding per axis (x: width, y: height); the
  /// identity for layers without a window.
  Window window;
  bool ceilMode = false;
  bool transposeB = false;
  /// matmul, softmax: the causal mask (docs/language.md): query position x
  /// sees key positions j <= x + causalOffset(), a guard on the nest's domain.
  bool causal = false;
  UnaryFn unary = UnaryFn::Gelu;           // LayerType::Unary: the function
  /// add, mul: the operand of shape [C,1,1] broadcast over the other's X and
  /// Y, read as the layer's per-sample wgt (docs/language.md), or -1.
  int broadcast = -1;
  std::vector<std::string> activations;    // fused activations, in order
  /// softmax, layernorm: the axis they normalize along (C, Xo for the width,
  /// Yo for the height) and, along C, the groups of C/groups channels each
  /// normalized on its own (a softmax over attention heads' scores).
  Dim normAxis = Dim::C;
  int64_t normGroups = 1;
  /// layernorm: RMSNorm's form (`rmsnorm`), the row divided by its root mean
  /// square, no mean subtracted. A variant of layernorm, not a kind of its
  /// own: the same rows, statistics pass and relation; only the row's
  /// arithmetic and its operations per element differ (docs/design.md).
  bool rms = false;
  /// layernorm: PyTorch's GroupNorm (`groupnorm`): a row is a group's C/groups
  /// channels at every position, C/groups·X·Y words, contiguous in [C][X][Y].
  bool normPlane = false;
  /// concat: the axis its operands are joined along (C, Xo for the width, Yo
  /// for the height); the other layers read several operands joined along C.
  Dim concatAxis = Dim::C;
  /// upsample (nearest), depth_to_space: the factor per axis (x: width, y:
  /// height; depth_to_space's block is square) and depth_to_space's channel
  /// order, DCR (ONNX's default) or CRD (PyTorch's pixel_shuffle);
  /// upsample's mode, nearest or bilinear (PyTorch's align_corners=False).
  struct Resample {
    int64_t x = 1, y = 1;
    bool dcr = false;
    bool bilinear = false;
    friend bool operator==(const Resample &, const Resample &) = default;
  } resample;
  /// rope: the position of the first token (`pos`, a decode step's); the
  /// heads are `groups` (docs/language.md).
  int64_t ropePos = 0;
  /// The tensor the layer produces (and accumulates partial sums of): ofm for
  /// the forward pass; for training's backward layers ifm (data gradient) or
  /// wgt (weight gradient) — the same loop nest with another output. A
  /// conv_transpose writes ifm too: its nest is a conv's data gradient, its
  /// ifmShape the tensor it reads (the nest's ofm), its ofmShape the one it
  /// writes (the nest's ifm; docs/design.md, "ConvTranspose").
  TensorRole output = TensorRole::Ofm;
  std::string forwardOf;                   // backward layers: the forward layer
  TensorShape ifmShape;   // the (concatenated) input, per sample
  TensorShape ofmShape;   // per sample
  int64_t wgtSize = 0;    // words; 0 if the layer has no weights
  /// The words per sample of the tensor the layer writes (its `output`).
  int64_t outputWords() const;
  int64_t macs = 0;       // per sample
  int64_t ops = 0;        // per sample, non-MAC operations (pool, eltwise)
  SourceRange range, nameRange, opRange;

  bool hasWeights() const { return wgtSize > 0; }
  /// The operands read as the ifm: all but a matmul's second operands (a KV
  /// cache's several) and an add's or mul's broadcast operand (read as the wgt).
  std::vector<TensorRef> ifmOperands() const;
  /// Operand `i` is read as the wgt (a matmul's second ones, a broadcast one).
  bool operandIsWgt(size_t i) const;
  /// add, mul: the ifm operands every point reads (the nest's ifm accesses,
  /// which a backward layer keeps though it names no operands); else 1.
  int64_t pointOperands() const;
  /// Roles this layer has tensors for.
  std::vector<TensorRole> roles() const;
  /// Loop dims of this layer's iteration space (all nine; trivial ones are 1).
  std::vector<Dim> loopDims() const;
  /// One channel dimension (K is C): depthwise conv, pools and element-wise ops.
  bool channelWise() const;
  /// softmax and layernorm (rmsnorm too): each output element depends on its whole row.
  bool normalizes() const { return type == LayerType::Softmax || type == LayerType::LayerNorm; }
  /// Whether a vector unit can run the layer (docs/directives.md §7, "Vector
  /// units"), and if not why: its work is operations, not MACs, on the
  /// elements (add, mul, the pools, the normalizations, the unary functions,
  /// rope), computing the forward pass's output. Empty: it can.
  std::string vectorRefusal() const;
  /// The words of one row a softmax or layernorm normalizes (0 for other layers).
  int64_t rowLength() const;
  /// The dims a row spans, each with the row's extent along it (docs/directives.md §7).
  std::vector<std::pair<Dim, int64_t>> rowDims() const;
  /// causal: the keys past the queries, Lb − X (0 at prefill without a
  /// cache), so the last query sees every key.
  int64_t causalOffset() const;
  /// The layer's kind as DFL writes it: the unary function's name, `rmsnorm`, `groupnorm`, else layerTypeName.
  const char *kindName() const;
  /// The operations per element of the element-wise layers with their own
  /// arithmetic (softmax, layernorm, the unary functions; docs/directives.md §7), else 0.
  int64_t opsPerElement() const;
};

struct Network {
  std::string name;
  int64_t batch = 1;
  std::vector<Input> inputs;
  std::vector<Layer> layers;   // topological order
  /// Every name an operand may use: inputs, layers and fused-activation aliases.
  std::map<std::string, TensorRef> names;
  SourceRange range, nameRange, batchRange;

  /// The index of the layer called `name` (not an alias), or -1. Looks in
  /// `names`, which sema and addBackwardLayers keep complete; a network built
  /// without names (by hand) is searched linearly.
  int findLayer(const std::string &name) const;
  int64_t totalMacs() const;   // whole batch; INT64_MAX if it does not fit
  /// Whether layer p's output is read by a layer for which `inSegment` is
  /// false: a consumer, or (training) a consumer's backward layer, which reads
  /// its input again. Such a tensor must still go to DRAM from a segment.
  bool readOutside(int p, const std::function<bool(int)> &inSegment) const;
  /// Whether a layer in p+1..last reads layer p's output: the tensor is an
  /// intermediate of a segment of consecutive layers ending at `last`.
  bool readUpTo(int p, int last) const;
  /// Whether a layer of `layers` reads layer p's output.
  bool readBy(int p, const std::vector<int> &layers) const;
};

} // namespace dfl
