// The kernel generator (backend/KernelCodegen.h). The generated code keeps,
// per unit of every on-chip level and per role, a buffer of the tile's real
// words laid out from the tile's real lower corner, and a state record
// (valid, real box, the step its residency began). Counting follows
// docs/directives.md §6 operationally: a unit fills a tile that differs from
// the one it holds (keeping the overlap on a sliding step of its innermost
// relevant loop); stacked units that can share a read count one read per word
// per step (a stamp per parent word); a partial-sum residency ends with a
// write-back that adds into the parent and counts a partial-sum read when the
// parent has seen the word before (a bit per parent and output word).
#include "backend/KernelCodegen.h"

#include "support/Check.h"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

namespace dfl::sim {
namespace {

using llvm::Value;
using Box = std::vector<Value *>;   // one value per role dim

size_t idx(TensorRole r) { return static_cast<size_t>(r); }
size_t idx(Dim d) { return static_cast<size_t>(d); }

class Codegen {
public:
  Codegen(const KernelPlan &plan, llvm::LLVMContext &ctx, const KernelOptions &options)
      : p_(plan), ctx_(ctx), b_(ctx), fault_(options.fault), counters_(options.counters),
        unclippedSteps_(options.unclippedSteps), unclipped_(unclippedEnds(plan)) {}

  KernelCode run() {
    code_.module = std::make_unique<llvm::Module>(p_.layer, ctx_);
    code_.function = "kernel";
    layoutSlots();
    makeScopes();
    i8_ = b_.getInt8Ty(), i32_ = b_.getInt32Ty(), i64_ = b_.getInt64Ty();
    slotsTy_ = i8_->getPointerTo()->getPointerTo();
    // Evictions first: the kernel calls them.
    for (size_t l = 0; l < p_.levels.size(); ++l)
      evictFns_.push_back(llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), {slotsTy_, i64_}, false),
                                                 llvm::Function::InternalLinkage,
                                                 "evict_" + p_.levels[l].name, *code_.module));
    // Called at every residency change and at the end: one copy, not one per call.
    for (llvm::Function *f : evictFns_)
      f->addFnAttr(llvm::Attribute::NoInline);
    for (size_t l = 0; l < p_.levels.size(); ++l)
      emitEvict(l);
    emitKernel();
    std::string err;
    llvm::raw_string_ostream os(err);
    DFLC_CHECK(!llvm::verifyModule(*code_.module, &os)) << "generated kernel does not verify: " + os.str();
    return std::move(code_);
  }

private:
  // ---- slots ---------------------------------------------------------------------------
  size_t nOn() const { return p_.levels.size(); }
  /// Per level and dim, which ends of its tiles' boxes need no clipping:
  /// the lower where no move along the dim, at this level or above, is
  /// negative (a box then starts at its origin, never before its parent's);
  /// the upper where, besides, every tile the level places along the dim
  /// ends inside its parent's extent (the stacks' and updates' reach), the
  /// parent's upper end itself never clipped (from the layer's bounds in).
  /// Clipping those ends is left out even at the steps that clip: a kernel
  /// below KernelOptions::unclippedSteps runs only those.
  struct Unclipped {
    bool lo = false, hi = false;
  };
  static std::vector<std::array<Unclipped, kNumDims>> unclippedEnds(const KernelPlan &p) {
    std::vector<std::array<Unclipped, kNumDims>> ends(p.levels.size());
    for (size_t d = 0; d < kNumDims; ++d) {
      bool lo = d != idx(Dim::Xi) && d != idx(Dim::Yi), hi = lo;
      int64_t parent = p.bounds[d];
      for (size_t l = p.levels.size(); l-- > 0;) {
        const PlanLevel &pl = p.levels[l];
        int64_t reach = pl.extent[d];
        for (const std::vector<PlanMove> *moves : {&pl.updates, &pl.stacks})
          for (const PlanMove &m : *moves) {
            lo = lo && m.amount[d] >= 0;
            reach += (m.count - 1) * m.amount[d];
          }
        hi = hi && lo && reach <= parent;
        ends[l][d] = {lo, hi};
        parent = pl.extent[d];
      }
    }
    return ends;
  }
  size_t dimsOf(TensorRole r) const { return p_.role(r).dims.size(); }
  int64_t parentUnits(size_t l) const { return l + 1 == nOn() ? 1 : p_.levels[l + 1].units; }
  int64_t ops(TensorRole r) const { return p_.role(r).operands(); }
  /// Bypass (docs/directives.md §6): a level that does not hold r keeps its
  /// words only as a staging copy, uncounted; the fills and write-backs of a
  /// level that holds r are counted at the level holding r above it.
  bool stores(size_t l, TensorRole r) const { return p_.levels[l].holds[idx(r)]; }
  size_t holder(size_t l, TensorRole r) const { return p_.levels[l].holder[idx(r)]; }
  /// Words of one unit's buffer of role r at level l (all operands).
  int64_t bufferWords(size_t l, TensorRole r) const { return p_.levels[l].bufferWords(r, ops(r)); }
  /// The words a level-l unit's parent holds of role r, all units: for the
  /// outermost level every DRAM tensor of the role, one after the other.
  int64_t parentWords(size_t l, TensorRole r) const {
    if (l + 1 < nOn())
      return product(p_.levels[l + 1].units, bufferWords(l + 1, r));
    int64_t words = 0;
    for (const PlanSource &src : p_.role(r).sources)
      words = std::min(kHuge, words + src.words());
    return words;
  }
  int64_t outputPoints() const {
    int64_t n = 1;
    for (Dim d : p_.role(p_.output).dims)
      n = product(n, at(p_.bounds, d));
    return n;
  }
  /// Array sizes saturate: a kernel too large to allocate is refused by its
  /// size (kernelBytes) before it runs, and must not wrap around first.
  static constexpr int64_t kHuge = int64_t{1} << 56;
  static int64_t product(int64_t a, int64_t b) {
    return static_cast<double>(a) * static_cast<double>(b) >= static_cast<double>(kHuge) ? kHuge : a * b;
  }

  /// Whether level l's steps (its step counter's last value: its updates'
  /// trips times those of every level above and their units) are below
  /// 2^31: its stamps are then 32-bit words, half the memory and traffic of
  /// 64-bit ones, and still equal a step only where that step wrote them.
  bool stepsFit32(size_t l) const { return steps(l) < 2147483648.0; }
  /// Level l's steps in all: its updates' trips times those of every level
  /// above and their units.
  double steps(size_t l) const {
    double n = 1;
    for (size_t m = l; m < nOn(); ++m) {
      for (const PlanMove &u : p_.levels[m].updates)
        n *= static_cast<double>(u.count);
      if (m > l)
        n *= static_cast<double>(p_.levels[m].unitsPerParent);
    }
    return n;
  }
  /// A step (i64) as level l's stamps of role r store it.
  Value *stamp(size_t l, TensorRole r, Value *step) {
    return code_.slots[static_cast<size_t>(stamps_[l][idx(r)])].bytes == 4 ? b_.CreateTrunc(step, i32_) : step;
  }

  int addSlot(std::string name, int64_t elements, int bytes, int64_t init = 0) {
    code_.slots.push_back({std::move(name), elements, bytes, init});
    return static_cast<int>(code_.slots.size() - 1);
  }

  /// The role whose concatenated DRAM tensors include `slot`: those the
  /// kernel reads through a table of operands (fromConcatenated).
  std::optional<TensorRole> tabledRole(int slot) const {
    for (const PlanRole &r : p_.roles)
      if (r.present && r.concatenated() && r.role != p_.output) {
        const std::vector<int> &s = sourceSlot_[idx(r.role)];
        if (slot >= s.front() && slot <= s.back())
          return r.role;
      }
    return std::nullopt;
  }

  void layoutSlots() {
    code_.counters.levels = nOn() + 1;
    for (const PlanRole &r : p_.roles)
      if (r.present)
        code_.counters.firstSource[idx(r.role)] = code_.counters.sources, code_.counters.sources += r.sources.size();
    code_.counterSlot = addSlot("counters", static_cast<int64_t>(code_.counters.size()), 8);
    stepSlot_ = addSlot("steps", static_cast<int64_t>(nOn()), 8);
    for (const PlanRole &r : p_.roles) {
      if (!r.present)
        continue;
      int64_t base = 0;
      for (const PlanSource &src : r.sources) {
        sourceBase_[idx(r.role)].push_back(base);
        base += src.words();
        // Named by level and role, not by tensor: layers of one plan
        // generate the same IR (KernelCache shares their function).
        std::string name = p_.outermost + "." + roleName(r.role);
        if (r.sources.size() > 1)
          name += std::to_string(sourceSlot_[idx(r.role)].size());
        sourceSlot_[idx(r.role)].push_back(addSlot(name, src.words(), 4, r.role == p_.output ? p_.identity : 0));
        if (r.role != p_.output)
          code_.inputs.emplace_back(src.tensor, sourceSlot_[idx(r.role)].back());
      }
      code_.tensorSlot[idx(r.role)] = sourceSlot_[idx(r.role)][0];
    }
    buffer_.assign(nOn(), {-1, -1, -1}), state_ = buffer_, stamps_ = buffer_;
    stateCode_.assign(nOn(), {});
    visited_.assign(nOn(), -1);
    for (size_t l = 0; l < nOn(); ++l) {
      const PlanLevel &pl = p_.levels[l];
      for (const PlanRole &r : p_.roles) {
        if (!r.present)
          continue;
        std::string at = pl.name + "." + roleName(r.role);
        buffer_[l][idx(r.role)] = addSlot(at, product(pl.units, bufferWords(l, r.role)), 4);
        stateCode_[l][idx(r.role)] = stateCode(l, r.role);
        state_[l][idx(r.role)] = addSlot(at + ".state", product(pl.units, stateWords(l, r.role)),
                                         stateFits32(l, r.role) ? 4 : 8);
        bool stamped = r.role == p_.output ? pl.reduceOutputs : pl.serveCopies;
        if (stamped)
          stamps_[l][idx(r.role)] = addSlot(at + ".stamps", parentWords(l, r.role), stepsFit32(l) ? 4 : 8);
      }
      visited_[l] = addSlot(pl.name + ".visited", (product(parentUnits(l), outputPoints()) + 7) / 8, 1);
    }
  }

  // ---- IR helpers ------------------------------------------------------------------------
  Value *c(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  /// Loads every slot pointer at the function's entry, typed.
  void loadSlots(Value *slots) {
    ptrs_.clear();
    slots_ = slots;
    for (size_t i = 0; i < code_.slots.size(); ++i) {
      const KernelSlot &s = code_.slots[i];
      if (tabledRole(static_cast<int>(i))) {   // read through the operand table (fromConcatenated)
        ptrs_.push_back(nullptr);
        continue;
      }
      llvm::Type *elem = s.bytes == 8 ? i64_ : s.bytes == 4 ? i32_ : i8_;
      Value *raw = b_.CreateLoad(i8_->getPointerTo(), b_.CreateConstGEP1_64(i8_->getPointerTo(), slots, i));
      ptrs_.push_back(b_.CreateBitCast(raw, elem->getPointerTo(), s.name));
    }
  }
  Value *ptr(int slot) { return ptrs_.at(static_cast<size_t>(slot)); }
  Value *elem(int slot, Value *index) {
    const KernelSlot &s = code_.slots[static_cast<size_t>(slot)];
    llvm::Type *t = s.bytes == 8 ? i64_ : s.bytes == 4 ? i32_ : i8_;
    return b_.CreateInBoundsGEP(t, ptr(slot), index);
  }
  Value *load(int slot, Value *index) {
    const KernelSlot &s = code_.slots[static_cast<size_t>(slot)];
    return scoped(b_.CreateLoad(s.bytes == 8 ? i64_ : s.bytes == 4 ? i32_ : i8_, elem(slot, index)), slot);
  }
  void store(int slot, Value *index, Value *v) { scoped(b_.CreateStore(v, elem(slot, index)), slot); }
  /// Every slot is its own allocation: an access to one aliases no other
  /// (alias scopes, so that -O2 keeps values in registers across the stores
  /// to other buffers). The tensors a concatenation reads share one scope
  /// (they are only read, through one pointer): the metadata grows with the
  /// operands, not with their square.
  void makeScopes() {
    llvm::MDBuilder md(ctx_);
    llvm::MDNode *domain = md.createAnonymousAliasScopeDomain("slots");
    std::vector<size_t> group(code_.slots.size());
    std::vector<llvm::Metadata *> all;   // per group
    for (size_t j = 0; j < code_.slots.size(); ++j) {
      const int slot = static_cast<int>(j);
      if (auto r = tabledRole(slot); r && slot != sourceSlot_[idx(*r)][0]) {
        group[j] = group[static_cast<size_t>(sourceSlot_[idx(*r)][0])];
        continue;
      }
      group[j] = all.size();
      all.push_back(md.createAnonymousAliasScope(domain, code_.slots[j].name));
    }
    std::vector<std::pair<llvm::MDNode *, llvm::MDNode *>> byGroup;
    for (size_t g = 0; g < all.size(); ++g) {
      std::vector<llvm::Metadata *> others = all;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(g));
      byGroup.emplace_back(llvm::MDNode::get(ctx_, {all[g]}), llvm::MDNode::get(ctx_, others));
    }
    for (size_t j = 0; j < code_.slots.size(); ++j)
      scopes_.push_back(byGroup[group[j]]);
  }
  llvm::Instruction *scoped(llvm::Instruction *i, int slot) {
    const auto &[scope, noalias] = scopes_.at(static_cast<size_t>(slot));
    i->setMetadata(llvm::LLVMContext::MD_alias_scope, scope);
    i->setMetadata(llvm::LLVMContext::MD_noalias, noalias);
    return i;
  }
  /// A count of 1 where `cond` holds (i1), 0 elsewhere.
  Value *one(Value *cond) { return b_.CreateZExt(cond, i64_); }
  /// a or b, conditions that may be absent (nullptr: never holds).
  Value *either(Value *a, Value *b) { return a && b ? b_.CreateOr(a, b) : a ? a : b; }
  /// a and b, conditions that may be absent (nullptr: always holds).
  Value *both(Value *a, Value *b) { return a && b ? b_.CreateAnd(a, b) : a ? a : b; }
  void count(size_t level, TensorRole r, int kind, Value *n) { countAt(code_.counters.at(level, r, kind), n); }
  /// Counters accumulate in the function's locals (registers after -O2:
  /// no store per word that could alias a buffer) and are added to the
  /// counters slot when it returns.
  void countAt(size_t counter, Value *n) {
    if (!counters_)
      return;
    llvm::AllocaInst *&acc = accumulators_[counter];
    if (!acc) {
      llvm::BasicBlock &entry = b_.GetInsertBlock()->getParent()->getEntryBlock();
      llvm::IRBuilder<> at(&entry, entry.begin());
      acc = at.CreateAlloca(i64_);
      at.CreateStore(c(0), acc);
    }
    b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64_, acc), n), acc);
  }
  /// Returns from the function being emitted, its counts added first.
  void ret() {
    for (auto &[counter, acc] : accumulators_) {
      Value *i = c(static_cast<int64_t>(counter));
      store(code_.counterSlot, i, b_.CreateAdd(load(code_.counterSlot, i), b_.CreateLoad(i64_, acc)));
    }
    accumulators_.clear();
    b_.CreateRetVoid();
  }

  void forLoop(Value *lo, Value *hi, const std::function<void(Value *)> &body) {
    llvm::Function *fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *head = llvm::BasicBlock::Create(ctx_, "loop", fn);
    auto *bodyBB = llvm::BasicBlock::Create(ctx_, "body", fn);
    auto *exit = llvm::BasicBlock::Create(ctx_, "exit", fn);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode *iv = b_.CreatePHI(i64_, 2);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), bodyBB, exit);
    b_.SetInsertPoint(bodyBB);
    body(iv);
    iv->addIncoming(b_.CreateAdd(iv, c(1)), b_.GetInsertBlock());
    llvm::BranchInst *latch = b_.CreateBr(head);
    // Only the statement's loops are worth vectorizing and unrolling; the
    // others (fills, write-backs, the schedule's loops) would only cost
    // compile time and code.
    if (!hot_) {
      llvm::Metadata *ops[] = {
          nullptr,
          llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                                   llvm::ConstantAsMetadata::get(b_.getFalse())}),
          llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")})};
      llvm::MDNode *id = llvm::MDNode::getDistinct(ctx_, ops);
      id->replaceOperandWith(0, id);
      latch->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
    b_.SetInsertPoint(exit);
  }
  void ifThen(Value *cond, const std::function<void()> &then, const std::function<void()> &otherwise = {}) {
    llvm::Function *fn = b_.GetInsertBlock()->getParent();
    auto *thenBB = llvm::BasicBlock::Create(ctx_, "then", fn);
    auto *elseBB = otherwise ? llvm::BasicBlock::Create(ctx_, "else", fn) : nullptr;
    auto *join = llvm::BasicBlock::Create(ctx_, "join", fn);
    b_.CreateCondBr(cond, thenBB, elseBB ? elseBB : join);
    b_.SetInsertPoint(thenBB);
    then();
    b_.CreateBr(join);
    if (elseBB) {
      b_.SetInsertPoint(elseBB);
      otherwise();
      b_.CreateBr(join);
    }
    b_.SetInsertPoint(join);
  }
  /// Every point of a box [lo, hi) over `n` dims, the last fastest.
  void forBox(const Box &lo, const Box &hi, const std::function<void(const Box &)> &body, size_t d = 0,
              Box point = {}) {
    if (d == lo.size())
      return body(point);
    forLoop(lo[d], hi[d], [&](Value *iv) {
      Box next = point;
      next.push_back(iv);
      forBox(lo, hi, body, d + 1, next);
    });
  }
  Value *smax(Value *a, Value *b) { return b_.CreateSelect(b_.CreateICmpSGT(a, b), a, b); }
  Value *smin(Value *a, Value *b) { return b_.CreateSelect(b_.CreateICmpSLT(a, b), a, b); }
  Value *anyEmpty(const Box &lo, const Box &hi) {
    Value *e = b_.getFalse();
    for (size_t i = 0; i < lo.size(); ++i)
      e = b_.CreateOr(e, b_.CreateICmpSGE(lo[i], hi[i]));
    return e;
  }

  /// Row-major position of `point - lo` in a box of the given extents.
  Value *linear(const Box &point, const Box &lo, const std::vector<int64_t> &extent) {
    Value *at = c(0);
    for (size_t i = 0; i < point.size(); ++i)
      at = b_.CreateAdd(b_.CreateMul(at, c(extent[i])), b_.CreateSub(point[i], lo[i]));
    return at;
  }
  std::vector<int64_t> extentsAt(const DimVector &extent, TensorRole r) const {
    std::vector<int64_t> out;
    for (Dim d : p_.role(r).dims)
      out.push_back(at(extent, d));
    return out;
  }

  // ---- tiles -----------------------------------------------------------------------------
  /// A position of a level: its unit's origin (all nine dims) and the real
  /// box of its tile along the independent dims (docs/directives.md §4).
  struct Position {
    std::array<Value *, kNumDims> origin{};
    std::array<Value *, kNumDims> lo{}, hi{};
    /// false where the box is known to be the whole tile, unclipped by the
    /// enclosing boxes (emitLevel's interior steps): hi is lo + the extent,
    /// never empty, so that the code generated folds the boxes' arithmetic.
    bool clipped = true;
    size_t level = 0;   // the level whose tile it is
    Value *parentUnit = nullptr;   // the unit of the level above it is in
    /// Per role, the unit whose buffer and record of it the position's unit
    /// uses: its own, or where stacked units share them, the first's
    /// (emitLevel's Sharing); and the same of the unit above.
    std::array<Value *, kNumRoles> unitOf{}, parentUnitOf{};
  };
  /// Whether a box of a position is empty (never, where unclipped).
  Value *emptyAt(const Position &pos, const Box &lo, const Box &hi) {
    return pos.clipped ? anyEmpty(lo, hi) : b_.getFalse();
  }

  /// The real box of role r at a position: along an input window, the window
  /// of the real outputs and filter taps.
  std::pair<Box, Box> realBox(TensorRole r, const Position &pos) {
    Box lo, hi;
    for (Dim d : p_.role(r).dims) {
      if (isInputWindow(d)) {
        auto [out, win] = windowSources(d);
        const WindowAxis &a = p_.axes.along(d);
        Value *l = b_.CreateAdd(b_.CreateMul(pos.lo[idx(out)], c(a.stride)),
                                b_.CreateMul(pos.lo[idx(win)], c(a.dilation)));
        if (!pos.clipped) {   // the window of the whole tile: a constant span
          const DimVector &e = p_.levels[pos.level].extent;
          lo.push_back(l);
          hi.push_back(b_.CreateAdd(l, c(windowSpan(at(e, out), at(e, win), a))));
          continue;
        }
        Value *h = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(b_.CreateSub(pos.hi[idx(out)], c(1)), c(a.stride)),
                                             b_.CreateMul(b_.CreateSub(pos.hi[idx(win)], c(1)), c(a.dilation))),
                                c(1));
        Value *empty = b_.CreateOr(b_.CreateICmpSGE(pos.lo[idx(out)], pos.hi[idx(out)]),
                                   b_.CreateICmpSGE(pos.lo[idx(win)], pos.hi[idx(win)]));
        lo.push_back(l);
        hi.push_back(b_.CreateSelect(empty, l, h));
      } else {
        lo.push_back(pos.lo[idx(d)]);
        hi.push_back(pos.hi[idx(d)]);
      }
    }
    return {lo, hi};
  }

  /// A concatenation's operand, known as the kernel runs: at tensor index
  /// `index`, it starts at channel `first` and has `extent` channels.
  struct ChannelOf {
    size_t index;
    Value *first, *extent;
  };
  /// The DRAM tensor's offset of a role point, through the nest's access;
  /// `inside` (if asked) is false where an input window reads padding.
  /// With `of`, the access is source 0's moved to that operand's channels.
  Value *tensorOffset(TensorRole r, const PlanSource &src, const Box &point, Value **inside = nullptr,
                      const ChannelOf *of = nullptr) {
    std::map<Dim, Value *> coord = coordinates(r, point);
    if (inside)
      *inside = b_.getTrue();
    Value *offset = c(0);
    for (size_t j = 0; j < src.index.size(); ++j) {
      Value *v = indexAt(src, j, coord), *extent = c(src.extent[j]);
      if (of && j == of->index)
        v = b_.CreateSub(v, of->first), extent = of->extent;
      if (src.windowDim[j] >= 0 && inside)
        *inside = b_.CreateAnd(*inside, b_.CreateAnd(b_.CreateICmpSGE(v, c(0)), b_.CreateICmpSLT(v, extent)));
      offset = b_.CreateAdd(b_.CreateMul(offset, extent), v);
    }
    return offset;
  }
  /// Tensor index j of a role point through the access: an input window's
  /// coordinate minus the padding, else the affine index.
  Value *indexAt(const PlanSource &src, size_t j, const std::map<Dim, Value *> &coord) {
    if (src.windowDim[j] < 0)
      return affine(src.index[j], coord);
    const Dim window = static_cast<Dim>(src.windowDim[j]);
    return b_.CreateSub(coord.at(window), c(p_.axes.along(window).padBegin));
  }
  std::map<Dim, Value *> coordinates(TensorRole r, const Box &point) {
    std::map<Dim, Value *> coord;
    for (size_t i = 0; i < p_.role(r).dims.size(); ++i)
      coord[p_.role(r).dims[i]] = point[i];
    if (r == TensorRole::Ifm && p_.rowsAreOutputs)
      coord[Dim::Yo] = coord.at(Dim::Yi);
    return coord;
  }
  /// An affine expression over the nest's iteration dims, each recovered
  /// from the KAPLA coordinate it folds into.
  Value *affine(const AffineExpr &e, const std::map<Dim, Value *> &coord) {
    Value *v = c(e.constant);
    for (auto [dim, coefficient] : e.terms) {
      const PlanIterDim &it = p_.iterDims[static_cast<size_t>(dim)];
      Value *x = b_.CreateSRem(b_.CreateSDiv(coord.at(it.from), c(it.divisor)), c(it.extent));
      v = b_.CreateAdd(v, b_.CreateMul(x, c(coefficient)));
    }
    return v;
  }
  /// The statement's combination of a partial result with another.
  Value *combine(Value *a, Value *b) {
    if (p_.statement == Statement::Max)
      return b_.CreateSelect(b_.CreateICmpSGT(a, b), a, b);
    return b_.CreateAdd(a, b);
  }

  // ---- a unit's state record --------------------------------------------------------------
  /// Per unit and role, stateWords(l, r) words. Compact (where its key
  /// fits 62 bits, as nearly always): one key, 0 if the unit holds nothing,
  /// else 1 + the real box's lower corner and extents in a mixed radix (a
  /// key per box, one to each: boxKey), then the output's residency start.
  /// Else: valid, the box's lower corners, its upper ones, the start. On
  /// tiles of a few words a step's checks read one word, not 2 + 2·dims
  /// (docs/simulator.md, "Kernels": the records' traffic was the cost).
  struct StateCode {
    bool compact = false;
    std::vector<int64_t> loRadix, sizeRadix;   // per role dim
    int64_t sizeKeys = 1;                      // the product of sizeRadix
  };
  StateCode stateCode(size_t l, TensorRole r) const {
    StateCode s;
    double keys = 1;
    for (Dim d : p_.role(r).dims) {
      int64_t range = at(p_.bounds, d), size = at(p_.levels[l].extent, d);
      if (isInputWindow(d)) {   // as realBox derives it, whatever the bounds say
        const WindowAxis &w = p_.axes.along(d);
        const WindowSources src = windowSources(d);   // named, not bound: clang 14 cannot capture a binding
        auto span = [&](const DimVector &e) { return windowSpan(at(e, src.out), at(e, src.taps), w); };
        range = std::max(range, span(p_.bounds));
        size = std::max(size, span(p_.levels[l].extent));
      }
      s.loRadix.push_back(std::max<int64_t>(range, 1));
      s.sizeRadix.push_back(std::max<int64_t>(size, 1));
      keys *= static_cast<double>(s.loRadix.back()) * static_cast<double>(s.sizeRadix.back());
    }
    s.compact = keys + 1 < 4.6e18;   // below 2^62
    for (int64_t size : s.sizeRadix)
      s.sizeKeys = s.compact ? s.sizeKeys * size : 1;
    return s;
  }
  int64_t stateWords(size_t l, TensorRole r) const {
    if (stateCode_[l][idx(r)].compact)
      return r != p_.output ? 1 : oneWordResidency(l, r) ? 3 : 2;
    return 2 + 2 * static_cast<int64_t>(dimsOf(r));
  }
  /// Whether the record's words fit 32 bits: every key, and the steps.
  bool stateFits32(size_t l, TensorRole r) const {
    const StateCode &s = stateCode_[l][idx(r)];
    if (!s.compact || !stepsFit32(l) || (oneWordResidency(l, r) && parentWords(l, r) >= 2147483648))
      return false;
    double keys = 1;
    for (size_t i = 0; i < s.loRadix.size(); ++i)
      keys *= static_cast<double>(s.loRadix[i]) * static_cast<double>(s.sizeRadix[i]);
    return keys + 1 < 2147483648.0;
  }
  Value *stateAt(size_t l, TensorRole r, Value *unit, size_t k) {
    return b_.CreateAdd(b_.CreateMul(unit, c(stateWords(l, r))), c(static_cast<int64_t>(k)));
  }
  /// Word k of the unit's record, as an i64 (its stored width may be 32 bits).
  Value *stateLoad(size_t l, TensorRole r, Value *unit, size_t k) {
    Value *v = load(state_[l][idx(r)], stateAt(l, r, unit, k));
    return v->getType() == i64_ ? v : b_.CreateZExt(v, i64_);
  }
  void stateStore(size_t l, TensorRole r, Value *unit, size_t k, Value *v) {
    const int slot = state_[l][idx(r)];
    store(slot, stateAt(l, r, unit, k), code_.slots[static_cast<size_t>(slot)].bytes == 4 ? b_.CreateTrunc(v, i32_) : v);
  }
  /// Whether level l's output residencies are one word each (the PE level's
  /// one-word tiles, as on tpu_v1): the compact record then also keeps the
  /// word's place in the parent's buffer (word 2), and a residency ends
  /// where the next begins (startOutput), not in the evict function, which
  /// decodes its box and the parent's to find that place. Its key less 1 is
  /// the word's index in the layer's output (boxKey: no window dims).
  bool oneWordResidency(size_t l, TensorRole r) const {
    if (l != 0 || r != p_.output || nOn() < 2 || !stateCode_[l][idx(r)].compact)
      return false;
    for (Dim d : p_.role(r).dims)
      if (isInputWindow(d) || at(p_.levels[l].extent, d) != 1)
        return false;
    return true;
  }
  /// Whether level l's output residencies last one step each: one word
  /// (oneWordResidency) that the innermost update moves at every step, no
  /// tile ever past the parent's ends along the output's dims, so a unit's
  /// word is never empty and differs from its last step's (a word computed
  /// at two adjacent steps would be computed twice: E0805). Such a residency
  /// is written back at the end of its step, with no record: its start is
  /// the step, its place the unit's position.
  bool oneStepResidency(size_t l) const {
    const TensorRole r = p_.output;
    const std::vector<PlanMove> &ups = p_.levels[l].updates;
    if (!oneWordResidency(l, r) || ups.empty() || ups.back().count < 2 || !movesRole(ups.back(), r))
      return false;
    for (Dim d : p_.role(r).dims)
      if (!unclipped_[l][idx(d)].lo || !unclipped_[l][idx(d)].hi)
        return false;
    return true;
  }
  /// The record's word holding the step the output's residency began.
  size_t startWord(size_t l, TensorRole r) const {
    return stateCode_[l][idx(r)].compact ? 1 : 1 + 2 * dimsOf(r);
  }
  /// The compact key of a non-empty box [lo, hi).
  Value *boxKey(size_t l, TensorRole r, const Box &lo, const Box &hi) {
    const StateCode &s = stateCode_[l][idx(r)];
    Value *corner = c(0), *size = c(0);
    for (size_t i = 0; i < lo.size(); ++i) {
      corner = b_.CreateAdd(b_.CreateMul(corner, c(s.loRadix[i])), lo[i]);
      size = b_.CreateAdd(b_.CreateMul(size, c(s.sizeRadix[i])), b_.CreateSub(b_.CreateSub(hi[i], lo[i]), c(1)));
    }
    return b_.CreateAdd(b_.CreateAdd(b_.CreateMul(corner, c(s.sizeKeys)), size), c(1));
  }
  struct Held {
    Value *valid;   // i1
    Value *key;     // compact records: the key (else nullptr)
    Box lo, hi;     // compact records: after decode()
  };
  Held held(size_t l, TensorRole r, Value *unit) {
    if (stateCode_[l][idx(r)].compact) {
      Value *key = stateLoad(l, r, unit, 0);
      return {b_.CreateICmpNE(key, c(0)), key, {}, {}};
    }
    Held h{b_.CreateICmpNE(stateLoad(l, r, unit, 0), c(0)), nullptr, {}, {}};
    for (size_t i = 0; i < dimsOf(r); ++i) {
      h.lo.push_back(stateLoad(l, r, unit, 1 + i));
      h.hi.push_back(stateLoad(l, r, unit, 1 + dimsOf(r) + i));
    }
    return h;
  }
  /// A compact record's box, where it is used (the held check needs only the key).
  void decode(size_t l, TensorRole r, Held &h) {
    const StateCode &s = stateCode_[l][idx(r)];
    if (!h.key || !h.lo.empty())
      return;
    Value *k = b_.CreateSub(h.key, c(1));
    Value *corner = b_.CreateUDiv(k, c(s.sizeKeys)), *size = b_.CreateURem(k, c(s.sizeKeys));
    const size_t nd = s.loRadix.size();
    h.lo.assign(nd, nullptr), h.hi.assign(nd, nullptr);
    for (size_t i = nd; i-- > 0;) {
      h.lo[i] = b_.CreateURem(corner, c(s.loRadix[i]));
      h.hi[i] = b_.CreateAdd(b_.CreateAdd(h.lo[i], b_.CreateURem(size, c(s.sizeRadix[i]))), c(1));
      corner = b_.CreateUDiv(corner, c(s.loRadix[i]));
      size = b_.CreateUDiv(size, c(s.sizeRadix[i]));
    }
  }
  /// Whether the unit holds exactly the real box [lo, hi) (non-empty).
  Value *holds(size_t l, TensorRole r, const Held &h, const Box &lo, const Box &hi) {
    if (h.key)
      return b_.CreateICmpEQ(h.key, boxKey(l, r, lo, hi));
    Value *same = h.valid;
    for (size_t i = 0; i < lo.size(); ++i)
      same = b_.CreateAnd(same, b_.CreateAnd(b_.CreateICmpEQ(h.lo[i], lo[i]), b_.CreateICmpEQ(h.hi[i], hi[i])));
    return same;
  }
  void hold(size_t l, TensorRole r, Value *unit, const Box &lo, const Box &hi) {
    if (stateCode_[l][idx(r)].compact)
      return stateStore(l, r, unit, 0, boxKey(l, r, lo, hi));
    stateStore(l, r, unit, 0, c(1));
    for (size_t i = 0; i < lo.size(); ++i) {
      stateStore(l, r, unit, 1 + i, lo[i]);
      stateStore(l, r, unit, 1 + lo.size() + i, hi[i]);
    }
  }

  // ---- fills of inputs -------------------------------------------------------------------
  /// ifm, wgt: the unit's tile, fetched where it differs from the one held.
  /// `copies`: the units sharing the unit's buffer (emitLevel's Sharing),
  /// whose fills this one's stands for and counts.
  void fillInput(size_t l, TensorRole r, Value *unit, Value *copies, const Position &pos,
                 const std::array<Box, kNumRoles> &parentLo, Value *step, Value *slideStep, bool canSlide) {
    const PlanLevel &pl = p_.levels[l];
    const size_t nd = dimsOf(r);
    const auto box = realBox(r, pos);
    const Box &lo = box.first, &hi = box.second;
    int bufSlot = buffer_[l][idx(r)];
    ifThen(b_.CreateNot(emptyAt(pos, lo, hi)), [&] {
      Held old = held(l, r, unit);
      const Box &oldLo = old.lo, &oldHi = old.hi;
      ifThen(b_.CreateNot(holds(l, r, old, lo, hi)), [&] {
        if (canSlide)   // the words held are found from the box held
          decode(l, r, old);
        Value *slide = b_.CreateAnd(old.valid, slideStep);
        std::vector<int64_t> ext = extentsAt(pl.extent, r);
        bool outermost = l + 1 == nOn();
        Value *parent = outermost ? c(0) : pos.parentUnitOf[idx(r)];
        // add, mul: one tile per operand, one after the other in the buffer.
        // By rows along the innermost dim the tile spans more than one index
        // of (the dims inside it are one index wide): the words held (a run
        // of the row, on a sliding step) are moved, the others fetched.
        size_t last = nd - 1;
        while (last > 0 && ext[last] == 1)
          --last;
        Box outerLo, outerHi;
        for (size_t i = 0; i < nd; ++i)
          if (i != last)
            outerLo.push_back(lo[i]), outerHi.push_back(i < last ? hi[i] : b_.CreateAdd(lo[i], c(1)));
        auto point = [&](const Box &row, Value *x) {
          Box a = row;
          a.insert(a.begin() + static_cast<std::ptrdiff_t>(last), x);
          return a;
        };
        for (int64_t op = 0; op < ops(r); ++op) {
          Value *bufBase = b_.CreateAdd(b_.CreateMul(unit, c(bufferWords(l, r))), c(op * pl.tileWords[idx(r)]));
          forBox(outerLo, outerHi, [&](const Box &row) {
            Value *keptLo = lo[last], *keptHi = lo[last];
            if (canSlide) {
              Value *kept = slide;
              for (size_t i = 0, j = 0; i < nd; ++i)
                if (i != last) {
                  kept = b_.CreateAnd(kept, b_.CreateAnd(b_.CreateICmpSGE(row[j], oldLo[i]),
                                                         b_.CreateICmpSLT(row[j], oldHi[i])));
                  ++j;
                }
              Value *kLo = smax(lo[last], oldLo[last]), *kHi = smin(hi[last], oldHi[last]);
              kept = b_.CreateAnd(kept, b_.CreateICmpSLT(kLo, kHi));
              keptLo = b_.CreateSelect(kept, kLo, lo[last]);
              keptHi = b_.CreateSelect(kept, kHi, lo[last]);
              // In increasing order: a word's new place is never after its old one.
              forLoop(keptLo, keptHi, [&](Value *x) {
                Box a = point(row, x);
                store(bufSlot, b_.CreateAdd(bufBase, linear(a, lo, ext)),
                      load(bufSlot, b_.CreateAdd(bufBase, linear(a, oldLo, ext))));
              });
            }
            if (fault_ == KernelFault::DropInnerFill && l == 0 && r == TensorRole::Ifm)
              return;
            // Fetched: [lo, keptLo) and [keptHi, hi) of the row.
            Value *before = b_.CreateSub(keptLo, lo[last]);
            Value *n = b_.CreateAdd(before, b_.CreateSub(hi[last], keptHi));
            // A one-word tile's row, non-empty and not held, is that word: no
            // loop of an unknown trip count around it.
            if (!canSlide && ext[last] == 1)
              n = c(1);
            if (stores(l, r))
              count(l, r, kWrites, b_.CreateMul(n, copies));
            forLoop(c(0), n, [&](Value *j) {
              Box a = point(row, b_.CreateSelect(b_.CreateICmpSLT(j, before), b_.CreateAdd(lo[last], j),
                                                 b_.CreateAdd(keptHi, b_.CreateSub(j, before))));
              fetch(l, r, op, a, parent, parentLo, step, b_.CreateAdd(bufBase, linear(a, lo, ext)), copies);
            });
          });
        }
        hold(l, r, unit, lo, hi);
      });
    });
  }

  /// One word from the parent's buffer (or DRAM) into `dst`, counting the
  /// parent's read: once per word per step where stacked units share reads.
  /// `copies`: the units whose fetch this one stands for, each reading the
  /// word unless the parent serves copies.
  void fetch(size_t l, TensorRole r, int64_t op, const Box &a, Value *parent,
             const std::array<Box, kNumRoles> &parentLo, Value *step, Value *dst, Value *copies) {
    const PlanLevel &pl = p_.levels[l];
    int bufSlot = buffer_[l][idx(r)];
    // Where `inside` is given, only a word inside the tensor is read (and
    // `at` is a valid index either way). No branch per word. k: the DRAM
    // tensor read, whose reads are also counted on their own.
    const size_t h = holder(l, r);
    auto readCounted = [&](Value *at, Value *inside, Value *k) {
      if (!counters_ || !stores(l, r))
        return;
      auto counted = [&](Value *n) {
        count(h, r, kReads, n);
        if (h < nOn())
          return;
        if (auto *known = k ? llvm::dyn_cast<llvm::ConstantInt>(k) : nullptr)
          countAt(code_.counters.sourceReads(r, known->getZExtValue()), n);
        else if (k)   // a concatenation's operand, known as the kernel runs
          addToCounter(b_.CreateAdd(c(static_cast<int64_t>(code_.counters.sourceReads(r, 0))), k), n);
      };
      if (!pl.serveCopies)
        return counted(b_.CreateMul(inside ? one(inside) : c(1), copies));
      int s = stamps_[l][idx(r)];
      Value *old = load(s, at), *now = stamp(l, r, step);
      Value *fresh = b_.CreateICmpNE(old, now);
      if (inside)
        fresh = b_.CreateAnd(fresh, inside);
      store(s, at, inside ? b_.CreateSelect(inside, now, old) : now);
      counted(one(fresh));
    };
    // The word's place in the parent's buffer: a stamp per parent word.
    Value *at = nullptr;
    if (l + 1 < nOn()) {
      const PlanLevel &up = p_.levels[l + 1];
      at = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(parent, c(bufferWords(l + 1, r))), c(op * up.tileWords[idx(r)])),
                        linear(a, parentLo[idx(r)], extentsAt(up.extent, r)));
    }
    if (h == nOn()) {
      // From DRAM, directly where the levels between do not hold r: operand
      // op's tensor (add, mul), or the one whose channels hold the word (the
      // operands of a concatenation). Padding is not read (§6).
      ReadCounted fromDram = readCounted;
      if (at)   // the units of one parent still share its read
        fromDram = [&](Value *, Value *inside, Value *k) { readCounted(at, inside, k); };
      if (p_.role(r).concatenated())
        return fromConcatenated(l, r, a, dst, fromDram);
      return fromSource(l, r, static_cast<size_t>(op), a, dst, fromDram);
    }
    // The parent's copy; where it only stages r, it equals the holder's.
    store(bufSlot, dst, load(buffer_[l + 1][idx(r)], at));
    readCounted(at, nullptr, nullptr);
  }

  /// One word of DRAM tensor k of role r; padding is not data: it is
  /// written, not read from DRAM (§6).
  using ReadCounted = std::function<void(Value *, Value *, Value *)>;
  void fromSource(size_t l, TensorRole r, size_t k, const Box &a, Value *dst, const ReadCounted &readCounted) {
    const PlanSource &src = p_.role(r).sources[k];
    int bufSlot = buffer_[l][idx(r)], tensor = sourceSlot_[idx(r)][k];
    Value *inside = nullptr;
    Value *off = tensorOffset(r, src, a, r == TensorRole::Ifm ? &inside : nullptr);
    if (inside)   // padding: the word is not read (index 0 stands in), the padding value written
      off = b_.CreateSelect(inside, off, c(0));
    Value *v = load(tensor, off);
    store(bufSlot, dst, inside ? b_.CreateSelect(inside, v, b_.getInt32(static_cast<uint32_t>(p_.padding))) : v);
    readCounted(b_.CreateAdd(off, c(sourceBase_[idx(r)][k])), inside, c(static_cast<int64_t>(k)));
  }

  /// One word of a concatenation's operands: the operand whose channels
  /// hold it found by a binary search over their first channels, then one
  /// access through constant tables of their channels and bases and the
  /// slots' pointers. Code and work per word grow with log n, not n (a
  /// chain of n guards, nested, once overflowed the generator's stack at
  /// 20,000 operands).
  void fromConcatenated(size_t l, TensorRole r, const Box &a, Value *dst, const ReadCounted &readCounted) {
    const PlanRole &pr = p_.role(r);
    const PlanSource &first = pr.sources[0];
    std::array<llvm::GlobalVariable *, 3> &tables = operandTables_[idx(r)];
    if (!tables[0]) {
      std::vector<int64_t> channels;
      for (const PlanSource &src : pr.sources)
        channels.push_back(src.extent[pr.channelIndex]);
      tables = {table(pr.firstChannel, "first_channel"), table(channels, "channels"),
                table(sourceBase_[idx(r)], "source_base")};
    }
    llvm::GlobalVariable *firsts = tables[0], *counts = tables[1], *baseTable = tables[2];
    const int64_t n = static_cast<int64_t>(pr.sources.size());
    Value *channel = indexAt(first, pr.channelIndex, coordinates(r, a));   // source 0 starts at channel 0
    // The last operand whose first channel is at most `channel`.
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    llvm::Function *fn = pre->getParent();
    auto *head = llvm::BasicBlock::Create(ctx_, "search", fn), *step = llvm::BasicBlock::Create(ctx_, "halve", fn),
         *found = llvm::BasicBlock::Create(ctx_, "found", fn);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode *lo = b_.CreatePHI(i64_, 2), *hi = b_.CreatePHI(i64_, 2);
    lo->addIncoming(c(0), pre), hi->addIncoming(c(n), pre);
    b_.CreateCondBr(b_.CreateICmpSGT(b_.CreateSub(hi, lo), c(1)), step, found);
    b_.SetInsertPoint(step);
    Value *mid = b_.CreateAShr(b_.CreateAdd(lo, hi), c(1));
    Value *inMid = b_.CreateICmpSLE(tableAt(firsts, n, mid), channel);
    lo->addIncoming(b_.CreateSelect(inMid, mid, lo), step), hi->addIncoming(b_.CreateSelect(inMid, hi, mid), step);
    b_.CreateBr(head);
    b_.SetInsertPoint(found);
    Value *k = lo;
    Value *inside = nullptr;
    ChannelOf of{pr.channelIndex, tableAt(firsts, n, k), tableAt(counts, n, k)};
    Value *off = tensorOffset(r, first, a, r == TensorRole::Ifm ? &inside : nullptr, &of);
    if (inside)   // padding: the word is not read (index 0 stands in), the padding value written
      off = b_.CreateSelect(inside, off, c(0));
    // The operand's pointer, from the slots' table the kernel is called with.
    const int slot0 = sourceSlot_[idx(r)][0];
    auto *raw = b_.CreateLoad(i8_->getPointerTo(), b_.CreateInBoundsGEP(i8_->getPointerTo(), slots_,
                                                                       b_.CreateAdd(c(slot0), k)));
    raw->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(ctx_, {}));
    Value *v = scoped(b_.CreateLoad(i32_, b_.CreateInBoundsGEP(i32_, b_.CreateBitCast(raw, i32_->getPointerTo()), off)),
                      slot0);
    int bufSlot = buffer_[l][idx(r)];
    store(bufSlot, dst, inside ? b_.CreateSelect(inside, v, b_.getInt32(static_cast<uint32_t>(p_.padding))) : v);
    readCounted(b_.CreateAdd(off, tableAt(baseTable, n, k)), inside, k);
  }
  /// A constant table of n values, and its k-th.
  llvm::GlobalVariable *table(const std::vector<int64_t> &values, const std::string &name) {
    std::vector<uint64_t> words(values.begin(), values.end());
    auto *init = llvm::ConstantDataArray::get(ctx_, words);
    return new llvm::GlobalVariable(*code_.module, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init, name);
  }
  Value *tableAt(llvm::GlobalVariable *t, int64_t n, Value *k) {
    llvm::Type *ty = llvm::ArrayType::get(i64_, static_cast<uint64_t>(n));
    return b_.CreateLoad(i64_, b_.CreateInBoundsGEP(ty, t, {c(0), k}));
  }
  /// Adds n to a counter whose index is known only as the kernel runs.
  void addToCounter(Value *counter, Value *n) {
    store(code_.counterSlot, counter, b_.CreateAdd(load(code_.counterSlot, counter), n));
  }

  // ---- partial sums ----------------------------------------------------------------------
  /// ofm: a residency begins where the unit's output tile differs from the
  /// one it holds: the old one is written back (after its own units'), the
  /// new one starts from the statement's identity.
  void startOutput(size_t l, Value *slots, Value *unit, const Position &pos, Value *step,
                   const std::array<Box, kNumRoles> &parentLo) {
    const TensorRole r = p_.output;
    const PlanLevel &pl = p_.levels[l];
    int bufSlot = buffer_[l][idx(r)];
    if (oneStepResidency(l))
      return void(store(bufSlot, b_.CreateMul(unit, c(bufferWords(l, r))), b_.getInt32(static_cast<uint32_t>(p_.identity))));
    const auto box = realBox(r, pos);
    const Box &lo = box.first, &hi = box.second;
    ifThen(b_.CreateNot(emptyAt(pos, lo, hi)), [&] {
      Held old = held(l, r, unit);
      ifThen(b_.CreateNot(holds(l, r, old, lo, hi)), [&] {
        Value *bufBase = b_.CreateMul(unit, c(bufferWords(l, r)));
        const bool oneWord = oneWordResidency(l, r);
        evict(l, slots, unit, pos.parentUnit, &old);
        std::vector<int64_t> ext = extentsAt(pl.extent, r);
        forBox(lo, hi, [&](const Box &a) {
          store(bufSlot, b_.CreateAdd(bufBase, linear(a, lo, ext)), b_.getInt32(static_cast<uint32_t>(p_.identity)));
        });
        hold(l, r, unit, lo, hi);
        if (counters_)   // the start decides only what the counters count
          stateStore(l, r, unit, startWord(l, r), step);
        if (oneWord)
          stateStore(l, r, unit, 2,
                     parentPlace(l, r, pos.parentUnit, lo, parentLo[idx(r)]));
      });
    });
  }

  /// Where word `a` of role r lies in the buffer of level l's parent unit
  /// `parent`, whose tile starts at `parentLo`.
  Value *parentPlace(size_t l, TensorRole r, Value *parent, const Box &a, const Box &parentLo) {
    return b_.CreateAdd(b_.CreateMul(parent, c(bufferWords(l + 1, r))),
                        linear(a, parentLo, extentsAt(p_.levels[l + 1].extent, r)));
  }

  /// A one-step residency (oneStepResidency) ends: its word added into the
  /// parent's at the unit's position.
  void endStep(size_t l, Value *unit, const Position &pos, Value *step, const std::array<Box, kNumRoles> &parentLo) {
    const TensorRole r = p_.output;
    const Box &lo = realBox(r, pos).first;
    const Box zero(dimsOf(r), c(0));
    writeBackWord(l, r, b_.CreateMul(unit, c(bufferWords(l, r))), linear(lo, zero, extentsAt(p_.bounds, r)),
                  parentPlace(l, r, pos.parentUnit, lo, parentLo[idx(r)]), pos.parentUnit, step);
  }

  /// The unit's residency ends (if it holds one): evict_l, or inline where
  /// it is one word (oneWordResidency), put back where its record says in
  /// the parent's residency, which has not changed since (a parent's
  /// residency ends after its units'). `old`: its record, if read.
  void evict(size_t l, Value *slots, Value *unit, Value *parentUnit, Held *old = nullptr) {
    const TensorRole r = p_.output;
    if (!oneWordResidency(l, r))
      return void(b_.CreateCall(evictFns_[l], {slots, unit}));
    Held h = old ? *old : held(l, r, unit);
    ifThen(h.valid, [&] {
      writeBackWord(l, r, b_.CreateMul(unit, c(bufferWords(l, r))), b_.CreateSub(h.key, c(1)),
                    stateLoad(l, r, unit, 2), parentUnit, stateLoad(l, r, unit, startWord(l, r)));
      stateStore(l, r, unit, 0, c(0));
    });
  }

  /// evict_l(slots, unit): the unit's own units write back first, then it
  /// adds its held outputs into its parent (or DRAM) and holds nothing.
  void emitEvict(size_t l) {
    const TensorRole r = p_.output;
    const PlanLevel &pl = p_.levels[l];
    llvm::Function *fn = evictFns_[l];
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    Value *slots = fn->getArg(0), *unit = fn->getArg(1);
    loadSlots(slots);
    Held h = held(l, r, unit);
    ifThen(h.valid, [&] {
      if (l > 0) {
        int64_t inner = p_.levels[l - 1].unitsPerParent;
        forLoop(c(0), c(inner), [&](Value *v) { evict(l - 1, slots, b_.CreateAdd(b_.CreateMul(unit, c(inner)), v), unit); });
      }
      decode(l, r, h);
      const Box &lo = h.lo, &hi = h.hi;
      Value *start = stateLoad(l, r, unit, startWord(l, r));
      bool outermost = l + 1 == nOn();
      Value *parent = outermost ? c(0) : b_.CreateSDiv(unit, c(pl.unitsPerParent));
      Box parentLo;
      if (!outermost) {
        Held up = held(l + 1, r, parent);
        decode(l + 1, r, up);
        parentLo = up.lo;
      }
      std::vector<int64_t> ext = extentsAt(pl.extent, r), full = extentsAt(p_.bounds, r);
      Value *bufBase = b_.CreateMul(unit, c(bufferWords(l, r)));
      const Box zero(dimsOf(r), c(0));
      forBox(lo, hi, [&](const Box &a) {
        // A data gradient's words in the input's padding are not written (model/LoopNest.h).
        Value *inside = nullptr;
        Value *at = outermost ? tensorOffset(r, p_.role(r).sources[0], a, r == TensorRole::Ifm ? &inside : nullptr)
                              : parentPlace(l, r, parent, a, parentLo);
        auto writeBack = [&] {
          writeBackWord(l, r, b_.CreateAdd(bufBase, linear(a, lo, ext)), linear(a, zero, full), at, parent, start);
        };
        if (inside)
          ifThen(inside, writeBack);
        else
          writeBack();
      });
      stateStore(l, r, unit, 0, c(0));
    });
    ret();
  }

  /// One held output word, at `word` in the unit's buffer and `point` in the
  /// layer's output (its index), into the parent's (or DRAM's) word `at`.
  void writeBackWord(size_t l, TensorRole r, Value *word, Value *point, Value *at, Value *parent, Value *start) {
    const PlanLevel &pl = p_.levels[l];
    bool outermost = l + 1 == nOn();
    int bufSlot = buffer_[l][idx(r)];
    int parentSlot = outermost ? code_.tensorSlot[idx(r)] : buffer_[l + 1][idx(r)];
    Value *v = load(bufSlot, word);
    // Counted at the level holding r above (§6 "Bypass"); its units' first
    // visits read nothing back.
    const size_t h = holder(l, r);
    Value *holderUnit = parent;
    for (size_t m = l + 1; m < h; ++m)
      holderUnit = b_.CreateSDiv(holderUnit, c(p_.levels[m].unitsPerParent));
    // Written back where `fresh` (i1): a word not summed into another unit's copy first.
    auto writeBack = [&](Value *fresh) {
      count(l, r, kReads, one(fresh));
      count(h, r, kWrites, one(fresh));
      // A partial sum this holder's unit has seen before is read back (§6).
      Value *bit = b_.CreateAdd(b_.CreateMul(holderUnit, c(outputPoints())), point);
      Value *byteAt = b_.CreateLShr(bit, c(3));
      Value *mask = b_.CreateShl(b_.getInt8(1), b_.CreateTrunc(b_.CreateAnd(bit, c(7)), i8_));
      Value *byte = load(visited_[l], byteAt);
      Value *seen = b_.CreateAnd(fresh, b_.CreateICmpNE(b_.CreateAnd(byte, mask), b_.getInt8(0)));
      count(l, r, kWrites, one(seen));
      count(h, r, kReads, one(seen));
      store(visited_[l], byteAt, b_.CreateOr(byte, b_.CreateSelect(fresh, mask, b_.getInt8(0))));
    };
    const bool counted = counters_ && stores(l, r);   // staged only: uncounted
    if (counted && !pl.reduceOutputs)
      writeBack(b_.getTrue());
    if (counted && pl.reduceOutputs) {
      // Copies of the same partial sums from one step are summed among the units first.
      int s = stamps_[l][idx(r)];
      Value *began = stamp(l, r, start);
      Value *same = b_.CreateICmpEQ(load(s, at), began);
      store(s, at, began);
      count(l, r, kSame, one(same));
      writeBack(b_.CreateNot(same));
    }
    store(parentSlot, at, combine(load(parentSlot, at), v));
  }

  // ---- the nest --------------------------------------------------------------------------
  /// The innermost loop moving a dim of r among the levels >= l: its index
  /// in level l's updates (outermost first) if it is a loop of level l, else -1.
  int slidingLoop(size_t l, TensorRole r) const {
    for (size_t m = l; m < nOn(); ++m) {
      const std::vector<PlanMove> &ups = p_.levels[m].updates;
      for (size_t i = ups.size(); i-- > 0;)
        for (Dim d : p_.role(r).dims)
          if (at(ups[i].amount, d))
            return m == l ? static_cast<int>(i) : -1;
    }
    return -1;
  }

  /// Whether a step of update `u` of level l can leave a unit some words of
  /// its tile of r: it moves the box less than the tile's extent along every
  /// dim. A step moving it by its extent or more (a channel loop over
  /// one-channel tiles) keeps none, so its fills check nothing per row or
  /// word for words to move: on small PE tiles that check cost more than
  /// the words.
  bool keepsWords(size_t l, size_t u, TensorRole r) const {
    const PlanLevel &pl = p_.levels[l];
    const DimVector &a = pl.updates[u].amount;
    for (Dim d : p_.role(r).dims) {
      int64_t shift = at(a, d);
      if (isInputWindow(d)) {   // as realBox moves it: by its outputs' and taps' shift
        const WindowAxis &w = p_.axes.along(d);
        shift = at(a, windowSources(d).out) * w.stride + at(a, windowSources(d).taps) * w.dilation;
      }
      if (shift >= at(pl.extent, d))
        return false;
    }
    return true;
  }

  /// Whether a move shifts role r's real box (realBox: a window by its
  /// outputs and taps).
  bool movesRole(const PlanMove &m, TensorRole r) const {
    for (size_t d = 0; d < kNumDims; ++d)
      if (m.amount[d] && boxAlong(r, static_cast<Dim>(d)))
        return true;
    return false;
  }
  /// i1 at a step of level l: every unit's box of r is the one it had at
  /// the level's previous step (a trip of an update inside the innermost
  /// one moving r is past 0, so that step differs only in loops not moving
  /// r), which it then fetched or started and still holds: its check can be
  /// skipped (a PE's output under an update of C, every step but the first).
  /// Where no update of level l moves r, also at its first step under a
  /// parent step whose own boxes of r are unmoved (`parentSame`): the
  /// parent's position along r's dims is then the previous step's, so each
  /// unit's box of r is too (a PE level without loops under a buffer's
  /// update of C). nullptr where that never holds.
  Value *unmoved(size_t l, TensorRole r, const std::vector<Value *> &trips, Value *parentSame) {
    const std::vector<PlanMove> &ups = p_.levels[l].updates;
    size_t inner = ups.size();   // updates [inner, size) do not move r
    while (inner > 0 && !movesRole(ups[inner - 1], r))
      --inner;
    Value *same = inner == 0 ? parentSame : nullptr;
    for (size_t j = inner; j < ups.size(); ++j) {
      same = either(same, b_.CreateICmpSGT(trips[j], c(0)));
    }
    return same;
  }
  /// `emit` where `skip` (i1, or nullptr: never) does not hold.
  void unless(Value *skip, const std::function<void()> &emit) {
    if (!skip)
      return emit();
    ifThen(b_.CreateNot(skip), emit);
  }

  /// Whether the innermost level's steps are worth a second, unclipped copy
  /// of their units' code: where its units take KernelOptions::unclippedSteps
  /// steps in all or more (each a few ns faster unclipped, against 150-250 ms
  /// more compile time; docs/benchmarks.md, "Unclipped steps").
  bool unclippedPays() const {
    return steps(0) * static_cast<double>(p_.levels[0].unitsPerParent) >= unclippedSteps_;
  }
  /// Whether every step of the innermost level runs its units unclipped
  /// (emitLevel), so that the clipped copy is never needed: along each dim
  /// its tiles never pass the parent's lower end, and either never its
  /// upper one (unclippedEnds) or, one index wide along a dim of the
  /// statement, pass it whole: all at one index (no stack moves the dim:
  /// the step's units are all inside or all dead) or along a sole stack
  /// (those starting before the end inside, the others dead).
  bool everyStepUnclipped() const {
    const PlanLevel &pl = p_.levels[0];
    const std::vector<Dim> looped = statementDims();
    for (size_t d = 0; d < kNumDims; ++d) {
      if (d == idx(Dim::Xi) || d == idx(Dim::Yi) || unclipped_[0][d].hi)
        continue;
      const bool stacked = std::any_of(pl.stacks.begin(), pl.stacks.end(),
                                       [&](const PlanMove &s) { return s.amount[d] != 0; });
      if (!unclipped_[0][d].lo || pl.extent[d] != 1 ||
          std::find(looped.begin(), looped.end(), static_cast<Dim>(d)) == looped.end() ||
          (stacked && !soleStack(pl, static_cast<Dim>(d))))
        return false;
    }
    return true;
  }

  /// Whether role r's real box depends on the position's range along tile
  /// dim d (realBox: a window's along its outputs and taps).
  bool boxAlong(TensorRole r, Dim d) const {
    for (Dim rd : p_.role(r).dims) {
      if (rd == d)
        return true;
      if (isInputWindow(rd) && (d == windowSources(rd).out || d == windowSources(rd).taps))
        return true;
    }
    return false;
  }
  /// The one stack of level `pl` moving tile dim d, where it moves no other
  /// tile dim, forward (the window dims it moves follow d).
  std::optional<size_t> soleStack(const PlanLevel &pl, Dim d) const {
    std::optional<size_t> found;
    for (size_t i = 0; i < pl.stacks.size(); ++i) {
      const DimVector &a = pl.stacks[i].amount;
      if (!a[idx(d)])
        continue;
      if (found || a[idx(d)] < 0)
        return std::nullopt;
      for (size_t e = 0; e < kNumDims; ++e)
        if (e != idx(d) && e != idx(Dim::Xi) && e != idx(Dim::Yi) && a[e])
          return std::nullopt;
      found = i;
    }
    return found;
  }
  /// i1: at this step a unit whose range along d is empty does nothing: each
  /// role whose box does not depend on d is not checked (`same`).
  Value *idleWithout(Dim d, const std::array<Value *, kNumRoles> &same) {
    Value *idle = b_.getTrue();
    for (const PlanRole &r : p_.roles)
      if (r.present && !boxAlong(r.role, d))
        idle = same[idx(r.role)] ? b_.CreateAnd(idle, same[idx(r.role)]) : b_.getFalse();
    return idle;
  }

  /// Per input role whose units share buffers (emitLevel): a unit's index
  /// among the distinct tiles (a mixed radix over the stacks moving the
  /// role), how many units, the first filling for all, hold each, and
  /// whether the unit is that first (i1; null: it is).
  struct Sharing {
    std::array<Value *, kNumRoles> unit{}, copies{}, first{};
  };

  /// Runs level l inside one unit of level l+1 at one of its steps, whose
  /// `parentSame` says which of its boxes are unmoved (unmoved).
  void emitLevel(size_t l, Value *slots, Value *parentUnit, const Position &parent,
                 const std::array<Box, kNumRoles> &parentLo, const std::array<Value *, kNumRoles> &parentSame) {
    const PlanLevel &pl = p_.levels[l];
    std::vector<Value *> trips;
    std::function<void(size_t)> loops = [&](size_t f) {
      if (f < pl.updates.size()) {
        int64_t n = pl.updates[f].count;
        if (fault_ == KernelFault::OuterLoopShort && l + 1 == nOn() && f == 0)
          n -= 1;
        return forLoop(c(0), c(n), [&](Value *t) {
          trips.push_back(t);
          loops(f + 1);
          trips.pop_back();
        });
      }
      Value *stepAt = c(static_cast<int64_t>(l));
      Value *step = b_.CreateAdd(load(stepSlot_, stepAt), c(1));
      store(stepSlot_, stepAt, step);
      std::array<Value *, kNumRoles> same{};
      for (const PlanRole &r : p_.roles)
        if (r.present)
          same[idx(r.role)] = unmoved(l, r.role, trips, parentSame[idx(r.role)]);
      // The updates' shift: the same for every unit of the step.
      std::array<Value *, kNumDims> stepShift{};
      for (size_t d = 0; d < kNumDims; ++d) {
        stepShift[d] = parent.origin[d];
        for (size_t i = 0; i < pl.updates.size(); ++i)
          if (pl.updates[i].amount[d])
            stepShift[d] = b_.CreateAdd(stepShift[d], b_.CreateMul(trips[i], c(pl.updates[i].amount[d])));
      }
      const std::vector<Dim> looped = statementDims();
      auto inStatement = [&](Dim d) { return std::find(looped.begin(), looped.end(), d) != looped.end(); };
      // One unit: v its index under the parent, `stacked` its stacks' shift;
      // `clipped` false where its tile is known to lie inside the parent's
      // along every dim but those `dead` (i1, or null) says it lies past,
      // where each role whose box spans the dim, and the statement, are empty.
      auto unitStep = [&](Value *v, const Sharing &sharing, const std::array<Value *, kNumDims> &stacked,
                          bool clipped, const std::array<Value *, kNumDims> &dead) {
        auto deadAlong = [&](auto spans) {
          Value *any = nullptr;
          for (size_t d = 0; d < kNumDims; ++d)
            if (dead[d] && spans(static_cast<Dim>(d)))
              any = either(any, dead[d]);
          return any;
        };
        auto skip = [&](TensorRole r) {
          return either(same[idx(r)], deadAlong([&](Dim d) { return boxAlong(r, d); }));
        };
        Value *base = b_.CreateMul(parentUnit, c(pl.unitsPerParent)), *unit = b_.CreateAdd(base, v);
        std::array<Value *, kNumRoles> units{};
        for (size_t r = 0; r < kNumRoles; ++r)
          units[r] = sharing.unit[r] ? b_.CreateAdd(base, sharing.unit[r]) : unit;
        Position pos;
        pos.clipped = clipped, pos.level = l, pos.parentUnit = parentUnit;
        pos.unitOf = units, pos.parentUnitOf = parent.unitOf;
        for (size_t d = 0; d < kNumDims; ++d) {
          pos.origin[d] = b_.CreateAdd(stepShift[d], stacked[d]);
          if (d == idx(Dim::Xi) || d == idx(Dim::Yi))
            continue;
          Value *end = b_.CreateAdd(pos.origin[d], c(pl.extent[d]));
          pos.lo[d] = clipped && !unclipped_[l][d].lo ? smax(parent.lo[d], pos.origin[d]) : pos.origin[d];
          pos.hi[d] = clipped && !unclipped_[l][d].hi ? smin(parent.hi[d], end) : end;
        }
        std::array<Box, kNumRoles> here{};
        for (TensorRole r : {TensorRole::Ifm, TensorRole::Wgt, TensorRole::Ofm}) {
          if (!p_.role(r).present || r == p_.output || (l == 0 && readsAbove(r)))
            continue;
          int f = slidingLoop(l, r);
          if (f >= 0 && !keepsWords(l, static_cast<size_t>(f), r))
            f = -1;
          Value *slide = b_.getFalse();
          if (f >= 0) {
            slide = b_.CreateICmpSGT(trips[static_cast<size_t>(f)], c(0));
            for (size_t j = static_cast<size_t>(f) + 1; j < trips.size(); ++j)
              slide = b_.CreateAnd(slide, b_.CreateICmpEQ(trips[j], c(0)));
          }
          // The first of the units sharing the buffer has just checked it.
          Value *first = sharing.first[idx(r)];
          unless(either(skip(r), first ? b_.CreateNot(first) : nullptr), [&] {
            fillInput(l, r, units[idx(r)], sharing.copies[idx(r)], pos, parentLo, step, slide, f >= 0);
          });
          here[idx(r)] = realBox(r, pos).first;
        }
        unless(skip(p_.output), [&] { startOutput(l, slots, unit, pos, step, parentLo); });
        here[idx(p_.output)] = realBox(p_.output, pos).first;
        if (l > 0)
          emitLevel(l - 1, slots, unit, pos, here, same);
        else
          unless(deadAlong(inStatement), [&] { compute(units, pos, here, parentLo); });
        if (oneStepResidency(l))
          unless(skip(p_.output), [&] { endStep(l, unit, pos, step, parentLo); });
      };
      // Every unit, one loop per stack (the first the outermost; v the unit's
      // index under the parent, a mixed radix over them). Unclipped, a stack
      // may run fewer trips (stackTrips, null: all its units) and its units
      // from deadFrom's on lie past the parent along that dim.
      std::vector<Value *> stackTrips(pl.stacks.size(), nullptr);
      std::vector<std::pair<size_t, Value *>> deadFrom(pl.stacks.size());
      std::function<void(size_t, Value *, Sharing, std::array<Value *, kNumDims>, std::array<Value *, kNumDims>, bool)>
          stacks = [&](size_t i, Value *v, Sharing sharing, std::array<Value *, kNumDims> stacked,
                       std::array<Value *, kNumDims> dead, bool clipped) {
            if (i == pl.stacks.size())
              return unitStep(v, sharing, stacked, clipped, dead);
            const PlanMove &s = pl.stacks[i];
            Value *count = !clipped && stackTrips[i] ? stackTrips[i] : c(s.count);
            for (size_t r = 0; r < kNumRoles; ++r)
              if (sharing.unit[r] && !movesRole(s, static_cast<TensorRole>(r)))
                sharing.copies[r] = b_.CreateMul(sharing.copies[r], count);
            forLoop(c(0), count, [&](Value *k) {
              std::array<Value *, kNumDims> next = stacked, nextDead = dead;
              for (size_t d = 0; d < kNumDims; ++d)
                if (s.amount[d])
                  next[d] = b_.CreateAdd(next[d], b_.CreateMul(k, c(s.amount[d])));
              if (!clipped && deadFrom[i].second)
                nextDead[deadFrom[i].first] = b_.CreateICmpSGE(k, deadFrom[i].second);
              Sharing nextSharing = sharing;
              for (size_t r = 0; r < kNumRoles; ++r) {
                if (!sharing.unit[r])
                  continue;
                if (movesRole(s, static_cast<TensorRole>(r))) {
                  nextSharing.unit[r] = b_.CreateAdd(b_.CreateMul(sharing.unit[r], c(s.count)), k);
                } else {
                  nextSharing.first[r] = both(sharing.first[r], b_.CreateICmpEQ(k, c(0)));
                }
              }
              stacks(i + 1, b_.CreateAdd(b_.CreateMul(v, c(s.count)), k), nextSharing, next, nextDead, clipped);
            });
          };
      std::array<Value *, kNumDims> none{}, alive{};   // alive: no dim dead
      none.fill(c(0));
      // The units along stacks that do not move an input (a multicast: a
      // stack of K for the ifm) hold the same words at every step: they
      // share one buffer and record, the first of them checking and filling
      // it for all, the others skipping the check; their units read it there.
      // Every role a unit fills: the inputs (a backward layer's ofm among them).
      Sharing shared;
      for (const PlanRole &r : p_.roles)
        if (r.present && r.role != p_.output && !(l == 0 && readsAbove(r.role)))
          shared.unit[idx(r.role)] = c(0), shared.copies[idx(r.role)] = c(1);
      // Each tile clipped to the parent's.
      auto clippedUnits = [&] { stacks(0, c(0), shared, none, alive, true); };
      const bool onlyUnclipped = l == 0 && !std::isinf(unclippedSteps_) && everyStepUnclipped();
      if (l > 0 || !(onlyUnclipped || unclippedPays()))
        return clippedUnits();
      // At the innermost level, a step whose units' tiles all lie inside the
      // parent's real box (all but the edges' steps) runs its units
      // unclipped, one loop per stack: the boxes, keys and offsets are then
      // affine in the loops' indices, which the optimizer strength-reduces
      // (docs/simulator.md, "Kernels"). Per dim, whether every unit's tile
      // along it lies inside the parent's box, or none does (all empty).
      // A dim of the statement along which none does (a last chiplet's K
      // past the layer's) is dead: the roles spanning it and the statement
      // are skipped, the others run unclipped.
      Value *inside = b_.getTrue();
      std::array<Value *, kNumDims> noneInside{}, stepDead{};
      for (size_t d = 0; d < kNumDims; ++d) {
        if (d == idx(Dim::Xi) || d == idx(Dim::Yi))
          continue;
        int64_t least = 0, most = 0;
        for (const PlanMove &s : pl.stacks)
          (s.amount[d] < 0 ? least : most) += (s.count - 1) * s.amount[d];
        Value *first = b_.CreateAdd(stepShift[d], c(least)), *last = b_.CreateAdd(stepShift[d], c(most));
        noneInside[d] = b_.CreateOr(b_.CreateICmpSGE(first, parent.hi[d]),
                                    b_.CreateICmpSLE(b_.CreateAdd(last, c(pl.extent[d])), parent.lo[d]));
        Value *within = b_.CreateICmpSGE(first, parent.lo[d]);
        const bool mayDie = inStatement(static_cast<Dim>(d));
        // A stack moving d alone (an uneven one's last trip past the parent's
        // end along d): its units starting before that end run inside along
        // d, those after it dead along d; where they would do nothing (every
        // role they check empty along d, or not checked at this step) only
        // the first run.
        std::optional<size_t> i;
        if (mayDie)
          i = soleStack(pl, static_cast<Dim>(d));
        if (i) {
          const int64_t a = pl.stacks[*i].amount[d], count = pl.stacks[*i].count;
          Value *n = smin(c(count), smax(c(0), b_.CreateSDiv(b_.CreateSub(parent.hi[d], b_.CreateSub(first, c(a - 1))),
                                                             c(a))));
          Value *lastEnd = b_.CreateAdd(first, b_.CreateAdd(b_.CreateMul(b_.CreateSub(n, c(1)), c(a)), c(pl.extent[d])));
          inside = b_.CreateAnd(inside, b_.CreateAnd(within, b_.CreateOr(b_.CreateICmpSLE(n, c(0)),
                                                                         b_.CreateICmpSLE(lastEnd, parent.hi[d]))));
          // Without counters a unit past the end only fills words it never
          // reads, or starts partial sums of the identity: none of it runs.
          stackTrips[*i] = counters_ ? b_.CreateSelect(idleWithout(static_cast<Dim>(d), same), n, c(count)) : n;
          deadFrom[*i] = {d, n};
          continue;
        }
        within = b_.CreateAnd(within, b_.CreateICmpSLE(b_.CreateAdd(last, c(pl.extent[d])), parent.hi[d]));
        if (mayDie) {
          within = b_.CreateOr(within, noneInside[d]);
          stepDead[d] = noneInside[d];
        }
        inside = b_.CreateAnd(inside, within);
      }
      // A step where every unit's box of each role it checks is empty (its
      // tiles past the parent's edge along a dim of the role, as an uneven
      // stack's last trip is) and so is its statement's does nothing.
      Value *idle = b_.getFalse();
      for (Dim d : looped)
        idle = b_.CreateOr(idle, noneInside[idx(d)]);
      for (const PlanRole &r : p_.roles) {
        if (!r.present)
          continue;
        Value *empty = b_.getFalse();
        for (size_t d = 0; d < kNumDims; ++d)
          if (noneInside[d] && boxAlong(r.role, static_cast<Dim>(d)))
            empty = b_.CreateOr(empty, noneInside[d]);
        idle = b_.CreateAnd(idle, same[idx(r.role)] ? b_.CreateOr(same[idx(r.role)], empty) : empty);
      }
      ifThen(b_.CreateNot(idle), [&] {
        auto unclippedUnits = [&] { stacks(0, c(0), shared, none, stepDead, false); };
        if (onlyUnclipped)
          return unclippedUnits();
        ifThen(inside, unclippedUnits, clippedUnits);
      });
    };
    loops(0);
  }

  /// The dims the statement loops over (a channel-wise layer's K is C).
  std::vector<Dim> statementDims() const {
    if (p_.channelWise)
      return {Dim::N, Dim::C, Dim::Xo, Dim::Yo, Dim::R, Dim::S};
    return {Dim::N, Dim::K, Dim::Xo, Dim::Yo, Dim::C, Dim::R, Dim::S};
  }

  /// Whether the statement reads input role r from the buffer of the level
  /// above the PEs': the PE level does not hold r (a bypass), so its buffer
  /// would only stage a copy of the words it reads there (inputs are constant
  /// while the layer runs, and such staging counts nothing), and is not kept.
  bool readsAbove(TensorRole r) const { return nOn() > 1 && r != p_.output && !stores(0, r); }

  /// Where the statement reads a role: the array, the unit's words' first
  /// index in it, the box the words are laid out from and its extents, and
  /// the words of one operand's tile (add, mul: one after the other).
  struct Operand {
    int slot = -1;
    Value *base = nullptr;
    Box lo;
    std::vector<int64_t> extent;
    int64_t opWords = 0;
  };

  /// The statement over a PE's tile, on its buffers (`lo`: the real boxes'
  /// lower corners), or its parent's where it reads a role above
  /// (`parentLo`).
  void compute(const std::array<Value *, kNumRoles> &units, const Position &pos, const std::array<Box, kNumRoles> &lo,
               const std::array<Box, kNumRoles> &parentLo) {
    const std::vector<Dim> dims = statementDims();
    Box blo, bhi;
    for (Dim d : dims)
      blo.push_back(pos.lo[idx(d)]), bhi.push_back(pos.hi[idx(d)]);
    ifThen(b_.CreateNot(emptyAt(pos, blo, bhi)), [&] {
      Value *points = c(1);
      for (size_t i = 0; i < dims.size(); ++i)
        points = b_.CreateMul(points, b_.CreateSub(bhi[i], blo[i]));
      // The statement's operations (docs/directives.md §7): a concatenation's
      // copies are none; n operands take n - 1 additions or products.
      // A guarded domain (a causal mask) counts its points one by one, below.
      auto countPoints = [&](Value *points) {
        if (p_.statement == Statement::Copy || !counters_)
          return;
        const int64_t perPoint = p_.opsPerPoint ? p_.opsPerPoint : std::max<int64_t>(1, ops(TensorRole::Ifm) - 1);
        countAt(code_.counters.macs(), b_.CreateMul(points, c(perPoint)));
        // At the innermost level holding each role (§6 "Bypass").
        for (const PlanRole &r : p_.roles)
          if (r.present)
            count(p_.innermostHolder[idx(r.role)], r.role, kReads, b_.CreateMul(points, c(ops(r.role))));
        count(p_.innermostHolder[idx(p_.output)], p_.output, kWrites, points);
      };
      if (p_.guard.empty())
        countPoints(points);
      const PlanLevel &pe = p_.levels[0];
      std::array<Operand, kNumRoles> operands{};
      for (const PlanRole &r : p_.roles)
        if (r.present) {
          const size_t l = readsAbove(r.role) ? 1 : 0;
          const PlanLevel &from = p_.levels[l];
          operands[idx(r.role)] = {buffer_[l][idx(r.role)],
                                   b_.CreateMul(l ? pos.parentUnitOf[idx(r.role)] : units[idx(r.role)],
                                                c(bufferWords(l, r.role))),
                                   l ? parentLo[idx(r.role)] : lo[idx(r.role)], extentsAt(from.extent, r.role),
                                   from.tileWords[idx(r.role)]};
        }
      // A dim the PE's tile spans one index of takes no loop.
      Box llo, lhi, zero, extent;
      Value *full = b_.getTrue();
      for (size_t i = 0; i < dims.size(); ++i)
        if (const int64_t e = at(pe.extent, dims[i]); e != 1) {
          llo.push_back(blo[i]), lhi.push_back(bhi[i]), zero.push_back(c(0)), extent.push_back(c(e));
          full = b_.CreateAnd(full, b_.CreateICmpEQ(b_.CreateSub(bhi[i], blo[i]), c(e)));
        }
      auto statementAt = [&](const Box &pt) { pointStatement(dims, pt, blo, operands, countPoints); };
      // A full tile, as most are, loops over constant trip counts, which -O2
      // unrolls or vectorizes to fit; a partial one (at the layer's edges)
      // over its real box, neither vectorized nor unrolled (less code).
      ifThen(
          full,
          [&] {
            hot_ = true;
            forBox(zero, extent, [&](const Box &offset) {
              Box pt;
              for (size_t j = 0; j < offset.size(); ++j)
                pt.push_back(b_.CreateAdd(llo[j], offset[j]));
              statementAt(pt);
            });
            hot_ = false;
          },
          [&] { forBox(llo, lhi, statementAt); });
    });
  }

  /// The statement at one point `pt` of a PE's tile (its looped dims; the
  /// others at `blo`), on the roles' `operands`.
  void pointStatement(const std::vector<Dim> &dims, const Box &pt, const Box &blo,
                      const std::array<Operand, kNumRoles> &operands, const std::function<void(Value *)> &countPoints) {
    const PlanLevel &pe = p_.levels[0];
    std::array<Value *, kNumDims> v{};
    for (size_t i = 0, j = 0; i < dims.size(); ++i)
      v[idx(dims[i])] = at(pe.extent, dims[i]) != 1 ? pt[j++] : blo[i];
    v[idx(Dim::K)] = p_.channelWise ? v[idx(Dim::C)] : v[idx(Dim::K)];
    v[idx(Dim::Xi)] = b_.CreateAdd(b_.CreateMul(v[idx(Dim::Xo)], c(p_.axes.x.stride)),
                                    b_.CreateMul(v[idx(Dim::R)], c(p_.axes.x.dilation)));
    v[idx(Dim::Yi)] = b_.CreateAdd(b_.CreateMul(v[idx(Dim::Yo)], c(p_.axes.y.stride)),
                                    b_.CreateMul(v[idx(Dim::S)], c(p_.axes.y.dilation)));
    auto statement = [&] {
      auto at = [&](TensorRole r) {
        const Operand &o = operands[idx(r)];
        Box point;
        for (Dim d : p_.role(r).dims)
          point.push_back(v[idx(d)]);
        return b_.CreateAdd(o.base, linear(point, o.lo, o.extent));
      };
      auto read = [&](TensorRole r, int64_t op = 0) {
        const Operand &o = operands[idx(r)];
        return load(o.slot, op ? b_.CreateAdd(at(r), c(op * o.opWords)) : at(r));
      };
      const TensorRole out = p_.output;
      Value *outAt = at(out);
      Value *acc = load(operands[idx(out)].slot, outAt);
      // The statement's input: ifm forward; a backward layer's other activation.
      const TensorRole inRole = out == TensorRole::Ifm ? TensorRole::Ofm : TensorRole::Ifm;
      Value *in = read(inRole);
      auto operand = [&](int64_t op) { return read(TensorRole::Ifm, op); };
      Value *result;
      switch (p_.statement) {
      case Statement::Add:
      case Statement::Mul:
        if (out == TensorRole::Wgt) {   // a broadcast operand's gradient: Σ dY (add), Σ x·dY (mul)
          Value *dy = read(TensorRole::Ofm);
          result = b_.CreateAdd(acc, p_.statement == Statement::Add ? dy : b_.CreateMul(in, dy));
          break;
        }
        result = in;
        for (int64_t op = 1; op < ops(TensorRole::Ifm); ++op)
          result = p_.statement == Statement::Add ? b_.CreateAdd(result, operand(op)) : b_.CreateMul(result, operand(op));
        if (p_.role(TensorRole::Wgt).present) {   // a broadcast operand, read as the wgt
          Value *w = read(TensorRole::Wgt);
          result = p_.statement == Statement::Add ? b_.CreateAdd(result, w) : b_.CreateMul(result, w);
        }
        result = b_.CreateAdd(acc, result);
        break;
      case Statement::Copy:
      case Statement::Softmax:     // normalized as it leaves the chip (normalizeRows)
      case Statement::LayerNorm:
      case Statement::RmsNorm: result = b_.CreateAdd(acc, in); break;
      case Statement::Unary:   // backward: dY alone (docs/simulator.md, "Training")
        result = b_.CreateAdd(acc, out == TensorRole::Ofm ? unary(in) : in);
        break;
      case Statement::Mac: {
        // The product of the two roles not written.
        const TensorRole other = out == TensorRole::Wgt ? TensorRole::Ofm : TensorRole::Wgt;
        result = b_.CreateAdd(acc, b_.CreateMul(in, read(other)));
        break;
      }
      case Statement::Rope: result = b_.CreateAdd(acc, rope(v, in, operand(1))); break;
      case Statement::Bilinear: result = b_.CreateAdd(acc, bilinear(v, in)); break;
      case Statement::Max: result = combine(acc, in); break;
      case Statement::Average:
        result = b_.CreateAdd(acc, b_.CreateSDiv(in, b_.getInt32(static_cast<uint32_t>(p_.window))));
        break;
      default: DFLC_UNREACHABLE("planKernel admits no other statement");
      }
      store(operands[idx(out)].slot, outAt, result);
    };
    if (p_.guard.empty())
      return statement();
    ifThen(guardHolds(v), [&] {
      countPoints(c(1));
      statement();
    });
  }

  /// Whether the nest's domain guard holds at the canonical coordinates v:
  /// each iteration dim recovered as (v[from] / divisor) mod extent.
  Value *guardHolds(const std::array<Value *, kNumDims> &v) {
    Value *holds = b_.getTrue();
    for (const AffineExpr &g : p_.guard) {
      Value *sum = c(g.constant);
      for (auto [dim, coeff] : g.terms)
        sum = b_.CreateAdd(sum, b_.CreateMul(iterValue(v, dim), c(coeff)));
      holds = b_.CreateAnd(holds, b_.CreateICmpSGE(sum, c(0)));
    }
    return holds;
  }

  /// Iteration dim `dim` of the nest at the canonical coordinates v.
  Value *iterValue(const std::array<Value *, kNumDims> &v, int dim) {
    const PlanIterDim &f = p_.iterDims.at(static_cast<size_t>(dim));
    return b_.CreateSRem(b_.CreateSDiv(v[idx(f.from)], c(f.divisor)), c(f.extent));
  }

  /// rope's integer form (model/LoopNest.h, docs/simulator.md): (x·cos ∓
  /// partner·sin) / 16, − in the first half, cos and sin from one table of 8.
  Value *rope(const std::array<Value *, kNumDims> &v, Value *x, Value *partner) {
    if (!ropeTable_)
      ropeTable_ = table(std::vector<int64_t>(std::begin(kRopeCos16), std::end(kRopeCos16)), "rope_cos16");
    Value *pair = iterValue(v, p_.ropePair);
    Value *position = b_.CreateAdd(iterValue(v, p_.ropeToken), c(p_.ropePos));
    Value *shift = b_.CreateSelect(b_.CreateICmpSLT(pair, c(62)), pair, c(62));
    Value *a = b_.CreateAnd(b_.CreateAShr(position, shift), c(7));
    Value *cos = b_.CreateTrunc(tableAt(ropeTable_, 8, a), i32_);
    Value *sin = b_.CreateTrunc(tableAt(ropeTable_, 8, b_.CreateAnd(b_.CreateAdd(a, c(6)), c(7))), i32_);
    Value *second = b_.CreateICmpEQ(iterValue(v, p_.ropeHalf), c(1));
    sin = b_.CreateSelect(second, sin, b_.CreateNeg(sin));
    return b_.CreateSDiv(b_.CreateAdd(b_.CreateMul(x, cos), b_.CreateMul(partner, sin)), b_.getInt32(16));
  }

  /// bilinear upsample's term (model/LoopNest.h): x·wx·wy / (4·sx·sy), in
  /// 32-bit products and rounded toward zero as the reference's; a tap whose
  /// partner lies past the input's edge weighs 2s (the partner reads padding).
  Value *bilinear(const std::array<Value *, kNumDims> &v, Value *x) {
    Value *term = x;
    for (const KernelPlan::BilinearAxis &a : p_.bilinear) {
      const int64_t s = a.scale;
      Value *p = iterValue(v, a.phase), *u = iterValue(v, a.tap), *q = iterValue(v, a.position);
      Value *b = b_.CreateZExt(b_.CreateICmpSGE(b_.CreateAdd(b_.CreateMul(p, c(2)), c(1)), c(s)), i64_);
      Value *far = b_.CreateSub(b_.CreateAdd(b_.CreateMul(p, c(2)), c(1 + s)), b_.CreateMul(b, c(2 * s)));
      Value *w = b_.CreateSelect(b_.CreateICmpEQ(u, b_.CreateAdd(b, c(1))), far, b_.CreateSub(c(2 * s), far));
      Value *partner = b_.CreateSub(b_.CreateAdd(q, b_.CreateMul(b, c(2))), u);   // q − 1 + (2b + 1 − u)
      Value *inside = b_.CreateAnd(b_.CreateICmpSGE(partner, c(0)), b_.CreateICmpSLT(partner, c(a.extent)));
      w = b_.CreateSelect(inside, w, c(2 * s));
      term = b_.CreateMul(term, b_.CreateTrunc(w, i32_));
    }
    const int64_t d = 4 * p_.bilinear[0].scale * p_.bilinear[1].scale;
    return b_.CreateTrunc(b_.CreateSDiv(b_.CreateSExt(term, i64_), c(d)), i32_);
  }

  void emitKernel() {
    auto *fn = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), {slotsTy_}, false),
                                      llvm::Function::ExternalLinkage, code_.function, *code_.module);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    Value *slots = fn->getArg(0);
    loadSlots(slots);
    Position top;
    top.unitOf.fill(c(0));
    for (size_t d = 0; d < kNumDims; ++d) {
      top.origin[d] = c(0);
      top.lo[d] = c(0);
      top.hi[d] = c(p_.bounds[d]);
    }
    std::array<Box, kNumRoles> topLo{};
    size_t outer = nOn() - 1;
    emitLevel(outer, slots, c(0), top, topLo, {});
    // The residencies still open end: every unit of the outermost on-chip level writes back.
    forLoop(c(0), c(p_.levels[outer].units), [&](Value *u) { b_.CreateCall(evictFns_[outer], {slots, u}); });
    if (p_.rows > 0)
      normalizeRows();
    // Fused activations, on each final output as it leaves the chip.
    if (!p_.activations.empty()) {
      int out = code_.tensorSlot[idx(p_.output)];
      forLoop(c(0), c(p_.tensorWords(p_.output)), [&](Value *i) {
        Value *x = load(out, i);
        for (const std::string &a : p_.activations)
          x = activate(a, x);
        store(out, i, x);
      });
    }
    ret();
  }

  /// The unary function's integer form (docs/simulator.md): sigmoid the fused
  /// sigmoid's; silu x·sigmoid(x)/16 between −2.0 and 2.0; gelu
  /// x·(7x/16 + 8)/16 between −19 and 19.
  Value *unary(Value *x) {
    auto k = [&](int32_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
    Value *sigmoid = activate("sigmoid", x);
    // x at and above `limit`, 0 at and below -limit, else mid.
    auto within = [&](int32_t limit, Value *mid) {
      return b_.CreateSelect(b_.CreateICmpSGE(x, k(limit)), x,
                             b_.CreateSelect(b_.CreateICmpSLE(x, k(-limit)), k(0), mid));
    };
    switch (p_.unary) {
    case UnaryFn::Sigmoid: return sigmoid;
    case UnaryFn::Silu: return within(32, b_.CreateSDiv(b_.CreateMul(x, sigmoid), k(16)));
    case UnaryFn::Gelu: {
      Value *steep = b_.CreateAdd(b_.CreateSDiv(b_.CreateMul(x, k(7)), k(16)), k(8));
      return within(19, b_.CreateSDiv(b_.CreateMul(x, steep), k(16)));
    }
    }
    DFLC_UNREACHABLE("UnaryFn " + std::to_string(static_cast<int>(p_.unary)));
  }

  /// A softmax's, layernorm's or rmsnorm's rows, normalized in the output as it leaves
  /// the chip. Whole rows in the outermost on-chip level: its statistics pass
  /// reads the input there once more. Split rows: each statistics pass
  /// streams the row from DRAM into that level and reads it there, counted
  /// per word the pass folds (docs/directives.md §7, "Rows and the passes").
  /// In 64 bits; the fixed-point forms of docs/simulator.md.
  void normalizeRows() {
    const bool causal = p_.causalOffset >= 0, split = p_.rowsSplit;
    // The statistics passes read the outermost on-chip level holding the
    // input, DRAM if none does (§6 "Bypass").
    const size_t statsAt = p_.statisticsLevel;
    if (!split || statsAt == nOn()) {
      Value *words = c(p_.statisticsWords * (split ? p_.statisticsPasses() : 1));
      count(statsAt, TensorRole::Ifm, kReads, words);
      if (statsAt == nOn())
        countAt(code_.counters.sourceReads(TensorRole::Ifm, 0), words);
    }
    const int out = code_.tensorSlot[idx(p_.output)];
    const int64_t L = p_.rowLength, B = p_.rowStride;
    llvm::BasicBlock &entry = b_.GetInsertBlock()->getParent()->getEntryBlock();
    llvm::IRBuilder<> at(&entry, entry.begin());
    llvm::AllocaInst *acc = at.CreateAlloca(i64_), *acc2 = at.CreateAlloca(i64_);
    forLoop(c(0), c(p_.rows), [&](Value *a) {
      forLoop(c(0), c(B), [&](Value *bIndex) {
        Value *base = b_.CreateAdd(b_.CreateMul(a, c(L * B)), bIndex);
        auto word = [&](Value *j) { return b_.CreateAdd(base, b_.CreateMul(j, c(B))); };
        auto value = [&](Value *j) { return b_.CreateSExt(load(out, word(j)), i64_); };
        // A causal row sees its words j < seen = min(L, b + offset + 1) (b the
        // query position), read once by the statistics pass; the rest are 0.
        Value *seen = causal ? smin(c(L), b_.CreateAdd(bIndex, c(p_.causalOffset + 1))) : c(L);
        // A statistics pass over a split row: its `seen` words from DRAM
        // into the outermost on-chip level, and read there.
        auto streamed = [&]() {
          if (!split || statsAt == nOn())
            return;
          count(nOn(), TensorRole::Ifm, kReads, seen);
          countAt(code_.counters.sourceReads(TensorRole::Ifm, 0), seen);
          count(statsAt, TensorRole::Ifm, kWrites, seen);
          count(statsAt, TensorRole::Ifm, kReads, seen);
        };
        // Pass j over the row: acc := f(acc, v_j), from `init`.
        auto fold = [&](llvm::AllocaInst *into, Value *init, const std::function<Value *(Value *, Value *)> &f) {
          streamed();
          b_.CreateStore(init, into);
          forLoop(c(0), seen, [&](Value *j) { b_.CreateStore(f(b_.CreateLoad(i64_, into), value(j)), into); });
          return b_.CreateLoad(i64_, into);
        };
        auto writeRow = [&](const std::function<Value *(Value *)> &f) {
          forLoop(c(0), seen, [&](Value *j) { store(out, word(j), b_.CreateTrunc(f(value(j)), i32_)); });
          forLoop(seen, c(L), [&](Value *j) { store(out, word(j), b_.getInt32(0)); });
        };
        if (p_.statement == Statement::Softmax) {
          Value *m = fold(acc, c(INT64_MIN), [&](Value *s, Value *v) { return smax(s, v); });
          // e ≈ 2^16·exp(−(m − v)/16): t = 23·(m − v)/16, (2^16 >> ⌊t/16⌋)·(32 − t mod 16)/32.
          auto exp = [&](Value *v) {
            Value *t = b_.CreateSDiv(b_.CreateMul(b_.CreateSub(m, v), c(23)), c(16));
            Value *q = smin(b_.CreateSDiv(t, c(16)), c(17));
            return b_.CreateSDiv(b_.CreateMul(b_.CreateAShr(c(65536), q), b_.CreateSub(c(32), b_.CreateSRem(t, c(16)))),
                                 c(32));
          };
          Value *sum = fold(acc2, c(0), [&](Value *s, Value *v) { return b_.CreateAdd(s, exp(v)); });
          writeRow([&](Value *v) { return b_.CreateSDiv(b_.CreateMul(c(16), exp(v)), sum); });
        } else {
          auto sat = [&](Value *v) { return smin(smax(v, c(-32768)), c(32767)); };
          const bool rms = p_.statement == Statement::RmsNorm;
          Value *mean = nullptr, *squares = nullptr;
          if (split) {
            // One pass for Σv and Σv² together; Σ(v − μ)² = Σv² − 2μΣv + Lμ²
            // holds in integers for the integer μ, so the reference's
            // two-pass form is matched word for word.
            streamed();
            b_.CreateStore(c(0), acc);
            b_.CreateStore(c(0), acc2);
            forLoop(c(0), seen, [&](Value *j) {
              Value *v = sat(value(j));
              b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64_, acc), v), acc);
              b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64_, acc2), b_.CreateMul(v, v)), acc2);
            });
            Value *sum = b_.CreateLoad(i64_, acc), *sumSq = b_.CreateLoad(i64_, acc2);
            mean = rms ? c(0) : b_.CreateSDiv(sum, c(L));
            squares = b_.CreateAdd(b_.CreateSub(sumSq, b_.CreateMul(c(2), b_.CreateMul(mean, sum))),
                                   b_.CreateMul(c(L), b_.CreateMul(mean, mean)));
          } else {
            // rmsnorm: layernorm's form with the mean 0 (σ the root mean square).
            mean = rms ? c(0)
                       : b_.CreateSDiv(fold(acc, c(0), [&](Value *s, Value *v) { return b_.CreateAdd(s, sat(v)); }), c(L));
            squares = fold(acc2, c(0), [&](Value *s, Value *v) {
              Value *d = b_.CreateSub(sat(v), mean);
              return b_.CreateAdd(s, b_.CreateMul(d, d));
            });
          }
          auto dev = [&](Value *v) { return b_.CreateSub(sat(v), mean); };
          Value *variance = b_.CreateSDiv(squares, c(L));
          // ⌊√variance⌋ bit by bit (variance < 2^34, so the root < 2^17).
          Value *root = c(0);
          for (int bit = 17; bit-- > 0;) {
            Value *tryRoot = b_.CreateOr(root, c(int64_t{1} << bit));
            root = b_.CreateSelect(b_.CreateICmpSLE(b_.CreateMul(tryRoot, tryRoot), variance), tryRoot, root);
          }
          Value *sigma = smax(root, c(1));
          writeRow([&](Value *v) { return b_.CreateSDiv(b_.CreateMul(c(16), dev(v)), sigma); });
        }
      });
    });
  }

  /// A fused activation's integer form (docs/simulator.md): fixed point with
  /// four fraction bits, 16 standing for 1.
  Value *activate(const std::string &a, Value *x) {
    auto k = [&](int32_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
    auto clamp = [&](Value *v, int32_t lo, int32_t hi) { return smin(smax(v, k(lo)), k(hi)); };
    auto div = [&](Value *v, int32_t d) { return b_.CreateSDiv(v, k(d)); };
    if (a == "identity")
      return x;
    if (a == "relu")
      return smax(x, k(0));
    if (a == "relu6")
      return clamp(x, 0, 6 * 16);
    if (a == "hardswish") {
      Value *mid = div(b_.CreateMul(x, b_.CreateAdd(x, k(48))), 96);
      return b_.CreateSelect(b_.CreateICmpSGE(x, k(48)), x, b_.CreateSelect(b_.CreateICmpSLE(x, k(-48)), k(0), mid));
    }
    if (a == "sigmoid")
      return clamp(b_.CreateAdd(div(x, 4), k(8)), 0, 16);
    if (a == "tanh")
      return clamp(x, -16, 16);
    if (a == "batchnorm")
      return b_.CreateAdd(div(x, 2), k(1));
    DFLC_UNREACHABLE("activation '" + a + "'");
  }

  const KernelPlan &p_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  KernelFault fault_;
  bool counters_;
  double unclippedSteps_;
  std::vector<std::array<Unclipped, kNumDims>> unclipped_;   // unclippedEnds
  bool hot_ = false;   // emitting the statement's loops
  KernelCode code_;
  llvm::Type *i8_ = nullptr, *i32_ = nullptr, *i64_ = nullptr, *slotsTy_ = nullptr;
  int stepSlot_ = -1;
  std::vector<std::array<int, kNumRoles>> buffer_, state_, stamps_;
  std::vector<std::array<StateCode, kNumRoles>> stateCode_;
  std::vector<int> visited_;
  std::array<std::vector<int>, kNumRoles> sourceSlot_;        // per role, per DRAM tensor
  std::array<std::vector<int64_t>, kNumRoles> sourceBase_;    // its first word among the role's
  std::vector<Value *> ptrs_;
  Value *slots_ = nullptr;   // the function's table of slot pointers
  /// Per role, a concatenation's tables: first channels, channels, bases.
  std::array<std::array<llvm::GlobalVariable *, 3>, kNumRoles> operandTables_{};
  llvm::GlobalVariable *ropeTable_ = nullptr;   // rope: kRopeCos16
  std::map<size_t, llvm::AllocaInst *> accumulators_;   // of the function being emitted
  std::vector<std::pair<llvm::MDNode *, llvm::MDNode *>> scopes_;   // per slot: its alias scope, all others
  std::vector<llvm::Function *> evictFns_;
};

} // namespace

KernelCode generateKernel(const KernelPlan &plan, llvm::LLVMContext &ctx, const KernelOptions &options) {
  return Codegen(plan, ctx, options).run();
}

} // namespace dfl::sim
