// The simulator's data (docs/simulator.md, "Data and the reference"): every
// tensor of a network run as 32-bit words, row-major in the order of the
// model's access extents, and the deterministic seeded integers a run starts
// from (network inputs, weights, the output gradients training reads).
//
// Before: a checked Network (with its batch). After: a TensorStore holding
// what no layer computes; the reference (backend/Reference.h) and the
// simulator add the layers' outputs to it.
#pragma once

#include "model/Network.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dfl::sim {

/// One data word. All arithmetic on words wraps around modulo 2^32.
using Word = int32_t;

/// A tensor's words, row-major over its extents (outermost first): activations
/// [batch][C][X][Y]; conv weights [K][C/groups][R][S]; dwconv [C][R][S]; fc
/// [K][C][R][S] with R, S the input's X, Y.
struct Tensor {
  std::vector<int64_t> extent;
  std::vector<Word> data;
};

/// The number of elements of a tensor with these extents.
int64_t elementCount(const std::vector<int64_t> &extent);

/// Every tensor of a run, by name (a network input, a layer, `L__wgt`, a
/// gradient `T__grad`).
class TensorStore {
public:
  /// Adds or replaces a tensor; its words must match its extents.
  void set(const std::string &name, Tensor tensor);
  bool contains(const std::string &name) const { return tensors_.count(name) != 0; }
  /// Drops a tensor (no later layer reads it); nothing if absent.
  void erase(const std::string &name) { tensors_.erase(name); }
  /// The tensor called `name`; an internal error if absent.
  const Tensor &at(const std::string &name) const;
  const std::map<std::string, Tensor> &tensors() const { return tensors_; }

private:
  std::map<std::string, Tensor> tensors_;
};

/// Where two tensors first differ: the row-major offset, the index per
/// extent (outermost first) and the two words.
struct Mismatch {
  int64_t offset = 0;
  std::vector<int64_t> index;
  Word expected = 0, actual = 0;
};
/// The first element at which `actual` differs from `expected`, or nothing if
/// they are equal; an internal error if their extents differ.
std::optional<Mismatch> firstMismatch(const Tensor &expected, const Tensor &actual);

// ---- names and extents ------------------------------------------------------

/// An activation's extents: [batch][C][X][Y].
std::vector<int64_t> activationExtent(const Network &net, const TensorShape &shape);
/// The name of layer `l`'s stored weights, `F__wgt` with F the forward layer
/// (a backward layer reads its forward layer's weights).
std::string weightName(const Layer &l);
/// The extents of layer `l`'s stored weights; empty if it has none (a matmul's
/// wgt is its second operand, an activation).
std::vector<int64_t> weightExtent(const Layer &l);
/// The gradient of a tensor, as training's backward layers name it: `T__grad`.
std::string gradientName(const std::string &tensor);
/// The name of a layer operand's tensor (the input or the producing layer).
std::string operandName(const Network &net, TensorRef ref);
/// The shape of a layer operand's tensor, per sample.
TensorShape operandShape(const Network &net, TensorRef ref);
/// The forward layer of `l`: itself, or the layer its `forwardOf` names.
const Layer &forwardLayer(const Network &net, const Layer &l);
/// The tensors layer `layer` writes, by name, in order: a forward layer its
/// output; a data gradient `X__grad` for each distinct operand X of its
/// forward layer (a matmul's first operand alone); a weight gradient
/// `F__wgt__grad` (a matmul's: its second operand's gradient).
std::vector<std::string> outputNames(const Network &net, int layer);
/// The tensors layer `layer`'s reference reads (backend/Reference.cpp), by
/// name with their extents, each once: a forward layer its operands and its
/// stored weights; a backward layer its forward layer's output gradient and
/// what its relation reads of the forward layer's operands and weights.
std::vector<std::pair<std::string, std::vector<int64_t>>> layerReads(const Network &net, int layer);

// ---- seeded data ------------------------------------------------------------

/// The key of a tensor's words: FNV-1a (64 bit) of its name, xor the seed.
uint64_t tensorKey(const std::string &name, uint64_t seed);
/// Word `index` of the tensor with key `key`: the top four bits of SplitMix64's
/// (index+1)-th output from state `key`, minus 8 — an integer in [-8, 7] that
/// depends on nothing but the key and the index.
Word seedWord(uint64_t key, int64_t index);
/// `size` words of the tensor called `name`: seedWord(tensorKey(name, seed), i).
std::vector<Word> seedTensor(const std::string &name, int64_t size, uint64_t seed);

/// A store with every tensor a run of `net` reads but no layer writes, seeded:
/// the network inputs, every layer's weights, and (training) the output
/// gradient `F__grad` of each forward layer F whose backward layers read it
/// and no data gradient writes (the last layer's; one read by add or concat);
/// of those, what the first `layers` layers read (a run that stops early).
TensorStore seedNetwork(const Network &net, uint64_t seed, size_t layers = SIZE_MAX);

} // namespace dfl::sim
