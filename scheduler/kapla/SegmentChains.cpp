#include "scheduler/kapla/SegmentChains.h"

#include <algorithm>
#include <tuple>

namespace dfl {
namespace {

/// A partial chain in the DP: its cost and how it ends.
struct ChainEnd {
  double cost = 0;
  int start = 0;   // first layer of the last segment
  SegmentKind kind = SegmentKind::Single;
  size_t prev = 0;   // rank of the chain it extends, at `start`
};

} // namespace

std::vector<Chain> cheapestChains(int n, size_t maxLen, size_t k, const std::function<double(int)> &single,
                                  const SegmentCost &temporal, const SegmentCost &spatial) {
  std::vector<std::vector<ChainEnd>> best(static_cast<size_t>(n) + 1);
  best[0].push_back({0, 0, SegmentKind::Single, 0});
  for (int j = 1; j <= n; ++j) {
    std::vector<ChainEnd> cands;
    for (int len = 1; len <= j && static_cast<size_t>(len) <= maxLen; ++len) {
      int i = j - len;
      auto add = [&](double c, SegmentKind kind) {
        for (size_t rank = 0; rank < best[i].size(); ++rank)
          cands.push_back({best[i][rank].cost + c, i, kind, rank});
      };
      if (len == 1) {
        add(single(i), SegmentKind::Single);
        continue;
      }
      if (auto c = temporal(i, j - 1))
        add(*c, SegmentKind::Temporal);
      if (auto c = spatial(i, j - 1))
        add(*c, SegmentKind::Spatial);
    }
    // Deterministic: by cost, then by the shape of the last segment.
    std::stable_sort(cands.begin(), cands.end(), [](const ChainEnd &a, const ChainEnd &b) {
      return std::tie(a.cost, a.start, a.kind, a.prev) < std::tie(b.cost, b.start, b.kind, b.prev);
    });
    if (cands.size() > k)
      cands.resize(k);
    best[static_cast<size_t>(j)] = std::move(cands);
  }
  std::vector<Chain> chains;
  for (size_t rank = 0; rank < best[static_cast<size_t>(n)].size(); ++rank) {
    Chain chain;
    size_t at = rank;
    for (int j = n; j > 0;) {
      const ChainEnd &e = best[static_cast<size_t>(j)][at];
      chain.insert(chain.begin(), Link{e.start, j - 1, e.kind});
      at = e.prev;
      j = e.start;
    }
    chains.push_back(std::move(chain));
  }
  return chains;
}

} // namespace dfl
