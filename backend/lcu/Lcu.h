// A region's local control unit (LCU): the state machine that makes the
// region wait for its data and keeps it from overwriting what its consumers
// have not read (docs/simulator.md, "Pipelines"; §3.2-3.3 of *Compiling
// Neural Networks for a Computational Memory Accelerator*, arXiv 2020).
//
// Generated from the region's dependences (backend/polyhedral/
// Dependences.h) with isl's AST builder: a loop over the region's steps in
// lexicographic order whose body waits on each counter the relations name,
// then runs the step. Counter 2e counts the steps edge e's producer has
// finished, 2e+1 those its consumer has; a finished step advances every
// counter of its region (the signal). The same AST is printed as C (for
// inspection: OUT/lcu/REGION.c) and lowered to LLVM IR for the ORC JIT.
//
// Before: the segment's PipelineDependences, alive while the Lcu is.
// After: c() and module() describe the same calls in the same order.
#pragma once

#include "backend/polyhedral/Dependences.h"

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace dfl::sim {

class Jit;

/// What an LCU calls: block until counter >= value; run step `step` (its number).
using LcuWaitFn = void (*)(void *ctx, int64_t counter, int64_t value);
using LcuStepFn = void (*)(void *ctx, int64_t step);
/// The generated function: void lcu_REGION(void *ctx, LcuWaitFn, LcuStepFn).
using LcuFn = void (*)(void *ctx, LcuWaitFn wait, LcuStepFn step);

struct LcuOptions {
  /// Tests only: the RAW wait on this edge one step short (waits for the
  /// producer's step before the one it needs).
  int weakenedEdge = -1;
  /// Tests only: the WAR wait on this edge one step short (the producer
  /// overwrites a slot once the consumer has finished the step before its
  /// last reader).
  int weakenedWarEdge = -1;
};

class Lcu {
public:
  Lcu(const PipelineDependences &deps, int region, const LcuOptions &options = {});
  ~Lcu();
  Lcu(const Lcu &) = delete;
  Lcu &operator=(const Lcu &) = delete;

  /// The function's name: lcu_ and the region's layer.
  const std::string &function() const;
  /// A self-contained C translation unit defining function().
  std::string c() const;
  /// The same function as LLVM IR, verified.
  std::unique_ptr<llvm::Module> module(llvm::LLVMContext &ctx) const;
  /// module(), optimized and compiled by the JIT; the JIT owns the code.
  LcuFn compile(Jit &jit, double *compileMs = nullptr) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace dfl::sim
