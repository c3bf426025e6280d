// The inter-layer solver's chain DP (KAPLA §IV-B): over the topological
// order, the k cheapest ways to cut the layers into consecutive segments —
// single layers, temporal and spatially pipelined segments — by the segment
// costs it is given (estimates, bounds or real energies; see
// InterLayerSolver.h). Ties are broken by the shape of the last segment, so
// the result does not depend on the order costs were computed in.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace dfl {

/// Instances: a temporal segment split into instances (docs/directives.md §9);
/// the DP prices it as Temporal, the chain built from it says which ran.
enum class SegmentKind { Single, Temporal, Spatial, Instances };

/// One segment of a chain: layers first..last as one kind.
struct Link {
  int first = 0, last = 0;
  SegmentKind kind = SegmentKind::Single;
  bool operator==(const Link &) const = default;
};
using Chain = std::vector<Link>;

/// A segment's cost (first..last, network order); nullopt: not allowed.
using SegmentCost = std::function<std::optional<double>(int first, int last)>;

/// The (up to) k cheapest chains over layers 0..n-1, cheapest first: single
/// layers cost single(i); segments of 2..maxLen layers cost temporal(first,
/// last) as temporal segments and spatial(first, last) as spatial ones.
std::vector<Chain> cheapestChains(int n, size_t maxLen, size_t k, const std::function<double(int)> &single,
                                  const SegmentCost &temporal, const SegmentCost &spatial);

} // namespace dfl
