// GraphTurbo §3.1-3.2: SplitInfo (Algorithm 1) with the recomputation guard,
// the best split (Eq. 1), and grouping sub-graphs by the straight, diamond
// and branch patterns under the paper's preconditions (Algorithm 2).
#pragma once

#include "scheduler/graph/TensorBoxes.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

namespace dfl::graph {

/// One element of SplitInfo: (split_d, n_d, f_d, d). d counts the output
/// tensor's dimensions from the outermost, from 0 (the paper from 1).
struct Split {
  int64_t ops = 0;      // n_d: operators the split cuts
  int64_t factor = 1;   // f_d: instances
  int dim = 0;          // d
  friend bool operator==(const Split &, const Split &) = default;
};

/// A split's factor when SplitInfo is empty (Algorithm 1's f_d = ∞).
constexpr int64_t kUnsplittable = std::numeric_limits<int64_t>::max();

struct SplitResult {
  std::vector<Split> info;        // SplitInfo
  std::optional<Split> best;      // Eq. (1) over info
  int64_t peakBytes = 0;          // the sub-graph's footprint on one cluster
  /// Dimensions whose split the recomputation guard rejected.
  std::vector<int> rejectedByRecomputation;
  int64_t factor() const { return best ? best->factor : kUnsplittable; }
};

/// Algorithm 1 for the sub-graph `layers` (topological order, the exit last),
/// with the recomputation guard: a split is dropped when the cycles its
/// pieces compute and load again (intermediates, inputs and weights) cost
/// more than the round trips it saves: each intermediate through DDR, the
/// output through the GB.
SplitResult splitInfo(const GraphView &g, const std::vector<int> &layers);
/// Whether a sub-graph's weights stay in the GB while its instances run
/// (they take at most half of it): copied from DDR once, not per instance.
bool weightsStaged(const GraphView &g, const std::vector<int> &layers);
/// Eq. (1): lexmax over SplitInfo of (n_d, −f_d, −d).
std::optional<Split> bestSplit(const std::vector<Split> &info);

struct SubGraph {
  std::vector<int> layers;   // topological order; the exit (the one output) last
  SplitResult split;
  int exit() const { return layers.back(); }
};

/// The sub-graphs and their producer/consumer relation, as Algorithm 2 evolves them.
class SubGraphSet {
public:
  /// One sub-graph per layer, each with its SplitInfo (Algorithm 2, lines 1-4).
  explicit SubGraphSet(const GraphView &g);

  const std::vector<SubGraph> &subGraphs() const { return sgs_; }
  std::vector<int> producers(int s) const;   // sub-graphs, not network inputs
  std::vector<int> consumers(int s) const;
  int of(int layer) const { return owner_[static_cast<size_t>(layer)]; }

  /// One sweep of each merging pattern; each returns the merges it made.
  int straightMerge();
  int diamondMerge();
  int branchMerge();
  /// Algorithm 2: the three sweeps repeated until none merges.
  void group();

private:
  /// Merges `members` into one sub-graph if `allowed` holds for its split.
  bool tryMerge(const std::vector<int> &members, const std::function<bool(const SplitResult &)> &allowed);
  void rebuildOwners();

  const GraphView &g_;
  std::vector<SubGraph> sgs_;   // ordered by exit
  std::vector<int> owner_;      // layer -> sub-graph
};

} // namespace dfl::graph
