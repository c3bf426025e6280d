// Training: derives the backward pass of a network (KAPLA §V evaluates
// training), appended after the forward layers in reverse topological order.
// Before: a checked Network. After: the same Network plus, per layer in
// reverse order, its backward layers (docs/language.md, "Training"):
//   L__dgrad  the data gradient dX = f(dY, W)   (output role ifm)
//   L__wgrad  the weight gradient dW = f(X, dY) (output role wgt)
// each the forward loop nest with another output tensor, hence the same MACs
// (Layer::nest: the same domain and accesses; the output role's tensors and
// the forward output become gradients, `X__grad`).
// Pools get a gradient-routing L__dgrad; add and concat route gradients for
// free; mul gets L__dgrad. A broadcast add or mul also gets L__wgrad, its
// [C,1,1] operand's gradient (read as the wgt, as a matmul's second operand
// is). No data gradient is derived for a layer whose operands are all
// network inputs (a broadcast: whose [C,X,Y] operand is one), since nothing
// upstream needs it.
#pragma once

#include "model/Model.h"

namespace dfl {

void addBackwardLayers(Network &net);

} // namespace dfl
