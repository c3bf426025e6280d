#include "model/CmHardware.h"

#include <cmath>
#include <deque>

namespace dfl {

const char *cmTopologyName(CmTopology t) {
  switch (t) {
  case CmTopology::Mesh: return "mesh";
  case CmTopology::Ring: return "ring";
  case CmTopology::Links: return "links";
  }
  return "?";
}

std::vector<std::vector<int>> CmHardware::hopDistances() const {
  const size_t n = static_cast<size_t>(cores);
  std::vector<std::vector<int>> out(n, std::vector<int>(n, -1)), next(n);
  for (auto [a, b] : links)
    next[static_cast<size_t>(a)].push_back(b);
  for (size_t s = 0; s < n; ++s) {   // breadth-first from every core
    std::deque<int> queue{static_cast<int>(s)};
    out[s][s] = 0;
    while (!queue.empty()) {
      int u = queue.front();
      queue.pop_front();
      for (int v : next[static_cast<size_t>(u)])
        if (out[s][static_cast<size_t>(v)] < 0) {
          out[s][static_cast<size_t>(v)] = out[s][static_cast<size_t>(u)] + 1;
          queue.push_back(v);
        }
    }
  }
  return out;
}

int64_t CmHardware::gridCols() const {
  if (topology == CmTopology::Mesh)
    return meshCols;
  return static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(cores))));
}

std::pair<int64_t, int64_t> CmHardware::gridOf(int core) const {
  int64_t cols = gridCols();
  return {core / cols, core % cols};
}

} // namespace dfl
