// Hashing of integer keys (FNV-1a over 64-bit words) for the memos the
// solver keeps by what a computation reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dfl {

struct IntVectorHash {
  size_t operator()(const std::vector<int64_t> &key) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : key)
      h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

} // namespace dfl
