// A pipelined segment's steps as boxes (scheduler/analysis/StepBoxes.h).
#include "scheduler/analysis/StepBoxes.h"

#include "support/Check.h"
#include "support/IntMath.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>

namespace dfl {

namespace {

/// The least v in [lo, hi) at which `holds` holds, hi if none: a binary
/// search, for `holds` false up to some value and true from it on. Its mirror,
/// the greatest v at which a predicate true then false holds, is one less
/// than the least at which it fails.
template <class Pred> int64_t leastWhere(int64_t lo, int64_t hi, Pred holds) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (holds(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

void splitRange(const std::vector<int64_t> &strides, size_t k, Interval r, std::vector<Interval> &prefix,
                std::vector<std::vector<Interval>> &out);

/// The canonical box `box` split at its dims' digits, as a product: per dim,
/// `divisors(d, div)` gives the digits' divisors (largest first; none: not
/// split), splitRange cuts the dim's range into runs (one interval a digit),
/// and each element of `out` is replaced by a copy per run, filled in by
/// `put(copy, d, div, run)`. False if `out` would pass `limit` elements.
/// One split for the written side (digitBoxes) and the read side (subCovers).
template <class T, class Divisors, class Put>
bool splitAtDigits(const StepRegion::Cover &box, size_t limit, Divisors divisors, Put put, std::vector<T> &out) {
  std::vector<int64_t> div;
  std::vector<Interval> prefix;
  std::vector<std::vector<Interval>> runs;
  for (Dim d : kIndependentDims) {
    div.clear();
    divisors(d, div);
    if (div.empty())
      continue;
    runs.clear();
    splitRange(div, 0, box[static_cast<size_t>(d)], prefix, runs);
    if (runs.size() == 1) {
      for (T &b : out)
        put(b, d, div, runs[0]);
      continue;
    }
    if (out.size() * runs.size() > limit)
      return false;
    std::vector<T> next;
    next.reserve(out.size() * runs.size());
    for (const T &b : out)
      for (const std::vector<Interval> &run : runs)
        put(next.emplace_back(b), d, div, run);
    out = std::move(next);
  }
  return true;
}

} // namespace

int64_t StepRegion::linear(const std::vector<int64_t> &u) const {
  int64_t n = 0;
  for (size_t i = 0; i < updates.size(); ++i)
    n = n * updates[i].count + u[i];
  return n;
}

std::vector<int64_t> StepRegion::point(int64_t step) const {
  std::vector<int64_t> u(updates.size());
  for (size_t i = updates.size(); i-- > 0;) {
    u[i] = step % updates[i].count;
    step /= updates[i].count;
  }
  return u;
}

StepRegion::Cover StepRegion::cover(const std::vector<int64_t> &u) const {
  Cover box{};
  for (Dim d : kIndependentDims)
    box[static_cast<size_t>(d)] = {0, at(base, d)};
  for (size_t i = 0; i < updates.size(); ++i) {
    Interval &r = box[static_cast<size_t>(updates[i].dim)];
    int64_t a = updates[i].amount;
    if (u[i] == kFree)
      r.hi += (updates[i].count - 1) * a;
    else
      r.lo += u[i] * a, r.hi += u[i] * a;
  }
  for (Dim d : kIndependentDims) {
    Interval &r = box[static_cast<size_t>(d)];
    r.hi = std::min(r.hi, std::max<int64_t>(1, at(bounds, d)) - 1);
  }
  return box;
}

int64_t StepRegion::wholeCoordinate(const AffineExpr &e, Dim d, bool units) const {
  int64_t factor = 0;
  for (size_t i = 0; i < fold.size(); ++i) {
    if (fold[i].from != d || (units && fold[i].extent == 1))
      continue;
    int64_t c = e.coefficient(static_cast<int>(i));
    if (c == 0 || c % fold[i].divisor != 0)
      return 0;
    if (factor == 0)
      factor = c / fold[i].divisor;
    else if (c / fold[i].divisor != factor)
      return 0;
  }
  return factor;
}

void StepRegion::deriveImages() {
  images.clear();
  readers.clear();
  for (size_t k = 0; k < layer->nest.accesses.size(); ++k) {
    const Access &a = layer->nest.accesses[k];
    if (a.role == layer->output)
      continue;
    auto it = std::find_if(readers.begin(), readers.end(), [&](const Readers &r) { return r.tensor == a.tensor; });
    if (it == readers.end())
      it = readers.insert(readers.end(), Readers{a.tensor, {}, {}, {}});
    it->accesses.push_back(k);
  }
  std::array<int64_t, kNumDims> span{};   // per canonical dim, its coordinate's values
  span.fill(1);
  for (const IterDimFold &f : fold)
    span[static_cast<size_t>(f.from)] *= f.extent;
  for (size_t k = 0; k < layer->nest.accesses.size(); ++k) {
    const Access &a = layer->nest.accesses[k];
    std::vector<AffineExpr> &dims = images.emplace_back();
    std::array<bool, kNumDims> wraps{};
    std::vector<unsigned> unordered(a.index.size(), 0);
    for (size_t t = 0; t < a.index.size(); ++t) {
      const AffineExpr &e = a.index[t];
      AffineExpr image(e.constant);
      std::array<bool, kNumDims> whole{};
      for (auto [i, c] : e.terms) {
        const IterDimFold &f = fold[static_cast<size_t>(i)];
        const Dim d = f.from;
        if (whole[static_cast<size_t>(d)])
          continue;
        const int64_t w = wholeCoordinate(e, d);
        const bool alone = std::count_if(fold.begin(), fold.end(), [&](const IterDimFold &x) { return x.from == d; }) == 1;
        if (w != 0 && !alone) {
          whole[static_cast<size_t>(d)] = true;
          image.terms.push_back({static_cast<int>(fold.size() + static_cast<size_t>(d)), w});
          if (w < 0)
            unordered[t] |= 1u << static_cast<unsigned>(d);
        } else {
          image.terms.push_back({i, c});
          // An inner iteration dim of a coordinate folding others: it wraps.
          const bool wrap = c != 0 && f.extent > 1 && f.divisor * f.extent < span[static_cast<size_t>(d)];
          wraps[static_cast<size_t>(d)] |= wrap;
          if (wrap || c < 0)
            unordered[t] |= 1u << static_cast<unsigned>(d);
        }
      }
      dims.push_back(std::move(image));
    }
    if (a.role != layer->output)
      for (Readers &r : readers)
        if (r.tensor == a.tensor) {
          for (size_t d = 0; d < kNumDims; ++d)
            r.wraps[d] = r.wraps[d] || wraps[d];
          r.unordered.resize(std::max(r.unordered.size(), unordered.size()), 0);
          for (size_t t = 0; t < unordered.size(); ++t)
            r.unordered[t] |= unordered[t];
        }
  }
}

void StepRegion::subCovers(const Cover &box, const std::array<bool, kNumDims> &wraps, std::vector<Cover> &out) const {
  out.assign(1, box);
  auto divisors = [&](Dim d, std::vector<int64_t> &div) {   // a wrapping dim's iteration dims'
    if (!wraps[static_cast<size_t>(d)])
      return;
    for (const IterDimFold &f : fold)
      if (f.from == d && f.extent > 1)
        div.push_back(f.divisor);
    std::sort(div.rbegin(), div.rend());
  };
  auto put = [](Cover &c, Dim d, const std::vector<int64_t> &div, const std::vector<Interval> &run) {
    Interval &x = c[static_cast<size_t>(d)];
    x = {0, 0};
    for (size_t k = 0; k < run.size(); ++k)
      x.lo += run[k].lo * div[k], x.hi += run[k].hi * div[k];
  };
  splitAtDigits(box, std::numeric_limits<size_t>::max(), divisors, put, out);
}

void StepRegion::setCover(const Cover &box, Ranges &r) const {
  r.step.resize(fold.size() + kNumDims);
  for (size_t i = 0; i < fold.size(); ++i)
    r.step[i] = foldImage(fold[i], box[static_cast<size_t>(fold[i].from)]);
  std::copy(box.begin(), box.end(), r.step.begin() + static_cast<std::ptrdiff_t>(fold.size()));
}

bool StepRegion::accessReads(size_t k, bool clip, Ranges &r) const {
  const Access &a = layer->nest.accesses[k];
  r.slots = r.step;
  if (clip && !narrowByGuards(a, r.slots))
    return false;
  r.out.resize(a.index.size());
  r.strides.resize(a.index.size());
  for (size_t t = 0; t < a.index.size(); ++t) {
    const AffineExpr &e = images[k][t];
    r.out[t] = affineImage(e, r.slots);
    r.strides[t] = affineStride(e, r.slots);
    // Clipped to the tensor, on the values the index takes (a strided
    // window reads every stride-th row).
    if (clip)
      r.out[t] = onLattice(r.out[t].intersect({0, a.extent[t] - 1}), r.out[t].lo, r.strides[t]);
    if (r.out[t].empty())
      return false;
  }
  return true;
}

const StepRegion::Readers &StepRegion::readersOf(const std::string &tensor) const {
  static const Readers none;
  auto it = std::find_if(readers.begin(), readers.end(), [&](const Readers &r) { return r.tensor == tensor; });
  return it == readers.end() ? none : *it;
}

std::optional<IntervalBox> StepRegion::image(const Access &a, const std::vector<int64_t> &u) const {
  Ranges r;
  setCover(cover(u), r);
  if (!accessReads(static_cast<size_t>(&a - layer->nest.accesses.data()), true, r))
    return std::nullopt;
  return std::move(r.out);
}

void StepRegion::axisHulls(const std::vector<size_t> &accesses, const std::vector<int64_t> &u,
                           std::span<const size_t> axes, std::span<Interval> out) const {
  thread_local Ranges r;
  setCover(cover(u), r);
  std::fill(out.begin(), out.end(), Interval{});
  for (size_t k : accesses)
    if (accessReads(k, true, r))
      for (size_t j = 0; j < axes.size(); ++j)
        out[j] = out[j].hull(r.out[axes[j]]);
}

bool StepRegion::readHull(const std::vector<size_t> &accesses, bool clip, Ranges &r, IntervalBox &out) const {
  bool any = false;
  for (size_t k : accesses) {
    if (!accessReads(k, clip, r))
      continue;
    if (!any)
      out = r.out;
    else
      for (size_t t = 0; t < r.out.size(); ++t)
        out[t] = out[t].hull(r.out[t]);
    any = true;
  }
  return any;
}

std::optional<IntervalBox> StepRegion::reads(const std::string &tensor, const std::vector<int64_t> &u, bool clip) const {
  thread_local Ranges r;   // kept across calls: a step's reads allocate nothing but their result
  setCover(cover(u), r);
  IntervalBox out;
  if (!readHull(readersOf(tensor).accesses, clip, r, out))
    return std::nullopt;
  return out;
}

void StepRegion::readBoxes(const std::string &tensor, const std::vector<int64_t> &u, std::vector<IntervalBox> &out) const {
  const Readers &of = readersOf(tensor);
  thread_local Ranges r;
  thread_local std::vector<Cover> covers;
  subCovers(cover(u), of.wraps, covers);
  IntervalBox box;
  for (const Cover &c : covers) {
    setCover(c, r);
    if (readHull(of.accesses, true, r, box))
      out.push_back(box);
  }
}

namespace {

using Digits = std::vector<StepRegion::Digit>;

/// Range `r` of an index linearizing digits of strides `strides` (outermost
/// first, dense) from digit `k` on (`prefix` the outer digits' values) as
/// boxes of the digits, appended to `out`: a run aligned to digit k's stride
/// is one box (the inner digits whole), else its ragged ends are boxes of
/// their own; at most 2·|strides| − 1 boxes.
void splitRange(const std::vector<int64_t> &strides, size_t k, Interval r, std::vector<Interval> &prefix,
                std::vector<std::vector<Interval>> &out) {
  if (k == strides.size()) {
    out.push_back(prefix);
    return;
  }
  const int64_t s = strides[k];
  auto piece = [&](Interval digit, Interval inner) {
    prefix.push_back(digit);
    splitRange(strides, k + 1, inner, prefix, out);
    prefix.pop_back();
  };
  const int64_t a = floorDiv(r.lo, s), b = floorDiv(r.hi, s);
  if (s == 1)
    piece(r, {});
  else if ((r.lo - a * s == 0 && r.hi - b * s == s - 1) || a == b)
    piece({a, b}, {r.lo - a * s, r.hi - b * s});
  else {
    piece({a, a}, {r.lo - a * s, s - 1});
    if (a + 1 <= b - 1)
      piece({a + 1, b - 1}, {0, s - 1});
    piece({b, b}, {0, r.hi - b * s});
  }
}

/// Range `r` of an index linearizing digits `g` (outermost first) as boxes
/// of the digits.
std::vector<std::vector<Interval>> splitRange(const Digits &g, Interval r) {
  std::vector<int64_t> strides;
  for (const StepRegion::Digit &x : g)
    strides.push_back(x.stride);
  std::vector<Interval> prefix;
  std::vector<std::vector<Interval>> out;
  splitRange(strides, 0, r, prefix, out);
  return out;
}

/// The next of the combinations picking one of each `choices[t]`, odometer-wise
/// (the last the fastest); false after the last.
template <class T> bool nextCombination(std::vector<size_t> &pick, const std::vector<std::vector<T>> &choices) {
  for (size_t t = choices.size(); t-- > 0;) {
    if (++pick[t] < choices[t].size())
      return true;
    pick[t] = 0;
  }
  return false;
}

} // namespace

// A lexmax, update by update from the outermost: one moving a dim the output
// is not indexed by (a reduction) at its last iteration, one moving an output
// coordinate at the last iteration that starts at or below the box's end;
// the most of it over the boxes of the output's digits the box splits into.
int64_t StepRegion::lastWriter(const IntervalBox &box) const {
  std::vector<std::vector<std::vector<Interval>>> split(outputDims.size());
  for (size_t t = 0; t < outputDims.size(); ++t)
    split[t] = splitRange(outputDims[t], box[t]);
  int64_t last = 0;
  std::vector<size_t> pick(outputDims.size(), 0);
  for (bool more = true; more;) {
    DimVector hi{};   // per canonical dim its greatest coordinate in the box: its digits' greatest values
    for (size_t t = 0; t < outputDims.size(); ++t)
      for (size_t k = 0; k < outputDims[t].size(); ++k)
        at(hi, outputDims[t][k].dim) += split[t][pick[t]][k].hi * outputDims[t][k].divisor;
    std::vector<int64_t> u(updates.size());
    DimVector fixed{};
    for (size_t i = 0; i < updates.size(); ++i) {
      const Update &up = updates[i];
      if (digitsOf[static_cast<size_t>(up.dim)].empty()) {
        u[i] = up.count - 1;
        continue;
      }
      int64_t h = at(hi, up.dim) - at(fixed, up.dim);
      u[i] = std::clamp<int64_t>(h < 0 ? 0 : h / up.amount, 0, up.count - 1);
      at(fixed, up.dim) += u[i] * up.amount;
    }
    last = std::max(last, linear(u));
    more = nextCombination(pick, split);
  }
  return last;
}

int StepRegion::compareWriter(Dim d, int64_t x, std::span<const int64_t> mine) const {
  int64_t fixed = 0;
  size_t k = 0;
  for (const Update &up : updates)
    if (up.dim == d) {
      const int64_t v = std::clamp<int64_t>((x - fixed) / up.amount, 0, up.count - 1);
      if (v != mine[k])
        return v < mine[k] ? -1 : 1;
      fixed += v * up.amount;
      ++k;
    }
  return 0;
}

// The coordinates whose last writer is this step: per output dim those whose
// components along it are the step's (lastWriter takes each dim's updates
// alone, and their components only grow with the coordinate: an interval).
std::optional<StepRegion::Cover> StepRegion::finalized(const std::vector<int64_t> &u, FinalizedMemo *memo) const {
  for (size_t i = 0; i < updates.size(); ++i)
    if (digitsOf[static_cast<size_t>(updates[i].dim)].empty() && u[i] != updates[i].count - 1)
      return std::nullopt;   // partial sums only
  Cover out{};
  std::vector<int64_t> mine;
  mine.reserve(updates.size());
  for (Dim d : kIndependentDims) {
    const auto &where = digitsOf[static_cast<size_t>(d)];
    if (where.empty())
      continue;
    const Digit &outer = outputDims[where[0][0]][where[0][1]];
    const int64_t span = outer.divisor * outer.radix;   // the coordinate's values
    mine.clear();
    for (size_t i = 0; i < updates.size(); ++i)
      if (updates[i].dim == d)
        mine.push_back(u[i]);
    const size_t di = static_cast<size_t>(d);
    if (memo && memo->known[di] && memo->mine[di] == mine) {
      out[di] = memo->out[di];
      continue;
    }
    // The least coordinate written no earlier than this step, the greatest no later.
    out[di] = {leastWhere(0, span, [&](int64_t c) { return compareWriter(d, c, mine) >= 0; }),
               leastWhere(0, span, [&](int64_t c) { return compareWriter(d, c, mine) > 0; }) - 1};
    if (memo)
      memo->mine[di] = mine, memo->out[di] = out[di], memo->known[di] = true;
  }
  return out;
}

int64_t StepRegion::words(const Cover &box) const {
  int64_t n = 1;
  for (Dim d : kIndependentDims)
    if (!digitsOf[static_cast<size_t>(d)].empty())
      n *= box[static_cast<size_t>(d)].size();
  // A guard over two iteration dims (a causal mask) leaves part of the box
  // unwritten: counted row by row over the first dim's coordinates (the
  // iteration dim from its coordinate, as it folds), the second its
  // coordinate alone; else the box (more words, never fewer).
  std::vector<int> two;   // the domain's guards and the write's, read in place (most steps have none)
  for (const std::vector<AffineExpr> *list : {&layer->nest.guard, &output->guard})
    for (const AffineExpr &g : *list)
      for (auto [i, c] : g.terms)
        if (c != 0 && fold[static_cast<size_t>(i)].extent > 1 && std::find(two.begin(), two.end(), i) == two.end())
          two.push_back(i);
  if (n == 0 || two.size() != 2)
    return n;
  std::vector<AffineExpr> guards = layer->nest.guard;
  guards.insert(guards.end(), output->guard.begin(), output->guard.end());
  auto alone = [&](int i) {
    const IterDimFold &f = fold[static_cast<size_t>(i)];
    return f.divisor == 1 && std::count_if(fold.begin(), fold.end(), [&](const IterDimFold &x) {
                               return x.from == f.from && x.extent > 1;
                             }) == 1;
  };
  if (!alone(two[1]))
    std::swap(two[0], two[1]);
  std::array<Interval, 2> range;
  for (size_t k = 0; k < 2; ++k) {
    const Dim d = fold[static_cast<size_t>(two[k])].from;
    if (digitsOf[static_cast<size_t>(d)].empty())
      return n;
    range[k] = box[static_cast<size_t>(d)];
  }
  if (!alone(two[1]) || range[0].size() > kMaxGuardRows)
    return n;
  const IterDimFold &first = fold[static_cast<size_t>(two[0])];
  int64_t inside = 0;
  for (int64_t x = range[0].lo; x <= range[0].hi; ++x) {
    const int64_t a = x / first.divisor % first.extent;
    Interval b = range[1];
    for (const AffineExpr &g : guards) {   // c_a·a + c_b·b + k >= 0
      const int64_t ca = g.coefficient(two[0]), cb = g.coefficient(two[1]), k = g.constant + ca * a;
      if (cb > 0)
        b.lo = std::max(b.lo, -floorDiv(k, cb));
      else if (cb < 0)
        b.hi = std::min(b.hi, floorDiv(k, -cb));
      else if (k < 0)
        b = {};
    }
    inside += b.size();
  }
  return n / (range[0].size() * range[1].size()) * inside;
}

bool StepRegion::digitBoxes(const Cover &box, size_t limit, std::vector<DigitBox> &out) const {
  out.assign(1, DigitBox(outputDims.size()));
  for (size_t t = 0; t < outputDims.size(); ++t)
    out[0][t].resize(outputDims[t].size());
  auto divisors = [&](Dim d, std::vector<int64_t> &div) {   // one digit: the whole coordinate
    const auto &where = digitsOf[static_cast<size_t>(d)];
    for (auto [t, k] : where)
      div.push_back(where.size() == 1 ? 1 : outputDims[t][k].divisor);
  };
  auto put = [&](DigitBox &b, Dim d, const std::vector<int64_t> &, const std::vector<Interval> &run) {
    const auto &where = digitsOf[static_cast<size_t>(d)];
    for (size_t j = 0; j < where.size(); ++j)
      b[where[j][0]][where[j][1]] = run[j];
  };
  return splitAtDigits(box, limit, divisors, put, out);
}

// Per digit box, per output dim, the runs of index values: the outer digits
// enumerated down to the innermost one not taken whole (dense digits: the
// inner whole ones make a run with it).
std::optional<std::vector<IntervalBox>> StepRegion::pieces(const Cover &box) const {
  std::vector<DigitBox> boxes;
  if (!digitBoxes(box, kMaxPieces, boxes))
    return std::nullopt;
  std::vector<IntervalBox> out;
  for (const DigitBox &digits : boxes) {
    std::vector<std::vector<Interval>> runs(outputDims.size());
    size_t combinations = 1;
    for (size_t t = 0; t < outputDims.size(); ++t) {
      const Digits &g = outputDims[t];
      if (g.empty()) {
        runs[t].push_back({0, 0});
        continue;
      }
      auto of = [&](size_t k) { return digits[t][k]; };
      size_t q = g.size() - 1;
      while (q > 0 && of(q) == Interval{0, g[q].radix - 1})
        --q;
      size_t n = 1;
      for (size_t k = 0; k < q; ++k)
        if ((n *= static_cast<size_t>(of(k).size())) > kMaxPieces)
          return std::nullopt;
      if ((combinations *= n) > kMaxPieces)
        return std::nullopt;
      for (size_t r = 0; r < n; ++r) {
        int64_t base = 0;
        for (size_t k = q, rest = r; k-- > 0;) {
          const int64_t size = of(k).size();
          base += (of(k).lo + static_cast<int64_t>(rest % static_cast<size_t>(size))) * g[k].stride;
          rest /= static_cast<size_t>(size);
        }
        runs[t].push_back({base + of(q).lo * g[q].stride, base + (of(q).hi + 1) * g[q].stride - 1});
      }
    }
    if (out.size() + combinations > kMaxPieces)
      return std::nullopt;
    std::vector<size_t> pick(runs.size(), 0);
    for (bool more = true; more;) {
      IntervalBox b;
      for (size_t t = 0; t < runs.size(); ++t)
        b.push_back(runs[t][pick[t]]);
      out.push_back(std::move(b));
      more = nextCombination(pick, runs);
    }
  }
  return out;
}

// Each digit's values over the box (an iteration dim's, as it folds), their
// least and greatest index.
IntervalBox StepRegion::hull(const Cover &box) const {
  IntervalBox out;
  for (const Digits &g : outputDims) {
    Interval r{0, 0};
    for (const Digit &x : g) {
      const Interval c = box[static_cast<size_t>(x.dim)];
      const Interval v = x.divisor == 1 && digitsOf[static_cast<size_t>(x.dim)].size() == 1
                             ? c
                             : foldImage({x.dim, x.divisor, x.radix}, c);
      r.lo += v.lo * x.stride, r.hi += v.hi * x.stride;
    }
    out.push_back(r);
  }
  return out;
}

IntervalBox StepRegion::lastStepBox() const {
  std::vector<int64_t> u(updates.size());
  for (size_t i = 0; i < updates.size(); ++i)
    u[i] = updates[i].count - 1;
  return hull(cover(u));
}

// A lexmin, update by update from the outermost, each the least value whose
// reads (inner updates free) reach the box's start in every dim (a binary
// search: the reads only grow with the value).
std::optional<int64_t> StepRegion::firstReader(const std::string &tensor, const IntervalBox &box) const {
  std::vector<int64_t> u(updates.size(), kFree);
  auto reaches = [&]() {
    std::optional<IntervalBox> r = reads(tensor, u, false);
    if (!r)
      return false;
    for (size_t t = 0; t < box.size() && t < r->size(); ++t)
      if ((*r)[t].hi < box[t].lo)
        return false;
    return true;
  };
  if (!reaches())
    return std::nullopt;
  for (size_t i = 0; i < updates.size(); ++i)
    u[i] = leastWhere(0, updates[i].count - 1, [&](int64_t v) {
      u[i] = v;
      return reaches();
    });
  return linear(u);
}

// A lexmax, update by update from the outermost: the greatest value whose
// reads (inner updates free) start at or before the box's end in every dim
// (a binary search: the reads only grow with the value), stepped back while
// its clipped reads miss the box. An update moving a coordinate whose
// index wraps back (its reads do not only grow) steps back from its last
// value instead.
std::optional<int64_t> StepRegion::lastReader(const std::string &tensor, const IntervalBox &box) const {
  std::vector<int64_t> u(updates.size(), kFree);
  const Readers &of = readersOf(tensor);
  thread_local Ranges r;
  thread_local std::vector<Cover> covers;
  std::vector<int64_t> least(box.size());
  // Some access reads an element of the box: per tensor dim a value of its
  // index (lo + k·stride) inside the box's interval.
  auto meets = [&]() {
    subCovers(cover(u), of.wraps, covers);
    return std::any_of(covers.begin(), covers.end(), [&](const Cover &c) {
      setCover(c, r);
      return std::any_of(of.accesses.begin(), of.accesses.end(), [&](size_t k) {
        if (!accessReads(k, true, r))
          return false;
        for (size_t t = 0; t < box.size() && t < r.out.size(); ++t)
          if (onLattice(r.out[t].intersect(box[t]), r.out[t].lo, r.strides[t]).empty())
            return false;
        return true;
      });
    });
  };
  // The unclipped reads' hull starts at or before the box's end in every
  // dim (`skip`: but the dims whose index may not grow with those bits'
  // coordinates). Implied by meets; once false, false for later values of
  // an update moving none of the skipped coordinates.
  auto startsBefore = [&](unsigned skip) {
    setCover(cover(u), r);
    std::fill(least.begin(), least.end(), std::numeric_limits<int64_t>::max());
    bool any = false;
    for (size_t k : of.accesses)
      if (accessReads(k, false, r)) {
        any = true;
        for (size_t t = 0; t < box.size() && t < r.out.size(); ++t)
          least[t] = std::min(least[t], r.out[t].lo);
      }
    for (size_t t = 0; any && t < box.size(); ++t)
      if (least[t] > box[t].hi && !(t < of.unordered.size() && (of.unordered[t] & skip)))
        return false;
    return true;
  };
  if (!meets())
    return std::nullopt;
  for (size_t i = 0; i < updates.size(); ++i) {
    // The last value that starts early enough, by bisection; then back to
    // one that reads the box (along a wrapping dim, the dims its index
    // grows with bound the search: an attention's batch, not its heads).
    const Dim d = updates[i].dim;
    const unsigned skip = of.wraps[static_cast<size_t>(d)] ? 1u << static_cast<unsigned>(d) : 0u;
    u[i] = leastWhere(1, updates[i].count, [&](int64_t v) {
             u[i] = v;
             return !startsBefore(skip);
           }) - 1;
    while (u[i] > 0 && !meets())
      --u[i];
  }
  return linear(u);
}

StepRegion stepRegion(const Network &net, const Hardware &hw, int l, const LayerScheduleModel *schedule,
                      const LayerResult &result) {
  const size_t top = hw.levels.size() - 2;
  StepRegion r;
  r.layer = &net.layers[static_cast<size_t>(l)];
  r.latency = result.latencyCycles;
  const bool channelWise = r.layer->channelWise();
  auto canon = [&](Dim d) { return canonicalDim(d, channelWise); };
  std::string why;
  r.folds = foldIterDims(r.layer->nest, channelWise, r.fold, why);
  for (Dim d : kIndependentDims)
    at(r.bounds, canon(d)) = std::max(at(r.bounds, canon(d)), at(result.levels.back().extent, d));
  const LevelResult &lr = result.levels[top];
  for (Dim d : kIndependentDims)
    at(r.base, canon(d)) = std::max(at(r.base, canon(d)), at(lr.extent, d) - 1);
  const LevelDirectives *ld = nullptr;
  if (schedule)
    for (const LevelDirectives &d : schedule->levels)
      if (d.level == static_cast<int>(top))
        ld = &d;
  auto independent = [&](const std::vector<std::pair<Dim, int64_t>> &moves) -> std::optional<std::pair<Dim, int64_t>> {
    for (auto [d, a] : moves)
      if (!isInputWindow(d))
        return std::pair{canon(d), a};
    return std::nullopt;
  };
  if (ld) {
    for (const StackDirective &s : ld->stacks)
      for (auto [d, a] : s.shifts)
        if (!isInputWindow(d))
          at(r.base, canon(d)) += (s.repl - 1) * a;
    for (size_t i = ld->updates.size(); i-- > 0;) {
      int64_t count = i < lr.trips.size() ? lr.trips[i] : 1;
      if (auto m = independent(ld->updates[i].steps); m && count > 1) {
        r.updates.push_back({m->first, m->second, count});
        r.steps *= count;
      }
    }
  }
  std::vector<const Access *> outs = r.layer->nest.accessesOf(r.layer->output);
  if (!outs.empty())
    r.output = outs[0];
  // The output tensor's dims as digits: each index the whole coordinate of
  // one dim (factor 1), its iteration dims apart (as they fold), or a dense
  // mixed-radix linearization of several (dims of extent 1, always 0, left
  // out); no constant. Each iteration dim in one digit, every one of a
  // coordinate the output is indexed by.
  if (r.folds && r.output) {
    using Digit = StepRegion::Digit;
    std::array<int64_t, kNumDims> radix{};
    radix.fill(1);
    for (const IterDimFold &f : r.fold)
      radix[static_cast<size_t>(f.from)] *= f.extent;
    std::vector<bool> placed(r.fold.size());   // per iteration dim
    bool dense = true;
    auto place = [&](size_t i) {
      dense = dense && !placed[i];
      placed[i] = true;
    };
    std::vector<std::vector<Digit>> dims;
    for (size_t t = 0; dense && t < r.output->index.size(); ++t) {
      const AffineExpr &e = r.output->index[t];
      const int64_t extent = r.output->extent[t];
      std::vector<Digit> g;
      std::array<bool, kNumDims> whole{};
      dense = e.constant == 0;
      for (auto [i, c] : e.terms) {
        const IterDimFold &f = r.fold[static_cast<size_t>(i)];
        if (c == 0 || f.extent == 1 || whole[static_cast<size_t>(f.from)])
          continue;
        if (const int64_t stride = r.wholeCoordinate(e, f.from, true); stride > 0) {
          whole[static_cast<size_t>(f.from)] = true;
          for (size_t j = 0; j < r.fold.size(); ++j)
            if (r.fold[j].from == f.from && r.fold[j].extent > 1)
              place(j);
          g.push_back({f.from, 1, stride, radix[static_cast<size_t>(f.from)]});
        } else {
          place(static_cast<size_t>(i));
          g.push_back({f.from, f.divisor, c, f.extent});
        }
      }
      std::sort(g.begin(), g.end(), [](const Digit &a, const Digit &b) { return a.stride > b.stride; });
      if (g.size() == 1 && g[0].divisor == 1 && radix[static_cast<size_t>(g[0].dim)] == g[0].radix)
        g[0].radix = extent;   // the coordinate itself, over the tensor
      // Dense: the innermost of stride 1, each stride its inner digit's times its radix, the outermost's spanning the tensor.
      for (size_t k = 0; k < g.size(); ++k)
        dense = dense && g[k].stride == (k + 1 < g.size() ? g[k + 1].stride * g[k + 1].radix : 1);
      dense = dense && (g.empty() ? extent == 1 : g[0].stride * g[0].radix == extent);
      dims.push_back(std::move(g));
    }
    // A coordinate the output is indexed by has all its iteration dims placed.
    for (size_t i = 0; i < r.fold.size(); ++i)
      for (size_t j = 0; j < r.fold.size(); ++j)
        if (r.fold[i].from == r.fold[j].from && r.fold[i].extent > 1 && r.fold[j].extent > 1)
          dense = dense && placed[i] == placed[j];
    if (dense) {
      for (size_t t = 0; t < dims.size(); ++t)
        for (size_t k = 0; k < dims[t].size(); ++k)
          r.digitsOf[static_cast<size_t>(dims[t][k].dim)].push_back({t, k});
      for (auto &where : r.digitsOf)
        std::sort(where.begin(), where.end(), [&](const auto &a, const auto &b) {
          return dims[a[0]][a[1]].divisor > dims[b[0]][b[1]].divisor;
        });
      r.outputDims = std::move(dims);
    }
  }
  if (r.folds)
    r.deriveImages();
  return r;
}

namespace {

/// What axisWalks enumerates along one axis: the tensor's accesses (indices
/// in the nest) and the updates whose combinations it walks; none where the
/// walk cannot be derived.
struct WalkSteps {
  std::vector<size_t> accesses, moving;
  int64_t combinations = 0;
};

std::optional<WalkSteps> walkSteps(const StepRegion &r, const std::string &tensor, bool write, size_t axis) {
  if (!r.folds)
    return std::nullopt;
  WalkSteps w;
  for (const Access &a : r.layer->nest.accesses)
    if (a.tensor == tensor && (a.role == r.layer->output) == write && axis < a.index.size())
      w.accesses.push_back(static_cast<size_t>(&a - r.layer->nest.accesses.data()));
  if (w.accesses.empty())
    return std::nullopt;
  // The updates moving a canonical dim some iteration dim of the axis' index
  // folds into (`along`), or of any axis' (`any`): where the tensor is one of
  // several operands of its role (a concatenation's second part), the steps
  // along another axis decide which steps touch it at all, so the walk
  // enumerates those too where it can. The ranges along the axis, in the
  // order first reached, are the same either way where every step touches it.
  auto movers = [&](bool anyAxis) {
    std::vector<size_t> moving;
    for (size_t i = 0; i < r.updates.size(); ++i) {
      bool moves = false;
      for (size_t k : w.accesses) {
        const Access &a = r.layer->nest.accesses[k];
        for (size_t x = anyAxis ? 0 : axis; x < (anyAxis ? a.index.size() : axis + 1); ++x)
          for (auto [dim, coefficient] : a.index[x].terms)
            moves |= coefficient != 0 && r.fold[static_cast<size_t>(dim)].from == r.updates[i].dim;
      }
      if (moves)
        moving.push_back(i);
    }
    return moving;
  };
  auto count = [&](const std::vector<size_t> &moving) {
    int64_t combinations = 1;
    for (size_t i : moving)
      if ((combinations *= r.updates[i].count) > kMaxWalk)
        return kMaxWalk + 1;
    return combinations;
  };
  w.moving = movers(true);
  w.combinations = count(w.moving);
  if (w.combinations > kMaxWalk) {
    w.moving = movers(false);
    if ((w.combinations = count(w.moving)) > kMaxWalk)
      return std::nullopt;
  }
  return w;
}

/// The walks along `axes` over the same steps `w`: one pass, each step's
/// ranges derived once for every axis.
void walkAxes(const StepRegion &r, const WalkSteps &w, std::span<const size_t> axes,
              std::span<std::optional<std::vector<Interval>>> walks) {
  std::vector<std::set<std::pair<int64_t, int64_t>>> seen(axes.size());
  std::vector<Interval> ranges(axes.size());
  for (auto &walk : walks)
    walk.emplace();
  std::vector<int64_t> u(r.updates.size(), 0);
  for (int64_t k = 0; k < w.combinations; ++k) {
    for (int64_t rest = k, m = static_cast<int64_t>(w.moving.size()); m-- > 0;) {   // outermost first: lexicographic
      const size_t i = w.moving[static_cast<size_t>(m)];
      u[i] = rest % r.updates[i].count;
      rest /= r.updates[i].count;
    }
    r.axisHulls(w.accesses, u, axes, ranges);
    for (size_t j = 0; j < axes.size(); ++j)
      if (!ranges[j].empty() && seen[j].insert({ranges[j].lo, ranges[j].hi}).second)
        walks[j]->push_back(ranges[j]);
  }
}

} // namespace

std::array<std::optional<std::vector<Interval>>, 2> axisWalks(const StepRegion &r, const std::string &tensor, bool write,
                                                              size_t n) {
  std::array<std::optional<std::vector<Interval>>, 2> walks;
  std::array<std::optional<WalkSteps>, 2> steps;
  for (size_t axis = 0; axis < n; ++axis)
    steps[axis] = walkSteps(r, tensor, write, axis);
  if (n == 2 && steps[0] && steps[1] && steps[0]->accesses == steps[1]->accesses && steps[0]->moving == steps[1]->moving) {
    static constexpr std::array<size_t, 2> kBoth{0, 1};
    walkAxes(r, *steps[0], kBoth, walks);
    return walks;
  }
  for (size_t axis = 0; axis < n; ++axis)
    if (steps[axis])
      walkAxes(r, *steps[axis], std::span<const size_t>(&axis, 1), std::span(&walks[axis], 1));
  return walks;
}

namespace {

/// The running maximum: entry j the most of v[0..j] (-1 while all are -1).
std::vector<int64_t> runningMax(std::vector<int64_t> v) {
  for (size_t j = 1; j < v.size(); ++j)
    v[j] = std::max(v[j], v[j - 1]);
  return v;
}

/// Whether layer `c` reads `tensor` (not as its output).
bool readsTensor(const Layer &c, const std::string &tensor) {
  return std::any_of(c.nest.accesses.begin(), c.nest.accesses.end(),
                     [&](const Access &a) { return a.role != c.output && a.tensor == tensor; });
}

/// What producer region `pr`'s steps finalize of its output, in words.
std::vector<int64_t> finalizedWords(const StepRegion &pr) {
  std::vector<int64_t> words(static_cast<size_t>(pr.steps), 0);
  StepRegion::FinalizedMemo memo;
  for (int64_t i = 0; i < pr.steps; ++i)
    if (std::optional<StepRegion::Cover> f = pr.finalized(pr.point(i), &memo))
      words[static_cast<size_t>(i)] = pr.words(*f);
  return words;
}

/// The least consumer `c` (position) needs at once of its producers'
/// tensors (`edges` into it): each tensor's forwarding unit and one step
/// more (a buffer of depth 1; the tables' depth is at least 1, and the words
/// only grow with the steps held), appended to `least`; their sum.
int64_t leastNeed(const std::vector<StepRegion> &regions, const std::vector<std::array<size_t, 2>> &edges,
                  const std::vector<std::vector<int64_t>> &words, size_t c, std::vector<ForwardedWords> &least) {
  int64_t need = 0;
  for (auto [p, to] : edges)
    if (to == c) {
      const int64_t slots = bufferSlots(1, forwardingUnitSteps(words[p]), 0);
      least.push_back({regions[p].output->tensor, std::min(slots, regions[p].steps), mostWords(words[p], slots)});
      need += least.back().words;
    }
  return need;
}

/// The first consumer (position) whose room is short of the least its
/// forwarded tensors can need (leastNeed), and those. None if every
/// consumer has it.
std::optional<size_t> leastShort(const Network &net, const Hardware &hw, const std::vector<int> &layers,
                                 const std::vector<const LayerResult *> &results, const std::vector<StepRegion> &regions,
                                 const std::vector<std::array<size_t, 2>> &edges,
                                 const std::vector<std::vector<int64_t>> &words, std::vector<ForwardedWords> &least) {
  for (size_t c = 0; c < regions.size(); ++c) {
    const std::optional<int64_t> room = slackRoom(regionRoom(net.layers[static_cast<size_t>(layers[c])], hw, *results[c]));
    if (!room)
      continue;
    least.clear();
    const int64_t need = leastNeed(regions, edges, words, c, least);
    if (!least.empty() && need > *room)
      return c;
  }
  least.clear();
  return std::nullopt;
}

} // namespace

SegmentSteps segmentSteps(const Network &net, const Hardware &hw, const std::vector<int> &layers,
                          const std::vector<const LayerScheduleModel *> &schedules,
                          const std::vector<const LayerResult *> &results, bool refuseShort) {
  DFLC_CHECK(layers.size() == schedules.size() && layers.size() == results.size()) << "one schedule and result a layer";
  SegmentSteps out;
  std::vector<StepRegion> regions;
  for (size_t k = 0; k < layers.size(); ++k) {
    regions.push_back(stepRegion(net, hw, layers[k], schedules[k], *results[k]));
    out.steps.push_back(regions.back().steps);
    if (regions.back().steps > kMaxSteps) {
      out.why = "'" + regions.back().layer->name + "' runs " + std::to_string(regions.back().steps) +
                " steps at the node level, more than the " + std::to_string(kMaxSteps) + " the check derives";
      return out;
    }
  }
  // The edges (producer, consumer), consumer by consumer, all read as boxes.
  std::vector<std::array<size_t, 2>> edges;
  for (size_t c = 0; c < regions.size(); ++c)
    for (size_t p = 0; p < c; ++p) {
      const StepRegion &pr = regions[p], &cr = regions[c];
      if (!pr.output || !readsTensor(*cr.layer, pr.output->tensor))
        continue;
      if (!pr.boxed() || !cr.folds) {
        const StepRegion &r = !pr.boxed() ? pr : cr;
        out.why = "'" + r.layer->name + "' " +
                  (!r.folds ? std::string("has an iteration dim that folds into no loop dim")
                            : "writes its output at an index that is neither its loop dims' coordinates nor a "
                              "dense linearization of them");
        return out;
      }
      edges.push_back({p, c});
    }
  // What each producer's steps finalize: the same for each of its consumers.
  std::vector<std::vector<int64_t>> words(regions.size());
  for (auto [p, c] : edges)
    if (words[p].empty())
      words[p] = finalizedWords(regions[p]);
  if (refuseShort && (out.shortConsumer = leastShort(net, hw, layers, results, regions, edges, words, out.shortOf)))
    return out;
  for (auto [p, c] : edges) {
    const StepRegion &pr = regions[p], &cr = regions[c];
    EdgeSteps e;
    e.producer = static_cast<int>(p), e.consumer = static_cast<int>(c);
    e.tensor = pr.output->tensor;
    e.needs.assign(static_cast<size_t>(cr.steps), -1);
    std::vector<IntervalBox> boxes;
    for (int64_t j = 0; j < cr.steps; ++j) {
      boxes.clear();
      cr.readBoxes(e.tensor, cr.point(j), boxes);
      for (const IntervalBox &b : boxes)
        e.needs[static_cast<size_t>(j)] = std::max(e.needs[static_cast<size_t>(j)], pr.lastWriter(b));
    }
    e.rawWait = runningMax(e.needs);
    e.words = words[p];
    e.lastReader.assign(static_cast<size_t>(pr.steps), -1);
    StepRegion::FinalizedMemo memo;
    for (int64_t i = 0; i < pr.steps; ++i) {
      if (e.words[static_cast<size_t>(i)] == 0)
        continue;
      // The last reader of any run of it; too many runs: of their hull (later, never earlier).
      const StepRegion::Cover f = *pr.finalized(pr.point(i), &memo);
      int64_t &last = e.lastReader[static_cast<size_t>(i)];
      for (const IntervalBox &b : pr.pieces(f).value_or(std::vector<IntervalBox>{pr.hull(f)}))
        last = std::max(last, cr.lastReader(e.tensor, b).value_or(-1));
    }
    e.warWait = runningMax(e.lastReader);
    out.edges.push_back(std::move(e));
  }
  std::vector<EdgeWaits> waits;
  for (const EdgeSteps &e : out.edges)
    waits.push_back({e.producer, e.consumer, e.rawWait, e.warWait});
  std::vector<int64_t> units;
  for (const EdgeSteps &e : out.edges)
    units.push_back(forwardingUnitSteps(e.words));
  std::vector<int64_t> depths = liveDepths(out.steps, waits, bufferDepths(out.steps, waits), units);
  std::vector<EdgeBuffer> buffers;
  for (size_t k = 0; k < out.edges.size(); ++k) {
    EdgeSteps &e = out.edges[k];
    e.depth = depths[k], e.unitSteps = units[k];
    e.neededWords = mostWords(e.words, e.leastSlots());
    buffers.push_back({e.consumer, e.depth, e.unitSteps, e.words});
  }
  std::vector<std::optional<int64_t>> rooms;
  for (size_t k = 0; k < layers.size(); ++k)
    rooms.push_back(slackRoom(regionRoom(net.layers[static_cast<size_t>(layers[k])], hw, *results[k])));
  std::vector<int64_t> slack = bufferSlack(buffers, rooms);
  for (size_t k = 0; k < out.edges.size(); ++k)
    out.edges[k].slack = slack[k];
  out.derived = true;
  return out;
}

std::vector<int64_t> bufferDepths(const std::vector<int64_t> &steps, const std::vector<EdgeWaits> &edges) {
  // need[c][a][j]: the last step of ancestor a that consumer c's step j
  // needs, along every path (regions in topological order).
  size_t n = steps.size();
  std::vector<std::vector<std::vector<int64_t>>> need(n, std::vector<std::vector<int64_t>>(n));
  for (size_t c = 0; c < n; ++c) {
    for (size_t a = 0; a < c; ++a)
      need[c][a].assign(static_cast<size_t>(steps[c]), -1);
    for (const EdgeWaits &e : edges) {
      if (static_cast<size_t>(e.consumer) != c)
        continue;
      size_t q = static_cast<size_t>(e.producer);
      for (size_t j = 0; j < e.rawWait.size(); ++j) {
        int64_t i = e.rawWait[j];
        if (i < 0)
          continue;
        need[c][q][j] = std::max(need[c][q][j], i);
        for (size_t a = 0; a < q; ++a)
          need[c][a][j] = std::max(need[c][a][j], need[q][a][static_cast<size_t>(i)]);
      }
    }
  }
  std::vector<int64_t> depths;
  for (const EdgeWaits &e : edges) {
    const std::vector<int64_t> &f = need[static_cast<size_t>(e.consumer)][static_cast<size_t>(e.producer)];
    int64_t depth = 1;
    for (size_t i = 0; i < e.warWait.size(); ++i)
      if (int64_t j = e.warWait[i]; j >= 0 && f[static_cast<size_t>(j)] >= 0)
        depth = std::max(depth, f[static_cast<size_t>(j)] - static_cast<int64_t>(i) + 1);
    depths.push_back(depth);
  }
  return depths;
}

int64_t forwardingUnitSteps(const std::vector<int64_t> &words) {
  int64_t unit = 1;
  for (int64_t i = 0, last = -1; i < static_cast<int64_t>(words.size()); ++i)
    if (words[static_cast<size_t>(i)] > 0)
      unit = std::max(unit, i - last), last = i;
  return unit;
}

StepRun runSteps(const std::vector<int64_t> &steps, const std::vector<EdgeWaits> &edges,
                 const std::vector<int64_t> &slots, const std::vector<double> &stepCycles) {
  const size_t n = steps.size();
  StepRun run;
  run.done.assign(n, 0);
  std::vector<std::vector<double>> end(n);
  // Regions in turn, each as far as its waits let it: a step's waits name
  // steps already ended, so their times are known.
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t r = 0; r < n; ++r)
      for (; run.done[r] < steps[r]; ++run.done[r], progress = true) {
        const int64_t j = run.done[r];
        double start = j ? end[r][static_cast<size_t>(j - 1)] : 0;
        auto after = [&](int region, int64_t step) {
          if (step < 0)
            return true;
          if (run.done[static_cast<size_t>(region)] <= step)
            return false;
          start = std::max(start, end[static_cast<size_t>(region)][static_cast<size_t>(step)]);
          return true;
        };
        bool ready = true;
        for (size_t k = 0; k < edges.size() && ready; ++k) {
          const EdgeWaits &e = edges[k];
          if (static_cast<size_t>(e.consumer) == r)
            ready = after(e.producer, e.rawWait[static_cast<size_t>(j)]);
          if (ready && static_cast<size_t>(e.producer) == r && j >= slots[k])
            ready = after(e.consumer, e.warWait[static_cast<size_t>(j - slots[k])]);
        }
        if (!ready)
          break;
        end[r].push_back(start + stepCycles[r]);
        run.cycles = std::max(run.cycles, end[r].back());
      }
  }
  return run;
}

std::vector<int64_t> liveDepths(const std::vector<int64_t> &steps, const std::vector<EdgeWaits> &edges,
                                std::vector<int64_t> depths, const std::vector<int64_t> &unitSteps) {
  for (;;) {
    std::vector<int64_t> slots;
    for (size_t k = 0; k < edges.size(); ++k)
      slots.push_back(bufferSlots(depths[k], unitSteps[k], 0));
    const std::vector<int64_t> done = runSteps(steps, edges, slots, std::vector<double>(steps.size(), 0)).done;
    // Each producer stopped by a full buffer gets the least one that lets it step.
    bool widened = false;
    for (size_t k = 0; k < edges.size(); ++k) {
      const EdgeWaits &e = edges[k];
      const int64_t j = done[static_cast<size_t>(e.producer)], read = done[static_cast<size_t>(e.consumer)];
      if (j >= steps[static_cast<size_t>(e.producer)] || j < slots[k] ||
          read > e.warWait[static_cast<size_t>(j - slots[k])])
        continue;
      int64_t i = j - slots[k];
      while (i >= 0 && e.warWait[static_cast<size_t>(i)] >= read)
        --i;
      depths[k] += (j - i) - slots[k];
      widened = true;
    }
    if (!widened)
      return depths;   // live, or stuck on RAW alone (no buffer helps; the simulation reports it)
  }
}

std::vector<int64_t> bufferSlack(const std::vector<EdgeBuffer> &edges, const std::vector<std::optional<int64_t>> &roomWords) {
  std::vector<int64_t> need(roomWords.size(), 0);
  for (const EdgeBuffer &e : edges)
    need[static_cast<size_t>(e.consumer)] += mostWords(e.words, bufferSlots(e.depth, e.unitSteps, e.depth));
  std::vector<int64_t> slack;
  for (const EdgeBuffer &e : edges) {
    const std::optional<int64_t> &room = roomWords[static_cast<size_t>(e.consumer)];
    slack.push_back(!room || need[static_cast<size_t>(e.consumer)] <= *room ? e.depth : 0);
  }
  return slack;
}

int64_t mostWords(std::span<const int64_t> words, int64_t n) {
  int64_t window = 0, most = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    window += words[i] - (i >= static_cast<size_t>(n) ? words[i - static_cast<size_t>(n)] : 0);
    most = std::max(most, window);
  }
  return most;
}

namespace {

/// Bytes in words of the forwarded (finished) data.
int64_t forwardedWords(const Hardware &hw, int64_t bytes) {
  return static_cast<int64_t>(static_cast<__int128>(bytes) * hw.wordBits / (hw.wordBytes() * hw.dataBits(TensorRole::Ofm)));
}

/// The node-level buffer the forwarded words are kept in: where the consumer
/// reads them, the buffer holding its ifm (null: the level is one buffer;
/// where ifm bypasses the level E0829 refuses the segment first).
const Buffer *forwardedBuffer(const Level &lv) {
  const int held = lv.bufferOf(TensorRole::Ifm);
  return held >= 0 ? &lv.buffers[static_cast<size_t>(held)] : nullptr;
}

} // namespace

RegionRoom regionCapacity(const Hardware &hw, int64_t nodes) {
  const Level &lv = hw.levels[hw.levels.size() - 2];
  const Buffer *buf = forwardedBuffer(lv);
  const std::optional<int64_t> capacity = buf ? buf->capacityBytes : lv.capacityBytes;
  RegionRoom room;
  room.level = !buf || buf->implicit ? lv.name : lv.name + "'s buffer " + buf->name;
  room.nodes = nodes;
  room.bounded = capacity.has_value();
  room.capacityWords = forwardedWords(hw, capacity.value_or(0) * nodes);
  return room;
}

RegionRoom regionRoom(const Layer &layer, const Hardware &hw, const LayerResult &result) {
  const size_t top = hw.levels.size() - 2;
  const LevelResult &lr = result.levels[top];
  RegionRoom room = regionCapacity(hw, lr.unitsInUse);
  // Its other tiles count only where they share the forwarded words' buffer.
  const Buffer *buf = forwardedBuffer(hw.levels[top]);
  const bool channelWise = layer.channelWise(), perSample = wgtPerSample(layer.nest);
  const std::vector<TensorRole> roles = layer.roles();
  int64_t otherBytes = 0;
  for (TensorRole r : {TensorRole::Wgt, TensorRole::Ofm})
    if (std::find(roles.begin(), roles.end(), r) != roles.end() && (!buf || buf->holds(r)))
      otherBytes += hw.bytesOf(tileWords(r, lr.extent, channelWise, perSample), hw.heldBits(r, layer.output));
  room.otherTileWords = forwardedWords(hw, otherBytes * room.nodes);
  return room;
}

bool ShortConsumerTest::shortOnAny(int x, int64_t nodes) {
  if (undecided_)
    return false;
  // Its tiles unknown, it is taken to fold (add checks that once it has them).
  return needsMore(regions_.size(), net_.layers[static_cast<size_t>(x)], true, slackRoom(regionCapacity(hw_, nodes)));
}

bool ShortConsumerTest::add(int x, const LayerScheduleModel *schedule, const LayerResult &result) {
  if (undecided_)
    return false;
  regions_.push_back(stepRegion(net_, hw_, x, schedule, result));
  const size_t c = regions_.size() - 1;
  const StepRegion &cr = regions_.back();
  if (cr.steps > kMaxSteps) {
    undecided_ = true;   // segmentSteps derives no tables: the analysis decides
    return false;
  }
  return needsMore(c, *cr.layer, cr.folds, slackRoom(regionRoom(*cr.layer, hw_, result)));
}

bool ShortConsumerTest::needsMore(size_t c, const Layer &consumer, bool folds, std::optional<int64_t> room) {
  // segmentSteps' edges: its producers among regions_[0, c), read as boxes.
  std::vector<std::array<size_t, 2>> edges;
  for (size_t p = 0; p < c; ++p)
    if (regions_[p].output && readsTensor(consumer, regions_[p].output->tensor)) {
      if (!regions_[p].boxed() || !folds) {
        undecided_ = true;   // no tables: the analysis decides
        return false;
      }
      edges.push_back({p, c});
    }
  if (!room)
    return false;
  least_.clear();
  const int64_t need = leastNeed(regions_, edges, wordsFor(edges), c, least_);
  return !least_.empty() && need > *room;
}

const std::vector<std::vector<int64_t>> &ShortConsumerTest::wordsFor(const std::vector<std::array<size_t, 2>> &edges) {
  words_.resize(regions_.size());
  for (auto [p, c] : edges)
    if (words_[p].empty())
      words_[p] = finalizedWords(regions_[p]);
  return words_;
}

} // namespace dfl
