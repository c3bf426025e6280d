// The kernel JIT (backend/Jit.h).
#include "backend/Jit.h"

#include "support/Check.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <mutex>

namespace dfl::sim {
namespace {

template <class T> T take(llvm::Expected<T> e, const char *what) {
  if (!e) {
    DFLC_CHECK(false) << what << ": " << llvm::toString(e.takeError());
  }
  return std::move(*e);
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
  jit_ = take(llvm::orc::LLJITBuilder().create(), "creating the JIT");
  // Kernels call the C library's memset and memcpy (loop idioms -O2 recognizes).
  jit_->getMainJITDylib().addGenerator(
      take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix()),
           "resolving the process' symbols"));
  auto jtmb = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  jtmb.setCodeGenOptLevel(llvm::CodeGenOpt::Default);
  tm_ = take(jtmb.createTargetMachine(), "creating the target machine");
}

Jit::~Jit() = default;

JitFunction Jit::add(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                     const std::string &function) {
  auto start = std::chrono::steady_clock::now();
  // Each module's function gets a fresh symbol: one JIT holds many.
  std::string symbol = function + std::to_string(kernels_++);
  m->getFunction(function)->setName(symbol);
  m->setDataLayout(tm_->createDataLayout());
  m->setTargetTriple(tm_->getTargetTriple().str());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm_.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(*m, mam);

  JitFunction out;
  llvm::raw_string_ostream os(out.ir);
  m->print(os, nullptr);
  os.flush();
  llvm::Error err = jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)));
  DFLC_CHECK(!err) << "adding a module to the JIT: " + llvm::toString(std::move(err));
  auto sym = take(jit_->lookup(symbol), "looking up a JIT-compiled function");
  out.address = sym.getAddress();
  out.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

CompiledKernel Jit::compile(const KernelPlan &plan, const KernelOptions &options) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  KernelCode code = generateKernel(plan, *ctx, options);
  JitFunction f = add(std::move(code.module), std::move(ctx), code.function);
  CompiledKernel out;
  out.slots = code.slots;
  out.counters = code.counters;
  out.tensorSlot = code.tensorSlot;
  out.inputs = code.inputs;
  out.counterSlot = code.counterSlot;
  out.ir = std::move(f.ir);
  out.fn = llvm::jitTargetAddressToFunction<KernelFn>(f.address);
  out.compileMs = f.compileMs;
  return out;
}

} // namespace dfl::sim
