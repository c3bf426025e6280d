// Smoke test for LLVM 14 ORC: build IR with IRBuilder, JIT it with LLJIT, call.
#include <llvm/ExecutionEngine/JITSymbol.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

namespace {

// Builds `i64 madd(i64 a, i64 b, i64 c) { return a * b + c; }`.
std::unique_ptr<llvm::Module> buildMadd(llvm::LLVMContext &ctx) {
  auto module = std::make_unique<llvm::Module>("smoke", ctx);
  llvm::IRBuilder<> builder(ctx);
  llvm::Type *i64 = builder.getInt64Ty();
  auto *type = llvm::FunctionType::get(i64, {i64, i64, i64}, /*isVarArg=*/false);
  auto *fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                    "madd", *module);
  llvm::Argument *a = fn->getArg(0);
  llvm::Argument *b = fn->getArg(1);
  llvm::Argument *c = fn->getArg(2);
  a->setName("a");
  b->setName("b");
  c->setName("c");
  builder.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value *product = builder.CreateMul(a, b, "product");
  builder.CreateRet(builder.CreateAdd(product, c, "sum"));
  return module;
}

}  // namespace

TEST(OrcJitSmokeTest, JitCompilesAndRunsMadd) {
  ASSERT_FALSE(llvm::InitializeNativeTarget());
  ASSERT_FALSE(llvm::InitializeNativeTargetAsmPrinter());

  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module = buildMadd(*ctx);
  std::string verifyErrors;
  llvm::raw_string_ostream verifyStream(verifyErrors);
  ASSERT_FALSE(llvm::verifyModule(*module, &verifyStream)) << verifyStream.str();

  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().create();
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());

  llvm::Error added = (*jit)->addIRModule(
      llvm::orc::ThreadSafeModule(std::move(module), std::move(ctx)));
  ASSERT_FALSE(static_cast<bool>(added)) << llvm::toString(std::move(added));

  llvm::Expected<llvm::JITEvaluatedSymbol> symbol = (*jit)->lookup("madd");
  ASSERT_TRUE(static_cast<bool>(symbol)) << llvm::toString(symbol.takeError());
  ASSERT_NE(symbol->getAddress(), 0u);

  using MaddFn = std::int64_t (*)(std::int64_t, std::int64_t, std::int64_t);
  auto madd = llvm::jitTargetAddressToFunction<MaddFn>(symbol->getAddress());

  EXPECT_EQ(madd(6, 7, 8), 50);        // 6*7 + 8 = 42 + 8 = 50
  EXPECT_EQ(madd(-3, 5, 100), 85);     // -15 + 100 = 85
  EXPECT_EQ(madd(1 << 20, 1 << 20, -1),
            (std::int64_t{1} << 40) - 1);  // 2^40 - 1: needs 64-bit multiply

  // A symbol that was never defined must not resolve.
  llvm::Expected<llvm::JITEvaluatedSymbol> missing = (*jit)->lookup("nope");
  EXPECT_FALSE(static_cast<bool>(missing));
  if (!missing) llvm::consumeError(missing.takeError());
}
