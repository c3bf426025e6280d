// Boxes over tensors and iteration domains, propagated backwards through the
// layers' access functions (model/LoopNest.h): what part of every tensor a
// piece of a sub-graph's output needs. GraphTurbo's SplitInfo, instances,
// dependences, bindings and footprints (docs/graphturbo.md) are all read off
// these boxes, so they follow the network's own loop nests (halos of windows,
// channel reductions, concatenation guards) rather than a parallel model.
#pragma once

#include "model/DsaHardware.h"
#include "model/Network.h"

#include <cstdint>
#include <map>
#include <vector>

namespace dfl::graph {

/// [lo, hi) per dimension.
struct Box {
  std::vector<int64_t> lo, hi;
  int64_t volume() const;
  bool empty() const;
  /// The smallest box holding both (an empty box is the identity).
  void hull(const Box &o);
  bool intersects(const Box &o) const;
  /// The common part (empty if none).
  Box intersect(const Box &o) const;
  friend bool operator==(const Box &, const Box &) = default;
};

/// The network on one cluster: its layers' producers and consumers, the
/// cluster's share of the batch, and the cost of one point of every layer.
class GraphView {
public:
  /// `clusterBatch`: the samples a cluster runs at once (0: ⌈batch / clusters⌉).
  GraphView(const Network &net, const DsaHardware &hw, int64_t clusterBatch = 0);

  const Network &net() const { return net_; }
  const DsaHardware &hw() const { return hw_; }
  int layers() const { return static_cast<int>(net_.layers.size()); }
  /// Producer layers of layer l (network inputs excluded), without repeats.
  const std::vector<int> &producers(int l) const { return producers_[static_cast<size_t>(l)]; }
  const std::vector<int> &consumers(int l) const { return consumers_[static_cast<size_t>(l)]; }
  /// Samples a cluster runs at once: at most ⌈batch / clusters⌉ (the paper's
  /// data parallelism across clusters, §2.1; fewer loop over its share, §5.1).
  int64_t clusterBatch() const { return clusterBatch_; }
  /// The clusters with samples to run, ⌈batch / ⌈batch / clusters⌉⌉: batch 1
  /// keeps one busy however many there are.
  int64_t activeClusters() const;
  /// This cluster's share of the DDR bandwidth, in bytes per cycle: the
  /// active clusters share it, the idle ones take none.
  double ddrBytesPerCycle() const { return hw_.ddrBytesPerCyclePerCluster(activeClusters()); }
  /// The cluster's share of layer l's output tensor: the whole tensor, the
  /// batch dimension cut to clusterBatch().
  Box outputBox(int l) const;
  /// Layer l's output access (its ofm).
  const Access &outputAccess(int l) const;
  /// The layer (>= 0) or network input (-1 - index) an access reads.
  int source(const Access &a) const;
  /// The operators a layer counts as (Algorithm 1's num_of_op): its own and its fused activations.
  int64_t opCount(int l) const { return 1 + static_cast<int64_t>(net_.layers[static_cast<size_t>(l)].activations.size()); }
  /// The share of layer l's iteration box its domain holds: 1, or a causal
  /// mask's triangle over the square (docs/limits.md: an instance's compute is
  /// its box times this average, exact over the layer, not per instance).
  double density(int l) const { return density_[static_cast<size_t>(l)]; }
  /// Whether layer l runs on the matrix units (conv, fc, matmul) rather than the vector units.
  bool onMatrixUnit(int l) const;
  int64_t bytes(const Box &b) const { return b.volume() * hw_.wordBytes(); }

private:
  const Network &net_;
  const DsaHardware &hw_;
  int64_t clusterBatch_ = 1;
  std::vector<std::vector<int>> producers_, consumers_;
  std::vector<double> density_;
};

/// What a piece of a sub-graph touches: per layer of the sub-graph its
/// iteration box and output box, per tensor read from outside its box, per
/// layer its weights' box.
struct Footprint {
  std::map<int, Box> iteration, output, weights;
  std::map<int, Box> external;   // by source (GraphView::source): layers outside, inputs
  /// Live bytes at the peak of a run of the layers in order: external inputs
  /// until their last reader, outputs from their producer to their last reader.
  int64_t peakBytes = 0;
};

/// Propagates `exitBox` (a box of layer `layers.back()`'s output) backwards
/// through `layers` (topological order, the exit last; every layer but the
/// exit read only inside the list): the model's halos (propagateHalos,
/// model/Geometry.h) as boxes, and the peak.
Footprint propagate(const GraphView &g, const std::vector<int> &layers, const Box &exitBox);

/// `box` cut into `parts` equal pieces along dimension d; piece i (the
/// instance split rule, equalPiece in model/Geometry.h).
Box piece(const Box &box, size_t d, int64_t parts, int64_t i);

} // namespace dfl::graph
