#include "model/Network.h"

#include "support/Check.h"

#include <limits>

namespace dfl {

const std::vector<std::string> &activationNames() {
  static const std::vector<std::string> names = {"relu", "relu6", "hardswish", "sigmoid", "tanh", "batchnorm",
                                                 "identity"};
  return names;
}

const char *layerTypeName(LayerType t) {
  switch (t) {
  case LayerType::Conv: return "conv";
  case LayerType::DwConv: return "dwconv";
  case LayerType::FC: return "fc";
  case LayerType::MatMul: return "matmul";
  case LayerType::MaxPool: return "maxpool";
  case LayerType::AvgPool: return "avgpool";
  case LayerType::Add: return "add";
  case LayerType::Mul: return "mul";
  case LayerType::Concat: return "concat";
  case LayerType::Softmax: return "softmax";
  case LayerType::LayerNorm: return "layernorm";
  case LayerType::Unary: return "unary";
  case LayerType::Upsample: return "upsample";
  case LayerType::DepthToSpace: return "depth_to_space";
  case LayerType::Rope: return "rope";
  case LayerType::ConvTranspose: return "conv_transpose";
  }
  DFLC_UNREACHABLE("LayerType " + std::to_string(static_cast<int>(t)));
}

std::vector<TensorRole> Layer::roles() const {
  if (hasWeights())
    return {TensorRole::Ifm, TensorRole::Wgt, TensorRole::Ofm};
  return {TensorRole::Ifm, TensorRole::Ofm};
}

bool Layer::operandIsWgt(size_t i) const {
  return (type == LayerType::MatMul && i >= 1) || static_cast<int>(i) == broadcast;
}

std::vector<TensorRef> Layer::ifmOperands() const {
  std::vector<TensorRef> out;
  for (size_t i = 0; i < operands.size(); ++i)
    if (!operandIsWgt(i))
      out.push_back(operands[i]);
  return out;
}

int64_t Layer::outputWords() const {
  if (output == TensorRole::Wgt)
    return wgtSize;
  return output == TensorRole::Ofm || type == LayerType::ConvTranspose ? ofmShape.size() : ifmShape.size();
}

int64_t Layer::pointOperands() const {
  if (type != LayerType::Add && type != LayerType::Mul && type != LayerType::Rope)
    return 1;
  return static_cast<int64_t>(nest.accessesOf(TensorRole::Ifm).size());
}

std::vector<Dim> Layer::loopDims() const {
  std::vector<Dim> dims;
  for (size_t i = 0; i < kNumDims; ++i)
    dims.push_back(static_cast<Dim>(i));
  return dims;
}

int Network::findLayer(const std::string &n) const {
  // Through `names` (logarithmic: sema looks up every operand, so a linear
  // search made `show` quadratic in the layers); an alias maps to its
  // producer, whose name differs.
  if (!names.empty()) {
    auto it = names.find(n);
    if (it == names.end() || it->second.isInput || it->second.index < 0 ||
        static_cast<size_t>(it->second.index) >= layers.size() || layers[it->second.index].name != n)
      return -1;
    return it->second.index;
  }
  for (size_t i = 0; i < layers.size(); ++i)
    if (layers[i].name == n)
      return static_cast<int>(i);
  return -1;
}

std::string Layer::vectorRefusal() const {
  if (output != TensorRole::Ofm)
    return "it is a backward layer, which runs on the MAC array";
  switch (type) {
  case LayerType::MaxPool:
  case LayerType::AvgPool:
  case LayerType::Add:
  case LayerType::Mul:
  case LayerType::Softmax:
  case LayerType::LayerNorm:
  case LayerType::Unary:
  case LayerType::Rope: return macs == 0 ? "" : "its work is MACs";
  case LayerType::Concat:
  case LayerType::Upsample:
  case LayerType::DepthToSpace: return "it copies words and computes nothing";
  default: return "its work is MACs, which the MAC array computes";
  }
}

bool Layer::channelWise() const {
  switch (type) {
  case LayerType::DwConv:
  case LayerType::MaxPool:
  case LayerType::AvgPool:
  case LayerType::Add:
  case LayerType::Mul:
  case LayerType::Concat:
  case LayerType::Softmax:
  case LayerType::LayerNorm:
  case LayerType::Unary:
  case LayerType::Rope:
  case LayerType::DepthToSpace: return true;   // upsample: channels are batch, phases K
  default: return false;
  }
}

int64_t Layer::causalOffset() const {
  // The keys: a score's channels per head, or the context's contraction.
  const int64_t keys = type == LayerType::Softmax ? ofmShape.C / normGroups
                       : transposeB              ? ifmShape.C / groups
                                                 : ofmShape.C / groups;
  return keys - ofmShape.X;
}

int64_t Layer::rowLength() const {
  if (!normalizes())
    return 0;
  int64_t length = 1;
  for (auto [dim, extent] : rowDims())
    length *= extent;
  return length;
}

std::vector<std::pair<Dim, int64_t>> Layer::rowDims() const {
  if (!normalizes())
    return {};
  if (normPlane)
    return {{Dim::C, ofmShape.C / normGroups}, {Dim::Xo, ofmShape.X}, {Dim::Yo, ofmShape.Y}};
  return {{normAxis, normAxis == Dim::C ? ofmShape.C / normGroups : normAxis == Dim::Xo ? ofmShape.X : ofmShape.Y}};
}

const char *Layer::kindName() const {
  if (type == LayerType::LayerNorm && rms)
    return "rmsnorm";
  if (type == LayerType::LayerNorm && normPlane)
    return "groupnorm";
  return type == LayerType::Unary ? unarySpec(unary).name : layerTypeName(type);
}

int64_t Layer::opsPerElement() const {
  // docs/directives.md §7, "Normalizations and GELU": the float formulas' operations.
  switch (type) {
  case LayerType::Softmax: return 5;     // max, subtract, exp, sum, divide
  case LayerType::LayerNorm:
    // mean, subtract, square, variance, scale, gamma, beta; rmsnorm has no
    // mean, subtraction or beta: square, mean square, scale, gamma.
    return rms ? 4 : 7;
  case LayerType::Unary: return unarySpec(unary).opsPerPoint;
  // θ = (t + pos)·base^(−2j/d), cos θ, sin θ, two products and their sum.
  case LayerType::Rope: return kRopeOpsPerElement;
  default: return 0;
  }
}

bool Network::readOutside(int p, const std::function<bool(int)> &inSegment) const {
  for (size_t c = 0; c < layers.size(); ++c)
    for (const TensorRef &op : layers[c].operands) {
      if (op.isInput || op.index != p)
        continue;
      if (!inSegment(static_cast<int>(c)))
        return true;
      for (const Layer &b : layers)
        if (b.forwardOf == layers[c].name)
          return true;
    }
  return false;
}

bool Network::readUpTo(int p, int last) const {
  for (int c = p + 1; c <= last; ++c)
    for (const TensorRef &op : layers[static_cast<size_t>(c)].operands)
      if (!op.isInput && op.index == p)
        return true;
  return false;
}

bool Network::readBy(int p, const std::vector<int> &readers) const {
  for (int c : readers)
    for (const TensorRef &op : layers[static_cast<size_t>(c)].operands)
      if (!op.isInput && op.index == p)
        return true;
  return false;
}

int64_t Network::totalMacs() const {
  // Each layer is within 2^53 (E0308), but a thousand of them are not.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t sum = 0;
  for (const Layer &l : layers)
    if (__builtin_add_overflow(sum, l.macs, &sum))
      return kMax;
  return __builtin_mul_overflow(sum, batch, &sum) ? kMax : sum;
}

} // namespace dfl
