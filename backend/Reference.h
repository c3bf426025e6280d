// The independent reference (docs/simulator.md, "Data and the reference"):
// every layer kind's integer result computed by naive loops written from the
// layer's parameters (type, groups, per-axis stride, padding and dilation, ceil mode,
// transpose_b, shapes, operands, activations, output role) — never from its
// loop nest, so a simulator kernel generated from the nest is checked against
// arithmetic it shares nothing with. Words wrap around modulo 2^32.
//
// Before: a checked Network and a TensorStore holding every tensor the layer
// reads. After: the tensors the layer writes (SimData.h, outputNames).
#pragma once

#include "backend/SimData.h"

#include <string>
#include <vector>

namespace dfl::sim {

/// The tensors layer `layer` of `net` writes, by name, with their extents:
/// a forward layer's output after its fused activations; a data gradient's
/// `X__grad` per operand; a weight gradient's `F__wgt__grad` (a matmul's
/// second operand's gradient). An internal error if the store lacks a tensor
/// the layer reads or holds one of other extents.
TensorStore referenceOutputs(const Network &net, int layer, const TensorStore &store);

/// The words of the one tensor layer `layer` writes (every layer but the data
/// gradient of a layer with several distinct operands: an internal error).
std::vector<Word> referenceLayer(const Network &net, int layer, const TensorStore &store);

/// Runs every layer of `net` in order, adding its outputs to `store` (a tensor
/// written again, by a second data gradient, is replaced).
void runReference(const Network &net, TensorStore &store);

/// A fused activation's integer form (docs/simulator.md); an internal error
/// for a name activationNames() does not list.
Word activate(const std::string &activation, Word x);

/// A unary layer's integer form (docs/simulator.md, "The unary functions"):
/// sigmoid is the fused sigmoid's; silu and gelu are x·sigmoid(x)/16.
Word unary(UnaryFn f, Word x);

} // namespace dfl::sim
