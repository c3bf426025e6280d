// LCUs from the dependence relations: isl AST, C text, LLVM IR (backend/lcu/Lcu.h).
#include "backend/lcu/Lcu.h"

#include "backend/Jit.h"
#include "backend/polyhedral/DependencesImpl.h"

#include <llvm/ExecutionEngine/JITSymbol.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>

namespace dfl::sim {
namespace {

/// What one step of the AST does, riding on its user node (isl frees it with the node).
struct StepCalls {
  struct Wait {
    int64_t counter;
    isl::AstExpr value;
    std::string why;
  };
  std::vector<Wait> waits;
  isl::AstExpr step;
};

/// A total function on the region's steps: the map's value where it has
/// one, else 0 (no wait).
isl::PwAff orZero(const PipelineDependences::Impl &m, int r, const isl::Map &value) {
  const isl::Set &domain = m.region[static_cast<size_t>(r)].domain;
  isl::Map zero = isl::intersectDomain(isl::readMap(m.ctx, "{ " + m.tuple(r) + " -> [0] }"), domain);
  isl::Map total = isl::unite(isl::intersectDomain(value, domain), zero);
  isl::PwMultiAff f(isl_map_lexmax_pw_multi_aff(total.release()));
  return isl::check(isl::PwAff(isl_pw_multi_aff_get_pw_aff(f.get(), 0)), "a wait as a function");
}

/// What a step of region r waits for, as functions of the step.
struct WaitFunction {
  int64_t counter;
  isl::PwAff value;
  std::string why;
};

std::vector<WaitFunction> waitsOf(const PipelineDependences::Impl &m, int r, const LcuOptions &options) {
  std::vector<WaitFunction> out;
  for (size_t e = 0; e < m.edges.size(); ++e) {
    const EdgeDependences &ed = m.edges[e];
    const std::string &from = m.regions[static_cast<size_t>(ed.producer)].layer,
                      &to = m.regions[static_cast<size_t>(ed.consumer)].layer;
    if (ed.consumer == r) {
      // RAW: the producer has finished every step up to raw(j), i.e. raw(j) + 1 steps.
      int64_t done = options.weakenedEdge == static_cast<int>(e) ? 0 : 1;
      isl::Map v = isl::applyRange(m.edge[e].raw, m.linear(ed.producer, done));
      out.push_back({static_cast<int64_t>(2 * e), orZero(m, r, v), "RAW " + from + " -> " + to + ": " + from + "'s steps done"});
    }
    if (ed.producer == r) {
      // WAR: step i overwrites step i − slots' data; its readers up to war(i − slots) are done.
      isl::Map back = isl::intersectRange(isl::applyRange(m.linear(r, 0), isl::reverse(m.linear(r, ed.slots()))),
                                          m.region[static_cast<size_t>(r)].domain);
      int64_t done = options.weakenedWarEdge == static_cast<int>(e) ? 0 : 1;
      isl::Map v = isl::applyRange(isl::applyRange(back, m.edge[e].war), m.linear(ed.consumer, done));
      out.push_back({static_cast<int64_t>(2 * e + 1), orZero(m, r, v),
                     "WAR " + from + " -> " + to + ": " + to + "'s steps done (buffer of " + std::to_string(ed.slots()) +
                         " steps)"});
    }
  }
  return out;
}

struct BuildState {
  const PipelineDependences::Impl *m;
  int region;
  const std::vector<WaitFunction> *waits;
  isl::PwAff step;
};

isl::AstExpr exprAt(isl_ast_build *build, const isl::PwAff &f) {
  // The build's iterators in terms of the step: pull the function back onto them (as PPCG does).
  isl::Map schedule(isl_map_from_union_map(isl_ast_build_get_schedule(build)));
  isl::PwMultiAff iterators(isl_pw_multi_aff_from_map(isl_map_reverse(schedule.release())));
  isl::PwAff at(isl_pw_aff_pullback_pw_multi_aff(f.copy(), iterators.release()));
  return isl::check(isl::AstExpr(isl_ast_build_expr_from_pw_aff(build, at.release())), "an AST expression");
}

isl_ast_node *annotate(isl_ast_node *node, isl_ast_build *build, void *user) {
  const BuildState &s = *static_cast<const BuildState *>(user);
  auto *calls = new StepCalls;
  for (const WaitFunction &w : *s.waits)
    calls->waits.push_back({w.counter, exprAt(build, w.value), w.why});
  calls->step = exprAt(build, s.step);
  isl_id *id = isl_id_alloc(isl_ast_node_get_ctx(node), "step", calls);
  id = isl_id_set_free_user(id, [](void *p) { delete static_cast<StepCalls *>(p); });
  return isl_ast_node_set_annotation(node, id);
}

const StepCalls &callsOf(isl_ast_node *node) {
  isl_id *id = isl_ast_node_get_annotation(node);
  const auto *calls = static_cast<const StepCalls *>(isl_id_get_user(id));
  isl_id_free(id);
  return *calls;
}

/// A wait whose value is the constant 0 always holds: neither printed nor lowered.
bool alwaysMet(const StepCalls::Wait &w) {
  if (isl_ast_expr_get_type(w.value.get()) != isl_ast_expr_int)
    return false;
  isl_val *v = isl_ast_expr_int_get_val(w.value.get());
  bool zero = isl_val_is_zero(v) == isl_bool_true;
  isl_val_free(v);
  return zero;
}

isl_printer *printStep(isl_printer *p, isl_ast_print_options *options, isl_ast_node *node, void *) {
  const StepCalls &calls = callsOf(node);
  auto line = [&](const std::string &text, isl_ast_expr *e, const std::string &tail) {
    p = isl_printer_start_line(p);
    p = isl_printer_print_str(p, text.c_str());
    p = isl_printer_print_ast_expr(p, e);
    p = isl_printer_print_str(p, tail.c_str());
    p = isl_printer_end_line(p);
  };
  // isl prints a user node as one statement: several go in braces.
  bool block = std::any_of(calls.waits.begin(), calls.waits.end(), [](const StepCalls::Wait &w) { return !alwaysMet(w); });
  if (block) {
    p = isl_printer_start_line(p);
    p = isl_printer_print_str(p, "{");
    p = isl_printer_end_line(p);
    p = isl_printer_indent(p, 2);
  }
  for (const StepCalls::Wait &w : calls.waits)
    if (!alwaysMet(w))
      line("wait(ctx, " + std::to_string(w.counter) + ", ", w.value.get(), "); /* " + w.why + " */");
  line("step(ctx, ", calls.step.get(), ");");
  if (block) {
    p = isl_printer_indent(p, -2);
    p = isl_printer_start_line(p);
    p = isl_printer_print_str(p, "}");
    p = isl_printer_end_line(p);
  }
  isl_ast_print_options_free(options);
  return p;
}

// ---- lowering to LLVM IR (as Polly's IslNodeBuilder, for the few node and
// expression kinds an LCU has) --------------------------------------------------

class Lowering {
public:
  Lowering(llvm::Function *f, llvm::IRBuilder<> &b) : f_(f), b_(b), i64_(b.getInt64Ty()) {}

  void node(isl_ast_node *n) {
    switch (isl_ast_node_get_type(n)) {
    case isl_ast_node_for: forLoop(n); break;
    case isl_ast_node_if: ifNode(n); break;
    case isl_ast_node_block: {
      isl_ast_node_list *list = isl_ast_node_block_get_children(n);
      for (isl_size i = 0, k = isl_ast_node_list_n_ast_node(list); i < k; ++i) {
        isl::AstNode child(isl_ast_node_list_get_ast_node(list, i));
        node(child.get());
      }
      isl_ast_node_list_free(list);
      break;
    }
    case isl_ast_node_mark: {
      isl::AstNode body(isl_ast_node_mark_get_node(n));
      node(body.get());
      break;
    }
    case isl_ast_node_user: user(n); break;
    default: DFLC_CHECK(false) << "an LCU's AST has an unexpected node";
    }
  }

private:
  llvm::Function *f_;
  llvm::IRBuilder<> &b_;
  llvm::Type *i64_;
  std::map<std::string, llvm::Value *> iterators_;   // name -> its alloca

  llvm::Value *slot(isl_ast_expr *iterator) {
    isl_id *id = isl_ast_expr_id_get_id(iterator);
    std::string name = isl_id_get_name(id);
    isl_id_free(id);
    llvm::Value *&v = iterators_[name];
    if (!v) {
      llvm::IRBuilder<> entry(&f_->getEntryBlock(), f_->getEntryBlock().begin());
      v = entry.CreateAlloca(i64_, nullptr, name);
    }
    return v;
  }

  llvm::Value *expr(isl_ast_expr *e) {
    switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_int: {
      isl_val *v = isl_ast_expr_int_get_val(e);
      int64_t x = isl_val_get_num_si(v);
      isl_val_free(v);
      return b_.getInt64(static_cast<uint64_t>(x));
    }
    case isl_ast_expr_id: return b_.CreateLoad(i64_, slot(e));
    case isl_ast_expr_op: return op(e);
    default: DFLC_CHECK(false) << "an LCU's AST has an unexpected expression"; return nullptr;
    }
  }

  llvm::Value *bool64(llvm::Value *i1) { return b_.CreateZExt(i1, i64_); }
  llvm::Value *truth(llvm::Value *v) { return b_.CreateICmpNE(v, b_.getInt64(0)); }

  llvm::Value *op(isl_ast_expr *e) {
    isl_size n = isl_ast_expr_op_get_n_arg(e);
    std::vector<llvm::Value *> a;
    for (isl_size i = 0; i < n; ++i) {
      isl::AstExpr arg(isl_ast_expr_op_get_arg(e, i));
      a.push_back(expr(arg.get()));
    }
    switch (isl_ast_expr_op_get_type(e)) {
    case isl_ast_expr_op_and:
    case isl_ast_expr_op_and_then: return bool64(b_.CreateAnd(truth(a[0]), truth(a[1])));
    case isl_ast_expr_op_or:
    case isl_ast_expr_op_or_else: return bool64(b_.CreateOr(truth(a[0]), truth(a[1])));
    case isl_ast_expr_op_max:
    case isl_ast_expr_op_min: {
      bool max = isl_ast_expr_op_get_type(e) == isl_ast_expr_op_max;
      llvm::Value *v = a[0];
      for (size_t i = 1; i < a.size(); ++i)
        v = b_.CreateSelect(max ? b_.CreateICmpSGT(a[i], v) : b_.CreateICmpSLT(a[i], v), a[i], v);
      return v;
    }
    case isl_ast_expr_op_minus: return b_.CreateNeg(a[0]);
    case isl_ast_expr_op_add: return b_.CreateAdd(a[0], a[1]);
    case isl_ast_expr_op_sub: return b_.CreateSub(a[0], a[1]);
    case isl_ast_expr_op_mul: return b_.CreateMul(a[0], a[1]);
    case isl_ast_expr_op_div:
    case isl_ast_expr_op_pdiv_q: return b_.CreateSDiv(a[0], a[1]);
    case isl_ast_expr_op_pdiv_r:
    case isl_ast_expr_op_zdiv_r: return b_.CreateSRem(a[0], a[1]);
    case isl_ast_expr_op_fdiv_q: {
      // Towards −∞: the truncated quotient, one less where the remainder's sign differs from the divisor's.
      llvm::Value *q = b_.CreateSDiv(a[0], a[1]), *r = b_.CreateSRem(a[0], a[1]);
      llvm::Value *adjust = b_.CreateAnd(truth(r), b_.CreateICmpSLT(b_.CreateXor(r, a[1]), b_.getInt64(0)));
      return b_.CreateSub(q, bool64(adjust));
    }
    case isl_ast_expr_op_cond:
    case isl_ast_expr_op_select: return b_.CreateSelect(truth(a[0]), a[1], a[2]);
    case isl_ast_expr_op_eq: return bool64(b_.CreateICmpEQ(a[0], a[1]));
    case isl_ast_expr_op_le: return bool64(b_.CreateICmpSLE(a[0], a[1]));
    case isl_ast_expr_op_lt: return bool64(b_.CreateICmpSLT(a[0], a[1]));
    case isl_ast_expr_op_ge: return bool64(b_.CreateICmpSGE(a[0], a[1]));
    case isl_ast_expr_op_gt: return bool64(b_.CreateICmpSGT(a[0], a[1]));
    default: DFLC_CHECK(false) << "an LCU's AST has an unexpected operator"; return nullptr;
    }
  }

  void forLoop(isl_ast_node *n) {
    isl::AstExpr iterator(isl_ast_node_for_get_iterator(n)), init(isl_ast_node_for_get_init(n));
    isl::AstNode body(isl_ast_node_for_get_body(n));
    llvm::Value *i = slot(iterator.get());
    b_.CreateStore(expr(init.get()), i);
    if (isl_ast_node_for_is_degenerate(n) == isl_bool_true) {
      node(body.get());
      return;
    }
    isl::AstExpr cond(isl_ast_node_for_get_cond(n)), inc(isl_ast_node_for_get_inc(n));
    llvm::LLVMContext &ctx = b_.getContext();
    auto *head = llvm::BasicBlock::Create(ctx, "for.cond", f_), *loop = llvm::BasicBlock::Create(ctx, "for.body", f_),
         *exit = llvm::BasicBlock::Create(ctx, "for.end", f_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    b_.CreateCondBr(truth(expr(cond.get())), loop, exit);
    b_.SetInsertPoint(loop);
    node(body.get());
    b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64_, i), expr(inc.get())), i);
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
  }

  void ifNode(isl_ast_node *n) {
    isl::AstExpr cond(isl_ast_node_if_get_cond(n));
    isl::AstNode then(isl_ast_node_if_get_then_node(n));
    llvm::LLVMContext &ctx = b_.getContext();
    auto *yes = llvm::BasicBlock::Create(ctx, "if.then", f_), *no = llvm::BasicBlock::Create(ctx, "if.else", f_),
         *end = llvm::BasicBlock::Create(ctx, "if.end", f_);
    b_.CreateCondBr(truth(expr(cond.get())), yes, no);
    b_.SetInsertPoint(yes);
    node(then.get());
    b_.CreateBr(end);
    b_.SetInsertPoint(no);
    if (isl_ast_node_if_has_else_node(n) == isl_bool_true) {
      isl::AstNode otherwise(isl_ast_node_if_get_else_node(n));
      node(otherwise.get());
    }
    b_.CreateBr(end);
    b_.SetInsertPoint(end);
  }

  void user(isl_ast_node *n) {
    const StepCalls &calls = callsOf(n);
    llvm::Argument *ctx = f_->getArg(0), *wait = f_->getArg(1), *step = f_->getArg(2);
    auto *ptr = b_.getInt8PtrTy();
    auto *waitTy = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64_, i64_}, false);
    auto *stepTy = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64_}, false);
    for (const StepCalls::Wait &w : calls.waits)
      if (!alwaysMet(w))
        b_.CreateCall(waitTy, wait, {ctx, b_.getInt64(static_cast<uint64_t>(w.counter)), expr(w.value.get())});
    b_.CreateCall(stepTy, step, {ctx, expr(calls.step.get())});
  }
};

} // namespace

struct Lcu::Impl {
  const PipelineDependences::Impl *deps;
  int region;
  std::string function;
  isl::AstNode ast;
};

Lcu::Lcu(const PipelineDependences &deps, int region, const LcuOptions &options) : impl_(std::make_unique<Impl>()) {
  const PipelineDependences::Impl &m = deps.impl();
  impl_->deps = &m;
  impl_->region = region;
  impl_->function = "lcu_" + m.regions.at(static_cast<size_t>(region)).layer;
  isl_options_set_ast_iterator_type(m.ctx.get(), "int64_t");
  std::vector<WaitFunction> waits = waitsOf(m, region, options);
  isl::Map linear = m.linear(region, 0);
  BuildState state{&m, region, &waits, orZero(m, region, linear)};

  // The steps in lexicographic order: the identity schedule on the step domain.
  std::string tuple = m.tuple(region);
  isl::Map schedule = isl::intersectDomain(isl::readMap(m.ctx, "{ " + tuple + " -> " + tuple.substr(tuple.find('[')) + " }"),
                                           m.region[static_cast<size_t>(region)].domain);
  isl_ast_build *build = isl_ast_build_alloc(m.ctx.get());
  build = isl_ast_build_set_at_each_domain(build, annotate, &state);
  impl_->ast = isl::check(
      isl::AstNode(isl_ast_build_node_from_schedule_map(build, isl_union_map_from_map(schedule.release()))),
      "building an LCU's AST");
  isl_ast_build_free(build);
  isl::checkLimit(m.ctx, "building the LCU of " + m.regions.at(static_cast<size_t>(region)).layer);
}

Lcu::~Lcu() = default;

const std::string &Lcu::function() const { return impl_->function; }

std::string Lcu::c() const {
  const PipelineDependences::Impl &m = *impl_->deps;
  isl_ctx *ctx = m.ctx.get();
  isl_printer *p = isl_printer_to_str(ctx);
  p = isl_printer_set_output_format(p, ISL_FORMAT_C);
  p = isl_printer_print_str(p, ("/* The local control unit of region '" + m.regions[static_cast<size_t>(impl_->region)].layer +
                                "', generated by dflc from its\n * RAW and WAR relations with isl's AST builder "
                                "(docs/simulator.md, \"Pipelines\"; docs/cm.md, \"Control\").\n * Counter 2e: steps edge e's producer has "
                                "finished; 2e+1: steps its consumer has.\n * wait() blocks until the counter reaches the "
                                "value; step() runs a step and signals. */\n")
                                   .c_str());
  p = isl_printer_print_str(p, "#include <stdint.h>\n\n");
  p = isl_ast_node_print_macros(impl_->ast.get(), p);
  p = isl_printer_print_str(p, ("\nvoid " + impl_->function +
                                "(void *ctx, void (*wait)(void *, int64_t, int64_t), void (*step)(void *, int64_t))\n{\n")
                                   .c_str());
  p = isl_printer_indent(p, 2);
  isl_ast_print_options *options = isl_ast_print_options_alloc(ctx);
  options = isl_ast_print_options_set_print_user(options, printStep, nullptr);
  p = isl_ast_node_print(impl_->ast.get(), p, options);
  p = isl_printer_indent(p, -2);
  p = isl_printer_print_str(p, "}\n");
  char *s = isl_printer_get_str(p);
  std::string out = s ? s : "";
  std::free(s);
  isl_printer_free(p);
  return out;
}

std::unique_ptr<llvm::Module> Lcu::module(llvm::LLVMContext &ctx) const {
  auto mod = std::make_unique<llvm::Module>(impl_->function, ctx);
  llvm::IRBuilder<> b(ctx);
  auto *ptr = b.getInt8PtrTy();
  auto *i64 = b.getInt64Ty();
  auto *waitTy = llvm::FunctionType::get(b.getVoidTy(), {ptr, i64, i64}, false);
  auto *stepTy = llvm::FunctionType::get(b.getVoidTy(), {ptr, i64}, false);
  auto *fnTy = llvm::FunctionType::get(b.getVoidTy(), {ptr, waitTy->getPointerTo(), stepTy->getPointerTo()}, false);
  llvm::Function *f = llvm::Function::Create(fnTy, llvm::Function::ExternalLinkage, impl_->function, *mod);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
  Lowering(f, b).node(impl_->ast.get());
  b.CreateRetVoid();
  std::string err;
  llvm::raw_string_ostream os(err);
  DFLC_CHECK(!llvm::verifyModule(*mod, &os)) << "an LCU's IR does not verify: " << os.str();
  return mod;
}

LcuFn Lcu::compile(Jit &jit, double *compileMs) const {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = module(*ctx);
  JitFunction f = jit.add(std::move(m), std::move(ctx), impl_->function);
  if (compileMs)
    *compileMs = f.compileMs;
  return llvm::jitTargetAddressToFunction<LcuFn>(f.address);
}

} // namespace dfl::sim
