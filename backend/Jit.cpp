// The kernel JIT (backend/Jit.h).
#include "backend/Jit.h"

#include "support/Check.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/JITEventListener.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <sched.h>

namespace dfl::sim {
namespace {

template <class T> T take(llvm::Expected<T> e, const char *what) {
  if (!e) {
    DFLC_CHECK(false) << what << ": " << llvm::toString(e.takeError());
  }
  return std::move(*e);
}

/// The host's target machine at -O2's code generation level: one per
/// compile, as a target machine is not safe to share between threads.
std::unique_ptr<llvm::TargetMachine> hostMachine() {
  auto jtmb = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  jtmb.setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  return take(jtmb.createTargetMachine(), "creating the target machine");
}

/// The kernels' optimization pipeline: -O2's function simplification and
/// vectorization passes (LLVM 14's `default<O2>` as `opt
/// -print-pipeline-passes` lists it), once, without what a module of one
/// kernel and its noinline evictions gains nothing from (the inliner's
/// call-graph walk, interprocedural and coroutine passes) and without the
/// passes that cost compile time and gained no kernel throughput here:
/// jump threading, correlated-value propagation, reassociation, loop idioms,
/// SCCP, BDCE, ADCE, memcpyopt, loop distribution and load elimination
/// (docs/benchmarks.md, "A lighter pass pipeline"). The statement's loops
/// are still fully unrolled or vectorized, and the SLP vectorizer stays: a
/// matmul's unrolled rows of MACs ran 2x slower without it.
std::string kernelPipeline() {
  const std::string cfg = "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;"
                          "no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts>";
  return "function(lower-expect," + cfg + ",sroa,early-cse<>,instcombine," + cfg + ",early-cse<memssa>," + cfg +
         ",loop-mssa(loop-instsimplify,loop-simplifycfg,licm,loop-rotate,licm,"
         "simple-loop-unswitch<no-nontrivial;trivial>)," +
         cfg + ",instcombine,loop(indvars,loop-deletion,loop-unroll-full),gvn<>,instcombine,dse,loop-mssa(licm),"
               "simplifycfg,loop(loop-rotate,loop-deletion),"
               "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only;>,instcombine,simplifycfg,"
               "slp-vectorizer,instcombine,loop-unroll<O2>,instcombine,loop-mssa(licm),instsimplify,div-rem-pairs," +
         cfg + ")";
}

/// `ir` (a printed module) under module name `name`, as the printer writes it.
std::string renamedModule(const std::string &ir, const std::string &name) {
  size_t body = ir.find('\n', ir.find('\n') + 1);   // after "; ModuleID" and "source_filename"
  DFLC_CHECK(body != std::string::npos) << "a printed module without its header";
  std::string out = "; ModuleID = '" + name + "'\nsource_filename = \"";
  llvm::raw_string_ostream os(out);
  llvm::printEscapedString(name, os);
  os << "\"";
  os.flush();
  return out + ir.substr(body);
}

/// A kernel: the generator's tables of `code`, the function at `address`.
CompiledKernel compiledKernel(const KernelCode &code, uint64_t address, std::string ir, double compileMs) {
  CompiledKernel out;
  out.slots = code.slots;
  out.counters = code.counters;
  out.tensorSlot = code.tensorSlot;
  out.inputs = code.inputs;
  out.counterSlot = code.counterSlot;
  out.ir = std::move(ir);
  out.fn = llvm::jitTargetAddressToFunction<KernelFn>(address);
  out.compileMs = compileMs;
  return out;
}

void initializeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

} // namespace

Jit::Jit() {
  initializeTarget();
  llvm::orc::LLJITBuilder builder;
  // DFLC_PERF_JIT set: the kernels are named in `perf record -k 1` profiles
  // (jit-PID.dump, for `perf inject --jit`), where they are otherwise unknown.
  if (llvm::JITEventListener *perf = std::getenv("DFLC_PERF_JIT") ? llvm::JITEventListener::createPerfJITEventListener()
                                                                   : nullptr)
    builder.setObjectLinkingLayerCreator([perf](llvm::orc::ExecutionSession &es, const llvm::Triple &) {
      auto layer = std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
          es, [] { return std::make_unique<llvm::SectionMemoryManager>(); });
      layer->registerJITEventListener(*perf);
      return std::unique_ptr<llvm::orc::ObjectLayer>(std::move(layer));
    });
  jit_ = take(builder.create(), "creating the JIT");
  // Kernels may call the C library's memset and memcpy (code generation may emit them).
  jit_->getMainJITDylib().addGenerator(
      take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix()),
           "resolving the process' symbols"));
}

Jit::~Jit() = default;

JitFunction Jit::add(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                     const std::string &function) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<llvm::TargetMachine> tm = hostMachine();
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple().str());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  llvm::Error parsed = pb.parsePassPipeline(mpm, kernelPipeline());
  DFLC_CHECK(!parsed) << "the kernels' pass pipeline: " << llvm::toString(std::move(parsed));
  mpm.run(*m, mam);

  JitFunction out;
  llvm::raw_string_ostream os(out.ir);
  m->print(os, nullptr);
  os.flush();
  // Each module's function gets a fresh symbol (one JIT holds many), after
  // the IR is printed: the text does not depend on the order of compiles.
  const std::string symbol = function + "." + std::to_string(symbols_++);
  m->getFunction(function)->setName(symbol);
  auto object = take(llvm::orc::SimpleCompiler(*tm)(*m), "compiling a module to machine code");
  {
    std::lock_guard<std::mutex> lock(link_);
    llvm::Error err = jit_->addObjectFile(std::move(object));
    DFLC_CHECK(!err) << "adding an object to the JIT: " + llvm::toString(std::move(err));
    out.address = take(jit_->lookup(symbol), "looking up a JIT-compiled function").getAddress();
  }
  m.reset();
  ctx.reset();
  out.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

CompiledKernel Jit::compile(const KernelPlan &plan, const KernelOptions &options) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  KernelCode code = generateKernel(plan, *ctx, options);
  JitFunction f = add(std::move(code.module), std::move(ctx), code.function);
  return compiledKernel(code, f.address, std::move(f.ir), f.compileMs);
}

KernelCache::KernelCache(int threads) : maxThreads_(static_cast<size_t>(std::max(threads, 0))) {}

KernelCache::~KernelCache() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread &t : threads_)
    t.join();
}

KernelCache::Ticket KernelCache::ticket(const KernelPlan &plan, const KernelOptions &options) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  Ticket t;
  t.code = generateKernel(plan, *ctx, options);
  t.layer = plan.layer;
  std::unique_ptr<llvm::Module> m = std::move(t.code.module);   // dies before ctx unless kept
  // The key: the module's text under one name for every layer.
  m->setModuleIdentifier("kernel");
  m->setSourceFileName("kernel");
  std::string key;
  llvm::raw_string_ostream os(key);
  m->print(os, nullptr);
  os.flush();
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<Entry> &e = entries_[std::move(key)];
  if (!e) {
    e = std::make_unique<Entry>();
    e->module = std::move(m);
    e->ctx = std::move(ctx);
    e->function = t.code.function;
    e->owner = plan.layer;
  }
  t.entry = e.get();
  return t;
}

size_t KernelCache::prefetch(const KernelPlan &plan, const KernelOptions &options) {
  Ticket t = ticket(plan, options);
  Entry &e = *t.entry;
  std::unique_lock<std::mutex> lock(mutex_);
  tickets_.push_back(std::move(t));
  const size_t id = tickets_.size() - 1;
  if (maxThreads_ == 0 || e.queued)
    return id;
  e.queued = true;
  queue_.push_back(&e);
  // No more threads than kernels queued.
  if (threads_.size() < maxThreads_ && threads_.size() < queue_.size())
    threads_.emplace_back([this] { work(); });
  lock.unlock();
  changed_.notify_all();
  return id;
}

void KernelCache::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || queueHead_ < queue_.size(); });
    if (stopping_)
      return;
    compile(*queue_[queueHead_++], lock);
  }
}

void KernelCache::compile(Entry &e, std::unique_lock<std::mutex> &lock) {
  lock.unlock();
  JitFunction f = jit_.add(std::move(e.module), std::move(e.ctx), e.function);
  lock.lock();
  e.compiled = std::move(f);
  e.done = true;
  changed_.notify_all();
}

CompiledKernel KernelCache::get(size_t ticket) {
  const Ticket *t = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    t = &tickets_.at(ticket);   // a deque's elements stay where they are
  }
  return get(*t);
}

CompiledKernel KernelCache::get(const KernelPlan &plan, const KernelOptions &options) {
  return get(ticket(plan, options));
}

CompiledKernel KernelCache::get(const Ticket &t) {
  Entry &e = *t.entry;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!e.queued) {   // not prefetched: compiled here
    e.queued = true;
    compile(e, lock);
  }
  changed_.wait(lock, [&] { return e.done; });
  const bool owns = !e.taken && t.layer == e.owner;
  CompiledKernel out = compiledKernel(t.code, e.compiled.address, renamedModule(e.compiled.ir, t.layer),
                                      owns ? e.compiled.compileMs : 0);
  out.shared = !owns;
  e.taken = e.taken || owns;
  return out;
}

int defaultCompileThreads() {
  cpu_set_t cpus;   // as dflc sweep's --jobs
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
}

} // namespace dfl::sim
