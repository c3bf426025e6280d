// Running one compiled kernel: its arrays allocated and initialized, the DRAM
// inputs copied in, the output and the counters read back.
#pragma once

#include "backend/Jit.h"
#include "backend/SimData.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dfl::sim {



/// Accesses counted by a kernel, per level (the on-chip levels, then the
/// outermost) and role: reads, writes and same-level transfers, as
/// docs/directives.md §6 defines them; and the statement instances run.
struct KernelCounts {
  struct Role {
    double reads = 0, writes = 0, same = 0;
  };
  std::vector<std::array<Role, kNumRoles>> levels;
  double macs = 0;
  /// The outermost level's reads per role of each DRAM tensor, by name.
  std::array<std::map<std::string, double>, kNumRoles> dramReads;
};

struct KernelResult {
  std::vector<Word> output;
  KernelCounts counts;
  double runMs = 0;
};

/// The bytes the kernel's arrays take.
int64_t kernelBytes(const CompiledKernel &k);

/// Runs the kernel on its DRAM inputs, taken from `store` by name.
KernelResult runKernel(const KernelPlan &plan, const CompiledKernel &k, const TensorStore &store);

} // namespace dfl::sim
