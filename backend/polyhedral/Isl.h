// RAII for isl's C API (isl 0.25), the one place backend code holds raw isl
// pointers: each handle owns its object (__isl_give in, freed once), hands a
// copy to a __isl_take argument with copy() and lends it with get().
//
// The context reports errors by returning NULL (ISL_ON_ERROR_CONTINUE), never
// by aborting; check() turns a NULL into an internal compiler error, since
// every set and map here is built by dflc from a checked model.
// Internal to backend/: public headers never include it.
#pragma once

#include "support/Check.h"

#include <isl/aff.h>
#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/ctx.h>
#include <isl/id.h>
#include <isl/ilp.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/printer.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dfl::isl {

template <class T, auto Free, auto Copy> class Handle {
public:
  Handle() = default;
  explicit Handle(T *p) : p_(p) {}
  Handle(const Handle &o) : p_(o.p_ ? Copy(o.p_) : nullptr) {}
  Handle(Handle &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Handle &operator=(Handle o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Handle() {
    if (p_)
      Free(p_);
  }
  T *get() const { return p_; }
  T *copy() const { return Copy(p_); }
  T *release() { return std::exchange(p_, nullptr); }
  explicit operator bool() const { return p_ != nullptr; }

private:
  T *p_ = nullptr;
};

using Set = Handle<isl_set, isl_set_free, isl_set_copy>;
using Map = Handle<isl_map, isl_map_free, isl_map_copy>;
using PwAff = Handle<isl_pw_aff, isl_pw_aff_free, isl_pw_aff_copy>;
using PwMultiAff = Handle<isl_pw_multi_aff, isl_pw_multi_aff_free, isl_pw_multi_aff_copy>;
using AstNode = Handle<isl_ast_node, isl_ast_node_free, isl_ast_node_copy>;
using AstExpr = Handle<isl_ast_expr, isl_ast_expr_free, isl_ast_expr_copy>;

/// isl stopped at its context's operation limit (isl_ctx_set_max_operations):
/// not a bug of dflc but a problem too large; the caller says which.
struct OperationLimit : std::runtime_error {
  OperationLimit(unsigned long limit, const std::string &what)
      : std::runtime_error("isl reached its limit of " + std::to_string(limit) + " operations (" + what + ")"),
        limit(limit) {}
  unsigned long limit;
};

/// Owns an isl_ctx; destroy it after every object made in it (declare it
/// first). It is the thread's current context while it lives, so a failure
/// can tell an operation limit from a bug. `maxOperations` 0: no limit.
class Ctx {
public:
  explicit Ctx(unsigned long maxOperations = 0) : ctx_(isl_ctx_alloc()), outer_(current()) {
    isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);
    isl_ctx_set_max_operations(ctx_, maxOperations);
    current() = this;
  }
  ~Ctx() {
    current() = outer_;
    isl_ctx_free(ctx_);
  }
  Ctx(const Ctx &) = delete;
  Ctx &operator=(const Ctx &) = delete;
  isl_ctx *get() const { return ctx_; }
  /// The innermost context alive on this thread (null: none).
  static Ctx *&current() {
    static thread_local Ctx *c = nullptr;
    return c;
  }

private:
  isl_ctx *ctx_;
  Ctx *outer_;
};

/// isl failed at `what`: OperationLimit if the current context hit its
/// operation limit, else an internal compiler error.
[[noreturn]] inline void failed(const std::string &what) {
  if (Ctx *c = Ctx::current(); c && isl_ctx_last_error(c->get()) == isl_error_quota)
    throw OperationLimit(isl_ctx_get_max_operations(c->get()), what);
  DFLC_CHECK(false) << "isl: " << what << " failed";
  std::abort();   // not reached: DFLC_CHECK(false) throws
}

/// Throws OperationLimit if `c` hit its operation limit: after a stage whose
/// failures isl may have passed on silently (a NULL read as a size).
inline void checkLimit(const Ctx &c, const std::string &what) {
  if (isl_ctx_last_error(c.get()) == isl_error_quota)
    throw OperationLimit(isl_ctx_get_max_operations(c.get()), what);
}

/// A result isl gave: non-NULL, or failed(what).
template <class H> H check(H h, const char *what) {
  if (!h)
    failed(what);
  return h;
}

inline Set readSet(const Ctx &c, const std::string &text) {
  return check(Set(isl_set_read_from_str(c.get(), text.c_str())), ("parsing " + text).c_str());
}
inline Map readMap(const Ctx &c, const std::string &text) {
  return check(Map(isl_map_read_from_str(c.get(), text.c_str())), ("parsing " + text).c_str());
}

/// isl's text of an object, with a printer function such as isl_map_to_str.
template <class T> std::string str(char *(*print)(T *), T *obj) {
  char *s = print(obj);
  std::string out = s ? s : "";
  std::free(s);
  return out;
}
inline std::string str(const Map &m) { return str(isl_map_to_str, m.get()); }
inline std::string str(const Set &s) { return str(isl_set_to_str, s.get()); }

/// Relational algebra on maps, each taking copies of its operands.
inline Map applyRange(const Map &a, const Map &b) { return Map(isl_map_apply_range(a.copy(), b.copy())); }
inline Map reverse(const Map &a) { return Map(isl_map_reverse(a.copy())); }
inline Map lexmax(const Map &a) { return Map(isl_map_lexmax(a.copy())); }
inline Map unite(const Map &a, const Map &b) { return Map(isl_map_union(a.copy(), b.copy())); }
inline Set domain(const Map &a) { return Set(isl_map_domain(a.copy())); }
inline Set range(const Map &a) { return Set(isl_map_range(a.copy())); }
inline Map intersectDomain(const Map &a, const Set &s) { return Map(isl_map_intersect_domain(a.copy(), s.copy())); }
inline Map intersectRange(const Map &a, const Set &s) { return Map(isl_map_intersect_range(a.copy(), s.copy())); }
/// { x -> y : x in a, y in b, x >= y lexicographically }.
inline Map lexGe(const Set &a, const Set &b) { return Map(isl_set_lex_ge_set(a.copy(), b.copy())); }
inline bool isEmpty(const Map &a) { return isl_map_is_empty(a.get()) == isl_bool_true; }
inline bool isEmpty(const Set &a) { return isl_set_is_empty(a.get()) == isl_bool_true; }

/// Visits every point of a bounded set, as its coordinates.
template <class F> void forEachPoint(const Set &s, F &&f) {
  auto visit = [](isl_point *pt, void *user) -> isl_stat {
    isl_space *space = isl_point_get_space(pt);
    isl_size n = isl_space_dim(space, isl_dim_set);
    isl_space_free(space);
    std::vector<int64_t> coords(static_cast<size_t>(n));
    for (isl_size i = 0; i < n; ++i) {
      isl_val *v = isl_point_get_coordinate_val(pt, isl_dim_set, i);
      coords[static_cast<size_t>(i)] = isl_val_get_num_si(v);
      isl_val_free(v);
    }
    isl_point_free(pt);
    (*static_cast<F *>(user))(coords);
    return isl_stat_ok;
  };
  if (!s || isl_set_foreach_point(s.get(), visit, &f) != isl_stat_ok)
    failed("enumerating " + (s ? str(s) : std::string("a set isl could not compute")));
}

/// Visits every pair of a bounded map: (domain point, range point).
template <class F> void forEachPair(const Map &m, F &&f) {
  size_t in = static_cast<size_t>(isl_map_dim(m.get(), isl_dim_in));
  forEachPoint(Set(isl_map_wrap(m.copy())), [&](const std::vector<int64_t> &c) {
    f(std::vector<int64_t>(c.begin(), c.begin() + static_cast<long>(in)),
      std::vector<int64_t>(c.begin() + static_cast<long>(in), c.end()));
  });
}

/// The number of points of a bounded set: a box's extents multiplied, else
/// counted point by point.
inline int64_t count(const Set &s) {
  if (isEmpty(s))
    return 0;
  if (isl_set_is_box(s.get()) == isl_bool_true) {
    int64_t n = 1;
    isl_size dims = isl_set_dim(s.get(), isl_dim_set);
    for (isl_size i = 0; i < dims; ++i) {
      isl_val *lo = isl_set_dim_min_val(s.copy(), i), *hi = isl_set_dim_max_val(s.copy(), i);
      n *= isl_val_get_num_si(hi) - isl_val_get_num_si(lo) + 1;
      isl_val_free(lo);
      isl_val_free(hi);
    }
    return n;
  }
  isl_val *v = isl_set_count_val(s.get());
  int64_t n = isl_val_get_num_si(v);
  isl_val_free(v);
  return n;
}

} // namespace dfl::isl
