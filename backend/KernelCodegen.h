// LLVM IR for a layer's simulator kernel (docs/simulator.md, "Kernels"): one
// function whose loop structure is the schedule — per level from the
// outermost in, the updates in their order and a loop over the stacked units,
// each unit with its own buffer per role — with the fills, partial-sum
// write-backs and the layer's statement where the directives put them, and
// counters of every access at every level boundary.
#pragma once

#include "backend/KernelPlan.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace dfl::sim {

/// The arrays a kernel works on, passed as one table of pointers; the
/// runtime allocates each with `elements` of `bytes` bytes, set to `init`.
struct KernelSlot {
  std::string name;
  int64_t elements = 0;
  int bytes = 4;
  int64_t init = 0;
};

/// Counter indices in the counters slot: per level (on-chip levels, then the
/// outermost), per role, reads, writes and same-level transfers; then MACs;
/// then the outermost level's reads per DRAM tensor of each role (a segment
/// forwards tensors on chip by name, docs/simulator.md).
struct CounterIndex {
  size_t levels = 0;
  std::array<size_t, kNumRoles> firstSource{};
  size_t sources = 0;
  size_t at(size_t level, TensorRole r, int kind) const {
    return (level * kNumRoles + static_cast<size_t>(r)) * 3 + static_cast<size_t>(kind);
  }
  size_t macs() const { return levels * kNumRoles * 3; }
  size_t sourceReads(TensorRole r, size_t k) const { return macs() + 1 + firstSource[static_cast<size_t>(r)] + k; }
  size_t size() const { return macs() + 1 + sources; }
};
enum CounterKind { kReads = 0, kWrites = 1, kSame = 2 };

/// A deliberate defect, for the tests that show a broken kernel is caught.
enum class KernelFault { None, DropInnerFill, OuterLoopShort };

struct KernelOptions {
  /// Count accesses (the simulator); off, the kernel only computes (the
  /// benchmark's other column).
  bool counters = true;
  KernelFault fault = KernelFault::None;
  /// The innermost level's unit-steps from which its units' code has an
  /// unclipped copy for the steps inside the parent's box (docs/simulator.md,
  /// "Kernels"); below, the copy would cost more compile time than it saves.
  /// Where every step runs unclipped, at any size, the copy replaces the
  /// clipped code. 0: a copy always; infinity: never, the clipped code alone
  /// (the tests run both ways).
  double unclippedSteps = 0x1p25;
};

struct KernelCode {
  std::unique_ptr<llvm::Module> module;
  std::string function;                 // the kernel's symbol: void (i8** slots)
  std::vector<KernelSlot> slots;
  CounterIndex counters;
  /// Slots of the DRAM tensors, per role (-1 if the layer has none).
  std::array<int, kNumRoles> tensorSlot{-1, -1, -1};
  /// The DRAM tensors the kernel reads: (tensor name, slot).
  std::vector<std::pair<std::string, int>> inputs;
  int counterSlot = 0;
};

KernelCode generateKernel(const KernelPlan &plan, llvm::LLVMContext &ctx, const KernelOptions &options = {});

} // namespace dfl::sim
