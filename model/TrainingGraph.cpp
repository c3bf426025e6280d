#include "model/TrainingGraph.h"

#include "support/Check.h"

namespace dfl {
namespace {

/// A backward layer's nest: the forward domain and access functions; the
/// accesses of role `output` are written, to the gradients of their tensors,
/// and the forward output (ofm; a conv_transpose's ifm) is read as its
/// gradient (dY): dgrad dX += dY·W, wgrad dW += X·dY.
LoopNest backwardNest(const LoopNest &fwd, const std::string &name, TensorRole output) {
  LoopNest b = fwd;
  b.name = name;
  b.output = output;
  for (Access &a : b.accesses)
    if (a.role == output || a.role == fwd.output)
      a.tensor += "__grad";
  return b;
}

} // namespace

void addBackwardLayers(Network &net) {
  const size_t forward = net.layers.size();
  for (size_t i = forward; i-- > 0;) {
    const Layer fwd = net.layers[i];
    DFLC_CHECK(!fwd.causal) << "causal layer '" << fwd.name << "' reached the training transform; sema refuses it (E0313)";
    bool needsDataGradient = false;
    for (const TensorRef &op : fwd.broadcast >= 0 ? fwd.ifmOperands() : fwd.operands)
      needsDataGradient |= !op.isInput;
    auto backward = [&](const char *suffix, TensorRole output) {
      Layer b = fwd;
      b.name = fwd.name + suffix;
      b.output = output;
      b.nest = backwardNest(fwd.nest, b.name, output);
      b.forwardOf = fwd.name;
      b.activations.clear();
      // Backward layers read gradients and saved activations from memory; they
      // forward no tensor to a consumer, so segments never merge them.
      b.operands.clear();
      b.operandNames = {fwd.name};
      net.names[b.name] = {false, static_cast<int>(net.layers.size())};
      net.layers.push_back(std::move(b));
    };
    if (fwd.broadcast >= 0) {
      // dX of the [C,X,Y] operand as for any add or mul (routed; dY·s), and
      // the [C,1,1] operand's gradient, read as the wgt, a reduction over X
      // and Y: the wgt written, as for a matmul's second operand.
      if (fwd.type == LayerType::Mul && needsDataGradient)
        backward("__dgrad", TensorRole::Ifm);
      backward("__wgrad", TensorRole::Wgt);
      continue;
    }
    if (fwd.type == LayerType::ConvTranspose) {
      // Its nest is the conv from y to x run as that conv's data gradient, so
      // dX is that conv itself: the nest with its ofm (x) written from dY and
      // the weights, shaped as a conv from y to x; dW reads x and dY.
      if (needsDataGradient) {
        backward("__dgrad", TensorRole::Ofm);
        std::swap(net.layers.back().ifmShape, net.layers.back().ofmShape);
      }
      backward("__wgrad", TensorRole::Wgt);
      continue;
    }
    switch (fwd.type) {
    case LayerType::Add:
    case LayerType::Concat: break;   // gradients are routed, not computed
    case LayerType::MaxPool:
    case LayerType::AvgPool:
    case LayerType::Mul:
    case LayerType::Softmax:
    case LayerType::LayerNorm:
    case LayerType::Unary:
    case LayerType::Upsample:       // dX sums dY over the phases
    case LayerType::DepthToSpace:   // dX is dY permuted back
      if (needsDataGradient)
        backward("__dgrad", TensorRole::Ifm);
      break;
    default:
      if (needsDataGradient)
        backward("__dgrad", TensorRole::Ifm);
      backward("__wgrad", TensorRole::Wgt);
      break;
    }
  }
}

} // namespace dfl
