// The JIT that runs simulator kernels: LLVM 14 ORC LLJIT, each module
// optimized first with the new pass manager's -O2 pipeline for the host.
#pragma once

#include "backend/KernelCodegen.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace dfl::sim {

using KernelFn = void (*)(void **slots);

struct CompiledKernel {
  KernelFn fn = nullptr;
  std::vector<KernelSlot> slots;            // what fn's table points to
  CounterIndex counters;
  std::array<int, kNumRoles> tensorSlot{};
  std::vector<std::pair<std::string, int>> inputs;
  int counterSlot = 0;
  std::string ir;          // the optimized module, as text
  double compileMs = 0;    // -O2 and machine code
};

/// A function the JIT compiled from a module: its address and the optimized module.
struct JitFunction {
  uint64_t address = 0;
  std::string ir;
  double compileMs = 0;
};

class Jit {
public:
  Jit();
  ~Jit();
  Jit(const Jit &) = delete;
  Jit &operator=(const Jit &) = delete;

  /// Generates, optimizes and compiles the plan's kernel. Aborts on an LLVM
  /// error: the generator's output is verified, so one is a bug of dflc.
  CompiledKernel compile(const KernelPlan &plan, const KernelOptions &options = {});
  /// Optimizes a verified module (its own context) and compiles `function`
  /// of it (the LCUs, backend/lcu/Lcu.h). Aborts on an LLVM error, likewise.
  JitFunction add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> ctx,
                  const std::string &function);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::unique_ptr<llvm::TargetMachine> tm_;   // the host's, for -O2's cost models
  int kernels_ = 0;
};

} // namespace dfl::sim
