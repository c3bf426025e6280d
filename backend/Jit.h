// The JIT that runs simulator kernels: LLVM 14 ORC LLJIT, each module
// optimized first with a lighter form of the new pass manager's -O2 pipeline
// (Jit.cpp, kernelPipeline) for the host and
// compiled to machine code by the caller's thread (its own target machine),
// then linked into the JIT under a lock. KernelCache compiles a run's kernels
// once per distinct IR, ahead of use, on a few threads.
#pragma once

#include "backend/KernelCodegen.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
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
  double compileMs = 0;    // optimization and machine code
  /// KernelCache: an earlier kernel's function, the IR the same (compileMs 0).
  bool shared = false;
};

/// A function the JIT compiled from a module: its address and the optimized module.
struct JitFunction {
  uint64_t address = 0;
  std::string ir;
  double compileMs = 0;
};

class Jit {
public:
  /// Thread-safe: compile, add and KernelCache's work may run on several threads.
  Jit();
  ~Jit();
  Jit(const Jit &) = delete;
  Jit &operator=(const Jit &) = delete;

  /// Generates, optimizes and compiles the plan's kernel. Aborts on an LLVM
  /// error: the generator's output is verified, so one is a bug of dflc.
  CompiledKernel compile(const KernelPlan &plan, const KernelOptions &options = {});
  /// Optimizes a verified module (its own context) and compiles `function`
  /// of it (the kernels, the LCUs of backend/lcu/Lcu.h); the optimized IR
  /// names it `function`, whatever its symbol in the JIT. Aborts on an LLVM
  /// error, likewise.
  JitFunction add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> ctx,
                  const std::string &function);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex link_;                 // adding objects to jit_ and looking them up
  std::atomic<int> symbols_{0};     // each function's symbol is unique in jit_
};

/// The kernels of a run, each distinct one compiled once: two plans whose
/// generated IR is the same (the layer's name aside) share one function
/// (the key is the IR's text, so sharing is exact). prefetch() generates a
/// kernel once and queues it for at most `threads` background threads, in
/// the order asked; get() waits for it or, not queued, compiles it in the
/// caller. The layer that first asked for a kernel owns its compile: call
/// prefetch() for every layer, in layer order, from one thread (with no
/// threads it only records the order), so which kernels are shared and what
/// each computes never depend on the threads or the timing.
class KernelCache {
public:
  /// threads 0: no background threads (get() compiles).
  explicit KernelCache(int threads);
  ~KernelCache();
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  /// The plan's kernel generated and queued; get(ticket) takes it without
  /// generating its IR again.
  size_t prefetch(const KernelPlan &plan, const KernelOptions &options);
  /// The kernel of prefetch()'s `ticket`: its slots the plan's own, its
  /// function (and the IR, under the plan's layer's name) the first
  /// identical kernel's, compileMs that compile's for the owner's first
  /// get() of it, 0 and shared else. Thread-safe.
  CompiledKernel get(size_t ticket);
  /// The same for a plan not prefetched (compiled here if new).
  CompiledKernel get(const KernelPlan &plan, const KernelOptions &options);
  /// The distinct kernels compiled or queued.
  size_t distinct() const { return entries_.size(); }

private:
  struct Entry {
    std::unique_ptr<llvm::LLVMContext> ctx;   // declared first: outlives module
    std::unique_ptr<llvm::Module> module;     // until compiled
    std::string function;
    std::string owner;   // the layer that first asked for it
    bool queued = false, done = false, taken = false;
    JitFunction compiled;
  };
  /// A kernel asked for: its entry, the generator's tables (no module), the layer.
  struct Ticket {
    Entry *entry = nullptr;
    KernelCode code;
    std::string layer;
  };
  /// The plan's kernel generated, its entry (made, not queued, if new).
  Ticket ticket(const KernelPlan &plan, const KernelOptions &options);
  void work();
  /// Compiles queued `e` with `lock` (held) released meanwhile, then publishes it.
  void compile(Entry &e, std::unique_lock<std::mutex> &lock);
  CompiledKernel get(const Ticket &t);

  Jit jit_;
  /// By the IR's text: hashed, so a new kernel is not compared with every
  /// other's text (they share long prefixes).
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;
  std::deque<Ticket> tickets_;                               // prefetch()'s, by ticket
  std::vector<Entry *> queue_;                               // FIFO, next at queueHead_
  size_t queueHead_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  size_t maxThreads_;
  std::vector<std::thread> threads_;   // started as kernels are queued
};

/// The background threads a run's KernelCache uses by default: the CPUs
/// this process may use (as dflc sweep's --jobs).
int defaultCompileThreads();

} // namespace dfl::sim
