// Access counts and energy of docs/directives.md §6-§7, checked against a
// brute-force loop-nest interpreter written here, independent of scheduler/:
// it enumerates every unit's tile at every step of the loop nest the
// directives define, keeps each buffer's contents as a set of tensor elements,
// and counts fills, multicast reads, same-level transfers and partial-sum
// read-modify-writes at every boundary. A few numbers are also derived by hand.
#include "scheduler/analysis/Analysis.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace dfl {
namespace {

// The interpreter's own dimension names (not scheduler/'s).
enum D { N, C, K, Xo, Yo, R, S, Xi, Yi, kND };
const char *const kDimName[kND] = {"N", "C", "K", "Xo", "Yo", "R", "S", "Xi", "Yi"};
enum Role { Ifm, Wgt, Ofm, kNR };
const char *const kRoleName[kNR] = {"ifm", "wgt", "ofm"};

/// A stack (count = repl) or an update (count = its trip count, derived by hand).
struct Move {
  std::vector<std::pair<D, int>> by;
  int count;
};

struct LevelSpec {
  std::string name;
  std::array<std::map<D, int>, kNR> tile;   // per role; a dim not given has size 1
  std::vector<Move> stacks, updates;        // updates innermost first
  bool multicast = false, systolic = false; // the hardware level's transfers
  double energy = 0;                        // pJ per access
};

struct Case {
  std::string text;                         // network + hardware in DFL
  bool depthwise = false;                   // K is C
  std::array<int, kND> bounds{};            // layer bounds (Xi, Yi unused)
  std::vector<LevelSpec> levels;            // all but the outermost
  double macEnergy = 1, outerEnergy = 0;
  int pad = 0, width = 0, height = 0;       // the unpadded input (ifm Xi, Yi); 0: no padding
  int stride = 1, dilation = 1;             // the layer's (for the real part of an input window)
};

/// Counts per level and role, as the analysis reports them.
struct Counts {
  std::vector<std::array<double, kNR>> reads, writes, same;
  double energy = 0;
};

std::string scheduleText(const Case &c) {
  std::string s = "schedule for net on hw {\n  layer l {\n";
  auto list = [](const std::vector<std::pair<D, int>> &by) {
    std::string out;
    for (auto [d, a] : by)
      out += (out.empty() ? "" : ", ") + std::string(kDimName[d]) + " += " + std::to_string(a);
    return out;
  };
  for (const LevelSpec &l : c.levels) {
    s += "    " + l.name + " {\n";
    for (int r = 0; r < kNR; ++r) {
      std::string dims;
      for (auto [d, n] : l.tile[r])
        dims += (dims.empty() ? "" : ", ") + std::string(kDimName[d]) + "=" + std::to_string(n);
      s += "      tensor " + std::string(kRoleName[r]) + " [" + dims + "];\n";
    }
    for (const Move &m : l.stacks)
      s += "      stack " + list(m.by) + " repl " + std::to_string(m.count) + ";\n";
    for (const Move &m : l.updates)
      s += "      update " + list(m.by) + ";\n";
    s += "    }\n";
  }
  return s + "  }\n}\n";
}

class Interpreter {
public:
  explicit Interpreter(const Case &c) : c_(c), L_(c.levels.size()) {}

  Counts run() {
    Counts out;
    out.reads.assign(L_ + 1, {}), out.writes.assign(L_ + 1, {}), out.same.assign(L_ + 1, {});
    for (size_t l = 0; l < L_; ++l)
      for (int r = 0; r < kNR; ++r)
        r == Ofm ? outputBoundary(l, out) : inputBoundary(l, static_cast<Role>(r), out);
    double macs = computeEveryPointOnce();
    out.reads[0][Ifm] += macs, out.reads[0][Wgt] += macs;
    out.reads[0][Ofm] += macs, out.writes[0][Ofm] += macs;
    out.energy = macs * c_.macEnergy;
    for (size_t l = 0; l <= L_; ++l)
      for (int r = 0; r < kNR; ++r)
        out.energy += (out.reads[l][r] + out.writes[l][r] + 2 * out.same[l][r]) *
                      (l < L_ ? c_.levels[l].energy : c_.outerEnergy);
    return out;
  }

private:
  D canon(D d) const { return c_.depthwise && d == K ? C : d; }

  std::vector<D> roleDims(Role r) const {
    switch (r) {
    case Ifm: return {N, C, Xi, Yi};
    case Wgt: return c_.depthwise ? std::vector<D>{C, R, S} : std::vector<D>{K, C, R, S};
    default: return {N, canon(K), Xo, Yo};
    }
  }

  int tileSize(size_t l, Role r, D d) const {
    for (auto [dim, n] : c_.levels[l].tile[r])
      if (canon(dim) == d)
        return n;
    return 1;
  }

  // A loop of the flattened nest: (level, index among the level's updates).
  struct Loop {
    size_t level, index;
  };
  /// The updates of levels >= l, outermost first.
  std::vector<Loop> loopsFrom(size_t l) const {
    std::vector<Loop> out;
    for (size_t m = L_; m-- > l;)
      for (size_t i = c_.levels[m].updates.size(); i-- > 0;)
        out.push_back({m, i});
    return out;
  }
  const Move &update(const Loop &f) const { return c_.levels[f.level].updates[f.index]; }
  bool movesRole(const Move &m, Role r) const {
    for (auto [d, a] : m.by)
      for (D rd : roleDims(r))
        if (canon(d) == rd && a)
          return true;
    return false;
  }

  /// Every combination of indices < counts, the last index fastest.
  static std::vector<std::vector<int>> odometer(const std::vector<int> &counts) {
    std::vector<std::vector<int>> out{{}};
    for (int n : counts) {
      std::vector<std::vector<int>> next;
      for (const auto &v : out)
        for (int i = 0; i < n; ++i) {
          next.push_back(v);
          next.back().push_back(i);
        }
      out = std::move(next);
    }
    return out;
  }

  /// Stack indices of all stacks of levels >= l (outermost level first).
  std::vector<const Move *> stacksFrom(size_t l) const {
    std::vector<const Move *> out;
    for (size_t m = L_; m-- > l;)
      for (const Move &s : c_.levels[m].stacks)
        out.push_back(&s);
    return out;
  }

  std::array<int, kND> origin(const std::vector<const Move *> &stacks, const std::vector<int> &unit,
                              const std::vector<Loop> &loops, const std::vector<int> &step) const {
    std::array<int, kND> o{};
    for (size_t i = 0; i < stacks.size(); ++i)
      for (auto [d, a] : stacks[i]->by)
        o[canon(d)] += unit[i] * a;
    for (size_t i = 0; i < loops.size(); ++i)
      for (auto [d, a] : update(loops[i]).by)
        o[canon(d)] += step[i] * a;
    return o;
  }

  /// Levels of stacksFrom(l)'s stacks.
  std::vector<size_t> stackLevelsFrom(size_t l) const {
    std::vector<size_t> out;
    for (size_t m = L_; m-- > l;)
      out.insert(out.end(), c_.levels[m].stacks.size(), m);
    return out;
  }

  /// The extent of an independent dim at level m: the tile of a role that has it.
  int extent(size_t m, D d) const {
    for (int r = 0; r < kNR; ++r)
      for (D rd : roleDims(static_cast<Role>(r)))
        if (rd == d)
          return tileSize(m, static_cast<Role>(r), d);
    return 1;
  }

  using Ranges = std::array<std::pair<int, int>, kND>;   // [lo, hi) per dim

  /// Partial tiles (docs/directives.md §4): the real part of a level-l
  /// position along each independent dim, its tile clipped to the tile of
  /// every enclosing level at its own origin and to the layer. Empty along
  /// some dim: the position is idle.
  Ranges realPart(size_t l, const std::vector<const Move *> &stacks, const std::vector<int> &unit,
                  const std::vector<Loop> &loops, const std::vector<int> &step) const {
    std::vector<size_t> stackLevel = stackLevelsFrom(l);
    Ranges out{};
    for (int d = 0; d < Xi; ++d)
      out[d] = {0, c_.bounds[d]};
    for (size_t m = L_; m-- > l;) {
      std::array<int, kND> o{};   // the origin of the level-m tile holding this position
      for (size_t i = 0; i < stacks.size(); ++i)
        if (stackLevel[i] >= m)
          for (auto [d, a] : stacks[i]->by)
            o[canon(d)] += unit[i] * a;
      for (size_t i = 0; i < loops.size(); ++i)
        if (loops[i].level >= m)
          for (auto [d, a] : update(loops[i]).by)
            o[canon(d)] += step[i] * a;
      for (int d = 0; d < Xi; ++d)
        out[d] = {std::max(out[d].first, o[d]), std::min(out[d].second, o[d] + extent(m, static_cast<D>(d)))};
    }
    return out;
  }

  /// The words of role r's level-l tile at origin o that are real: along an
  /// input window, the window of the real outputs and filter taps.
  std::set<std::vector<int>> tileSet(size_t l, Role r, const std::array<int, kND> &o, const Ranges &real) const {
    std::set<std::vector<int>> out{{}};
    for (D d : roleDims(r)) {
      std::pair<int, int> keep = d == Xi || d == Yi ? std::pair{INT32_MIN, INT32_MAX} : real[d];
      if (d == Xi || d == Yi) {
        auto [xo, w] = d == Xi ? std::pair{real[Xo], real[R]} : std::pair{real[Yo], real[S]};
        keep = {xo.first * c_.stride + w.first * c_.dilation,
                (xo.second - 1) * c_.stride + (w.second - 1) * c_.dilation + 1};
      }
      std::set<std::vector<int>> next;
      for (const auto &e : out)
        for (int i = 0; i < tileSize(l, r, d); ++i) {
          if (o[d] + i < keep.first || o[d] + i >= keep.second)
            continue;
          auto v = e;
          v.push_back(o[d] + i);
          next.insert(v);
        }
      out = std::move(next);
    }
    return out;
  }

  /// The parent of a level-l unit: its stack indices at levels > l.
  std::vector<int> parentOf(size_t l, const std::vector<int> &unit) const {
    return {unit.begin(), unit.begin() + static_cast<long>(unit.size() - c_.levels[l].stacks.size())};
  }

  /// Walks every level-l unit through the nest; calls visit(step index, parent, set).
  template <class F>
  void walk(size_t l, Role r, F visit, std::vector<int> *firstChanged = nullptr) const {
    std::vector<Loop> loops = loopsFrom(l);
    std::vector<int> trips;
    for (const Loop &f : loops)
      trips.push_back(update(f).count);
    std::vector<const Move *> stacks = stacksFrom(l);
    std::vector<int> repls;
    for (const Move *s : stacks)
      repls.push_back(s->count);
    auto steps = odometer(trips);
    if (firstChanged) {
      firstChanged->assign(steps.size(), -1);
      for (size_t j = 1; j < steps.size(); ++j)
        for (size_t i = 0; i < loops.size(); ++i)
          if (steps[j][i] != steps[j - 1][i]) {
            (*firstChanged)[j] = static_cast<int>(i);
            break;
          }
    }
    for (const auto &unit : odometer(repls))
      for (size_t j = 0; j < steps.size(); ++j) {
        // A position idle along a dim of r moves none of r; the unit keeps what
        // it holds. Idle along another dim, it still receives r's real words.
        auto tile = tileSet(l, r, origin(stacks, unit, loops, steps[j]), realPart(l, stacks, unit, loops, steps[j]));
        if (!tile.empty())
          visit(j, unit, tile);
      }
  }

  /// ifm, wgt: fills of level l from level l+1.
  void inputBoundary(size_t l, Role r, Counts &out) const {
    std::vector<Loop> loops = loopsFrom(l);
    // f*: the innermost loop moving a dim of r. Sliding reuse (§6) keeps the
    // overlap only on f*'s own steps, and only if f* is a loop of level l.
    int fstar = -1;
    for (size_t i = loops.size(); i-- > 0;)
      if (movesRole(update(loops[i]), r)) {
        fstar = static_cast<int>(i);
        break;
      }
    bool slides = fstar >= 0 && loops[static_cast<size_t>(fstar)].level == l;
    std::vector<int> changed;
    std::map<std::vector<int>, std::set<std::vector<int>>> held;                 // unit -> contents
    std::map<std::pair<size_t, std::vector<int>>, std::set<std::vector<int>>> fetched; // (step, parent)
    // DRAM does not serve padding: outside the input, ifm words are not read.
    auto data = [&](const std::vector<int> &e) {
      return !(l + 1 == L_ && r == Ifm && c_.width) ||
             (e[2] >= c_.pad && e[2] < c_.pad + c_.width && e[3] >= c_.pad && e[3] < c_.pad + c_.height);
    };
    double writes = 0, dataWrites = 0;
    walk(
        l, r,
        [&](size_t j, const std::vector<int> &unit, const std::set<std::vector<int>> &tile) {
          std::set<std::vector<int>> &have = held[unit];
          if (j > 0 && tile == have)
            return;   // stationary
          std::set<std::vector<int>> fresh;
          for (const auto &e : tile)
            if (!(j > 0 && slides && changed[j] == fstar && have.count(e)))
              fresh.insert(e);
          writes += static_cast<double>(fresh.size());
          for (const auto &e : fresh)
            dataWrites += data(e) ? 1 : 0;
          fetched[{j, parentOf(l, unit)}].insert(fresh.begin(), fresh.end());
          have = tile;
        },
        &changed);
    double reads = 0;
    for (const auto &[key, words] : fetched)
      for (const auto &e : words)
        reads += data(e) ? 1 : 0;
    const LevelSpec &lv = c_.levels[l];
    bool serve = lv.multicast || lv.systolic;
    out.writes[l][r] += writes;
    out.reads[l + 1][r] += serve ? reads : dataWrites;
    if (lv.systolic && !lv.multicast)
      out.same[l][r] += writes - reads;
  }

  /// ofm: write-backs and partial-sum reads between level l and l+1.
  void outputBoundary(size_t l, Counts &out) const {
    // Residencies per (step, parent): the tiles whose residency starts there.
    std::map<std::vector<int>, std::set<std::vector<int>>> held;
    std::map<std::pair<size_t, std::vector<int>>, std::vector<std::set<std::vector<int>>>> starts;
    walk(l, Ofm, [&](size_t j, const std::vector<int> &unit, const std::set<std::vector<int>> &tile) {
      if (j > 0 && held[unit] == tile)
        return;
      held[unit] = tile;
      starts[{j, parentOf(l, unit)}].push_back(tile);
    });
    bool reduce = c_.levels[l].systolic;   // copies reduced across neighbours first
    std::map<std::vector<int>, std::set<std::vector<int>>> visited;   // per parent
    double back = 0, psum = 0, all = 0;
    auto visit = [&](const std::vector<int> &parent, const std::set<std::vector<int>> &words) {
      for (const auto &e : words)
        psum += visited[parent].count(e) ? 1 : 0;
      back += static_cast<double>(words.size());
      visited[parent].insert(words.begin(), words.end());
    };
    for (const auto &[key, tiles] : starts) {
      std::set<std::vector<int>> u;
      for (const auto &t : tiles) {
        all += static_cast<double>(t.size());
        if (reduce)
          u.insert(t.begin(), t.end());
        else
          visit(key.second, t);   // copies one after the other
      }
      if (reduce)
        visit(key.second, u);
    }
    out.reads[l][Ofm] += back, out.writes[l][Ofm] += psum;
    out.writes[l + 1][Ofm] += back, out.reads[l + 1][Ofm] += psum;
    if (reduce)
      out.same[l][Ofm] += all - back;
  }

  /// Every (n, c, k, xo, yo, r, s) point of the layer is computed by exactly
  /// one level-0 unit at exactly one step; returns their number (the MACs).
  double computeEveryPointOnce() const {
    std::map<std::vector<int>, int> times;
    std::vector<Loop> loops = loopsFrom(0);
    std::vector<int> trips;
    for (const Loop &f : loops)
      trips.push_back(update(f).count);
    std::vector<const Move *> stacks = stacksFrom(0);
    std::vector<int> repls;
    for (const Move *s : stacks)
      repls.push_back(s->count);
    std::vector<D> dims = {N, C, K, Xo, Yo, R, S};
    if (c_.depthwise)
      dims = {N, C, Xo, Yo, R, S};
    for (const auto &unit : odometer(repls))
      for (const auto &step : odometer(trips)) {
        auto o = origin(stacks, unit, loops, step);
        Ranges real = realPart(0, stacks, unit, loops, step);
        std::vector<int> ext;
        for (D d : dims) {
          int e = 1;
          for (int r = 0; r < kNR; ++r)
            for (D rd : roleDims(static_cast<Role>(r)))
              if (rd == d)
                e = tileSize(0, static_cast<Role>(r), d);
          ext.push_back(e);
        }
        for (const auto &p : odometer(ext)) {
          std::vector<int> point;
          bool padding = false;   // outside the real part of its tile: not computed
          for (size_t i = 0; i < dims.size(); ++i) {
            point.push_back(o[dims[i]] + p[i]);
            padding = padding || point.back() < real[dims[i]].first || point.back() >= real[dims[i]].second;
          }
          if (!padding)
            ++times[point];
        }
      }
    double expected = 1;
    for (D d : dims)
      expected *= c_.bounds[d];
    EXPECT_EQ(static_cast<double>(times.size()), expected) << "points computed";
    for (const auto &[p, n] : times)
      EXPECT_EQ(n, 1) << "a point is computed " << n << " times";
    for (const auto &[p, n] : times)
      for (size_t i = 0; i < dims.size(); ++i)
        EXPECT_LT(p[i], c_.bounds[dims[i]]) << kDimName[dims[i]] << " outside the layer";
    return static_cast<double>(times.size());
  }

  const Case &c_;
  size_t L_;
};

/// Runs both and compares every count; returns the analysis' layer result.
LayerResult compare(const Case &c, const std::vector<std::vector<int64_t>> &trips) {
  test::Compiled comp = test::compile(c.text + scheduleText(c));
  EXPECT_EQ(comp.diagnostics(), "") << scheduleText(c);
  if (comp.model.schedules.empty())
    return {};
  ScheduleResult res = analyzeSchedule(comp.model, comp.model.schedules[0]);
  EXPECT_TRUE(res.valid && res.complete) << scheduleText(c);
  for (const Issue &i : res.issues)
    ADD_FAILURE() << "issue " << static_cast<int>(i.id) << (i.args.empty() ? "" : ": " + i.args.back());
  if (!res.valid || !res.complete)
    return {};
  const LayerResult &lr = res.layers.at(0);
  for (size_t l = 0; l < trips.size(); ++l)
    EXPECT_EQ(lr.levels[l].trips, trips[l]) << "trip counts at level " << l;
  Counts want = Interpreter(c).run();
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); };
  for (size_t l = 0; l < lr.levels.size(); ++l)
    for (int r = 0; r < kNR; ++r) {
      const LevelAccesses &a = lr.levels[l].accesses;
      EXPECT_PRED2(near, a.reads[r], want.reads[l][r]) << "reads of " << kRoleName[r] << " at level " << l;
      EXPECT_PRED2(near, a.writes[r], want.writes[l][r]) << "writes of " << kRoleName[r] << " at level " << l;
      EXPECT_PRED2(near, a.sameLevel[r], want.same[l][r]) << "same-level " << kRoleName[r] << " at level " << l;
    }
  EXPECT_PRED2(near, res.energyPj, want.energy) << "energy";
  return lr;
}

using test::kTwoLevel;
// Three levels: 2 x 2 PEs passing data systolically, one global buffer, DRAM.
const char *const kThreeLevel = R"(
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 2 x 2; access_energy = 1 pJ; transfer = systolic; }
  level GBUF { capacity = 1 KiB; access_energy = 10 pJ; }
  level DRAM { access_energy = 100 pJ; }
}
)";

std::array<int, kND> bounds(int n, int c, int k, int xo, int yo, int r, int s) {
  return {n, c, k, xo, yo, r, s, 0, 0};
}

LevelSpec level(std::string name, std::map<D, int> ifm, std::map<D, int> wgt, std::map<D, int> ofm,
                std::vector<Move> stacks, std::vector<Move> updates) {
  LevelSpec l;
  l.name = std::move(name);
  l.tile = {std::move(ifm), std::move(wgt), std::move(ofm)};
  l.stacks = std::move(stacks);
  l.updates = std::move(updates);
  return l;
}

// 1-D conv: C=2, 8 inputs, K=2, R=3 -> Xo=6. 72 MACs.
const char *const kConv1d = R"(
network net { input x [C=2, X=8, Y=1]; l = conv(x, K=2, R=3, S=1); }
)";

TEST(AnalysisTest, Conv1dTwoLevels) {
  Case c{std::string(kConv1d) + kTwoLevel, false, bounds(1, 2, 2, 6, 1, 3, 1), {}, 1, 100};
  // Each PE: a 3-tap filter row, its 3 inputs, 1 output. 2 filters x 2
  // neighbouring outputs on 4 PEs; the pair slides by 2 (3 steps), then C.
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}}, {{K, 1}, {C, 1}, {R, 3}}, {{K, 1}, {Xo, 1}},
                         {{{{K, 1}}, 2}, {{{Xo, 1}, {Xi, 1}}, 2}}, {{{{Xo, 2}, {Xi, 2}}, 3}, {{{C, 1}}, 2}});
  regf.multicast = true, regf.energy = 1;
  c.levels = {regf};
  LayerResult lr = compare(c, {{3, 2}});
  if (lr.levels.empty())
    return;
  // By hand, MACs = K2 * Xo6 * C2 * R3 = 72; each MAC reads ifm, wgt and
  // reads + writes its psum at REGF.
  EXPECT_DOUBLE_EQ(lr.work, 72);
  // Weights: f* for wgt is `update C` (trip 2): 2 loads of 3 words per PE,
  // 4 PEs -> 24 REGF writes; the 2 Xo copies share each filter row: 12 DRAM reads.
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.writes[static_cast<size_t>(TensorRole::Wgt)], 24);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Wgt)], 12);
  // Inputs from DRAM, per channel: step 0 the pair needs Xi 0..3 (4 words),
  // steps 1 and 2 only the new Xi 3..5 and 5..7 (3 words each): 10; x C2 = 20.
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Ifm)], 20);
  // Energy by hand: MACs 72 * 1 pJ; REGF 1 pJ per access: 4 * 72 = 288 by the
  // MACs, ifm fills 4 PEs * 2 channels * (3 + 2 + 2) = 56, wgt fills 24, ofm:
  // 6 residencies * 4 PEs = 24 read out, 24 - 12 outputs = 12 read back in:
  // 404; DRAM 100 pJ: 20 ifm + 12 wgt + 24 ofm writes + 12 psum reads = 68.
  // 72 + 404 + 6800 = 7276 pJ.
  EXPECT_DOUBLE_EQ(lr.energyPj, 7276);
}

TEST(AnalysisTest, Conv1dThreeLevels) {
  Case c{std::string(kConv1d) + kThreeLevel, false, bounds(1, 2, 2, 6, 1, 3, 1), {}, 1, 100};
  // 4 PEs: 2 channels x 2 filters, each PE one tap row and one output, sliding
  // over Xo; the C copies reduce their partial sums systolically.
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}}, {{K, 1}, {C, 1}, {R, 3}}, {{K, 1}, {Xo, 1}},
                         {{{{C, 1}}, 2}, {{{K, 1}}, 2}}, {{{{Xo, 1}, {Xi, 1}}, 3}});
  regf.systolic = true, regf.energy = 1;
  // GBUF holds half a row of outputs; walks the two halves.
  LevelSpec gbuf = level("GBUF", {{C, 2}, {Xi, 5}}, {{K, 2}, {C, 2}, {R, 3}}, {{K, 2}, {Xo, 3}}, {},
                         {{{{Xo, 3}, {Xi, 3}}, 2}});
  gbuf.energy = 10;
  c.levels = {regf, gbuf};
  LayerResult lr = compare(c, {{3}, {2}});
  if (lr.levels.empty())
    return;
  // By hand: each PE's output stays for its 1 x R3 taps; it changes on every
  // Xo step: 3 x 2 = 6 residencies per PE, 4 PEs = 24 words; the 2 C copies
  // reduce to 12 GBUF write-backs, none read back (each output visited once).
  // GBUF's ofm reads are then only its own write-backs to DRAM: 2 residencies
  // of its K2 x Xo3 tile = 12 (= K2*Xo6, every output once).
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.writes[static_cast<size_t>(TensorRole::Ofm)], 12);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Ofm)], 12);
  EXPECT_DOUBLE_EQ(lr.levels[2].accesses.reads[static_cast<size_t>(TensorRole::Ofm)], 0);
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.sameLevel[static_cast<size_t>(TensorRole::Ofm)], 12);
}

TEST(AnalysisTest, Conv1dEnergyComponents) {
  // Conv1dTwoLevels' schedule on a template with every energy component
  // (docs/directives.md §7): split read/write energies, free REGF fills (the
  // nn_dataflow accounting), an array bus, static energy and a fused sigmoid.
  Case c{R"(
network net { input x [C=2, X=8, Y=1]; l = conv(x, K=2, R=3, S=1); g = sigmoid(l); }
hardware hw {
  word = 16 bit; frequency = 1 GHz; static_energy = 1 pJ;
  mac { energy = 1 pJ; }
  activation { sigmoid = 0.5 pJ; relu = 9 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; read_energy = 1 pJ; write_energy = 2 pJ; fill_energy = 0 pJ;
               static_energy = 0.25 pJ; transfer = multicast; }
  level DRAM { read_energy = 100 pJ; write_energy = 200 pJ; bus_energy = 0.5 pJ; }
}
)",
         false, bounds(1, 2, 2, 6, 1, 3, 1), {}, 1, 100};
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}}, {{K, 1}, {C, 1}, {R, 3}}, {{K, 1}, {Xo, 1}},
                         {{{{K, 1}}, 2}, {{{Xo, 1}, {Xi, 1}}, 2}}, {{{{Xo, 2}, {Xi, 2}}, 3}, {{{C, 1}}, 2}});
  c.levels = {regf};
  test::Compiled comp = test::compile(c.text + scheduleText(c));
  ASSERT_EQ(comp.diagnostics(), "");
  ScheduleResult res = analyzeSchedule(comp.model, comp.model.schedules[0]);
  ASSERT_TRUE(res.valid && res.complete);
  const LayerResult &lr = res.layers.at(0);
  const size_t ifm = static_cast<size_t>(TensorRole::Ifm), wgt = static_cast<size_t>(TensorRole::Wgt),
               ofm = static_cast<size_t>(TensorRole::Ofm);
  // The counts are Conv1dTwoLevels': REGF fills ifm 56, wgt 24, psums 12 read
  // back in; 24 write-backs read out.
  const LevelAccesses &rf = lr.levels[0].accesses;
  EXPECT_DOUBLE_EQ(rf.fills[ifm], 56);
  EXPECT_DOUBLE_EQ(rf.fills[wgt], 24);
  EXPECT_DOUBLE_EQ(rf.fills[ofm], 12);
  EXPECT_DOUBLE_EQ(rf.writeBacks[ofm], 24);
  // REGF: only the MACs' accesses cost: 72 reads each of ifm, wgt, ofm at
  // 1 pJ, 72 ofm writes at 2 pJ: 216 + 144 = 360 pJ.
  EXPECT_DOUBLE_EQ(lr.levels[0].energyPj, 360);
  // DRAM: reads 20 ifm + 12 wgt + 12 psums = 44 at 100 pJ; 24 writes at 200 pJ.
  EXPECT_DOUBLE_EQ(lr.levels[1].energyPj, 4400 + 4800);
  // Bus: every word filled into or written back from a PE, (56 + 24 + 12 + 24) * 0.5 pJ.
  EXPECT_DOUBLE_EQ(lr.energyBusPj, 58);
  // Static: the chip's 1 pJ plus 16 PEs * 0.25 pJ = 5 pJ per cycle, for the
  // 72 MACs / 4 PEs in use = 18 cycles (no bandwidth limits): 90 pJ.
  EXPECT_DOUBLE_EQ(lr.latencyCycles, 18);
  EXPECT_DOUBLE_EQ(lr.energyStaticPj, 90);
  // Compute: 72 MACs at 1 pJ, and the sigmoid on each of the K2 * Xo6 = 12
  // outputs at 0.5 pJ (relu is priced but not used): 78 pJ.
  EXPECT_DOUBLE_EQ(lr.energyMacPj, 78);
  // 78 + 360 + 9200 + 58 + 90.
  EXPECT_DOUBLE_EQ(lr.energyPj, 9786);
  EXPECT_DOUBLE_EQ(res.energyPj, 9786);
  EXPECT_DOUBLE_EQ(res.energyBusPj, 58);
  EXPECT_DOUBLE_EQ(res.energyStaticPj, 90);
}

TEST(AnalysisTest, NeighborEnergy) {
  // Conv1dThreeLevels' schedule on its systolic (not multicast) PEs: the 2 C
  // copies reduce 12 partial sums between PEs; and the 2 K copies of each ifm
  // window get one copy from GBUF and pass the other on: per PE 3 + 1 + 1
  // words per GBUF step (sliding by 1), 2 steps, 4 PEs = 40 filled, 20 read
  // from GBUF, 20 passed between PEs. Weights are distinct per PE: none.
  // By default each of the 32 transfers costs a read and a write (1 + 1 pJ);
  // with `neighbor_energy = 0.5 pJ`, 0.5 pJ: the energy drops by
  // 32 * (2 - 0.5) = 48 pJ and nothing else changes.
  auto energy = [](const std::string &extra) {
    std::string hw = kThreeLevel;
    hw.replace(hw.find("transfer = systolic;"), std::string("transfer = systolic;").size(),
               "transfer = systolic;" + extra);
    Case c{std::string(kConv1d) + hw, false, bounds(1, 2, 2, 6, 1, 3, 1), {}, 1, 100};
    LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}}, {{K, 1}, {C, 1}, {R, 3}}, {{K, 1}, {Xo, 1}},
                           {{{{C, 1}}, 2}, {{{K, 1}}, 2}}, {{{{Xo, 1}, {Xi, 1}}, 3}});
    LevelSpec gbuf = level("GBUF", {{C, 2}, {Xi, 5}}, {{K, 2}, {C, 2}, {R, 3}}, {{K, 2}, {Xo, 3}}, {},
                           {{{{Xo, 3}, {Xi, 3}}, 2}});
    c.levels = {regf, gbuf};
    test::Compiled comp = test::compile(c.text + scheduleText(c));
    EXPECT_EQ(comp.diagnostics(), "");
    ScheduleResult res = analyzeSchedule(comp.model, comp.model.schedules.at(0));
    EXPECT_TRUE(res.valid && res.complete);
    const LevelAccesses &pe = res.layers.at(0).levels.at(0).accesses;
    EXPECT_DOUBLE_EQ(pe.sameLevel[static_cast<size_t>(TensorRole::Ofm)], 12);
    EXPECT_DOUBLE_EQ(pe.sameLevel[static_cast<size_t>(TensorRole::Ifm)], 20);
    EXPECT_DOUBLE_EQ(pe.sameLevel[static_cast<size_t>(TensorRole::Wgt)], 0);
    return res.energyPj;
  };
  EXPECT_DOUBLE_EQ(energy("") - energy(" neighbor_energy = 0.5 pJ;"), 48);
}

TEST(AnalysisTest, Conv1dUnicast) {
  // As Conv1dTwoLevels, but the register files are filled one at a time.
  std::string hw = kTwoLevel;
  hw.replace(hw.find("transfer = multicast"), std::string("transfer = multicast").size(), "transfer = unicast");
  Case c{std::string(kConv1d) + hw, false, bounds(1, 2, 2, 6, 1, 3, 1), {}, 1, 100};
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}}, {{K, 1}, {C, 1}, {R, 3}}, {{K, 1}, {Xo, 1}},
                         {{{{K, 1}}, 2}, {{{Xo, 1}, {Xi, 1}}, 2}}, {{{{Xo, 2}, {Xi, 2}}, 3}, {{{C, 1}}, 2}});
  regf.energy = 1;
  c.levels = {regf};
  LayerResult lr = compare(c, {{3, 2}});
  if (lr.levels.empty())
    return;
  // By hand: every copy is read: per PE and channel 3 + 2 + 2 = 7 input
  // words, 4 PEs x 2 channels = 56 DRAM reads; weights 4 PEs x 2 x 3 = 24.
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Ifm)], 56);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Wgt)], 24);
}

// Conv with stride 2 and padding 1: 7 x 7 -> Xo = (7 + 2 - 3)/2 + 1 = 4;
// padded input 9 x 9 = (4-1)*2 + 3. C=2, K=2: 2*2*4*4*3*3 = 576 MACs.
const char *const kConvStride = R"(
network net { input x [C=2, X=7, Y=7]; l = conv(x, K=2, R=3, stride=2, pad=1); }
)";

TEST(AnalysisTest, ConvStridePadTwoLevels) {
  Case c{std::string(kConvStride) + kTwoLevel, false, bounds(1, 2, 2, 4, 4, 3, 3), {}, 1, 100, 1, 7, 7};
  c.stride = 2;
  // Each PE: one 3 x 3 window of one channel for one filter; 4 output columns
  // on 4 PEs (inputs 2 apart, overlapping by 1), then K, rows and C in time.
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}, {Yi, 3}}, {{K, 1}, {C, 1}, {R, 3}, {S, 3}},
                         {{K, 1}, {Xo, 1}, {Yo, 1}}, {{{{Xo, 1}, {Xi, 2}}, 4}},
                         {{{{Yo, 1}, {Yi, 2}}, 4}, {{{K, 1}}, 2}, {{{C, 1}}, 2}});
  regf.multicast = true, regf.energy = 1;
  c.levels = {regf};
  LayerResult lr = compare(c, {{4, 2, 2}});
  if (lr.levels.empty())
    return;
  EXPECT_DOUBLE_EQ(lr.work, 576);
  // By hand: the outputs are revisited for every C (outermost): each of the
  // 2*4*4 = 32 outputs is written back twice, read back once: 64 and 32.
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.writes[static_cast<size_t>(TensorRole::Ofm)], 64);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Ofm)], 32);
}

TEST(AnalysisTest, ConvStridePadThreeLevels) {
  Case c{std::string(kConvStride) + kThreeLevel, false, bounds(1, 2, 2, 4, 4, 3, 3), {}, 1, 100, 1, 7, 7};
  c.stride = 2;
  // PEs: 2 filters x 2 output columns; a PE walks the filter's rows (S).
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}, {Yi, 1}}, {{K, 1}, {C, 1}, {R, 3}, {S, 1}},
                         {{K, 1}, {Xo, 1}, {Yo, 1}}, {{{{K, 1}}, 2}, {{{Xo, 1}, {Xi, 2}}, 2}},
                         {{{{S, 1}, {Yi, 1}}, 3}, {{{C, 1}}, 2}});
  regf.systolic = true, regf.energy = 1;
  // GBUF: half the columns of one output row at a time.
  LevelSpec gbuf = level("GBUF", {{C, 2}, {Xi, 5}, {Yi, 3}}, {{K, 2}, {C, 2}, {R, 3}, {S, 3}},
                         {{K, 2}, {Xo, 2}, {Yo, 1}}, {},
                         {{{{Xo, 2}, {Xi, 4}}, 2}, {{{Yo, 1}, {Yi, 2}}, 4}});
  gbuf.energy = 10;
  c.levels = {regf, gbuf};
  compare(c, {{3, 2}, {2, 4}});
}

// FC: 4 x 2 x 2 inputs -> K=3, batch 2: R = S = 2 (the whole input), 2*3*4*2*2 = 96 MACs.
const char *const kFc = R"(
network net { batch N = 2; input x [C=4, X=2, Y=2]; l = fc(x, K=3); }
)";

TEST(AnalysisTest, FcTwoLevels) {
  Case c{std::string(kFc) + kTwoLevel, false, bounds(2, 4, 3, 1, 1, 2, 2), {}, 1, 100};
  // 3 filters x 4 channels on 12 PEs; each PE a whole 2 x 2 plane; batch in time.
  LevelSpec regf = level("REGF", {{N, 1}, {C, 1}, {Xi, 2}, {Yi, 2}}, {{K, 1}, {C, 1}, {R, 2}, {S, 2}},
                         {{N, 1}, {K, 1}}, {{{{K, 1}}, 3}, {{{C, 1}}, 4}}, {{{{N, 1}}, 2}});
  regf.multicast = true, regf.energy = 1;
  c.levels = {regf};
  LayerResult lr = compare(c, {{2}});
  if (lr.levels.empty())
    return;
  EXPECT_DOUBLE_EQ(lr.work, 96);
  // By hand: weights stay (no loop moves them): 12 PEs x 4 words = 48 writes,
  // each word read once from DRAM: 3*4*2*2 = 48. Outputs: 12 PEs x 2 samples
  // = 24 write-backs (no systolic reduction), 24 - 3*2 outputs = 18 read back.
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Wgt)], 48);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.writes[static_cast<size_t>(TensorRole::Ofm)], 24);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Ofm)], 18);
}

TEST(AnalysisTest, FcThreeLevels) {
  Case c{std::string(kFc) + kThreeLevel, false, bounds(2, 4, 3, 1, 1, 2, 2), {}, 1, 100};
  LevelSpec regf = level("REGF", {{N, 1}, {C, 1}, {Xi, 2}, {Yi, 1}}, {{K, 1}, {C, 1}, {R, 2}, {S, 1}},
                         {{N, 1}, {K, 1}}, {{{{C, 1}}, 2}, {{{S, 1}, {Yi, 1}}, 2}}, {{{{K, 1}}, 3}});
  regf.systolic = true, regf.energy = 1;
  LevelSpec gbuf = level("GBUF", {{N, 1}, {C, 2}, {Xi, 2}, {Yi, 2}}, {{K, 3}, {C, 2}, {R, 2}, {S, 2}},
                         {{N, 1}, {K, 3}}, {}, {{{{C, 2}}, 2}, {{{N, 1}}, 2}});
  gbuf.energy = 10;
  c.levels = {regf, gbuf};
  compare(c, {{3}, {2, 2}});
}

// Depthwise conv: C=4 channels of 6 inputs, R=3 -> Xo=4; 4*4*3 = 48 MACs.
const char *const kDw = R"(
network net { input x [C=4, X=6, Y=1]; l = dwconv(x, R=3, S=1); }
)";

TEST(AnalysisTest, DepthwiseTwoLevels) {
  Case c{std::string(kDw) + kTwoLevel, true, bounds(1, 4, 4, 4, 1, 3, 1), {}, 1, 100};
  // 4 channels on 4 PEs, each sliding its own 3-tap row along Xo.
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}}, {{C, 1}, {R, 3}}, {{K, 1}, {Xo, 1}}, {{{{C, 1}}, 4}},
                         {{{{Xo, 1}, {Xi, 1}}, 4}});
  regf.multicast = true, regf.energy = 1;
  c.levels = {regf};
  LayerResult lr = compare(c, {{4}});
  if (lr.levels.empty())
    return;
  EXPECT_DOUBLE_EQ(lr.work, 48);
  // By hand: a depthwise filter has C*R*S = 4*3 = 12 words; each is loaded once.
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Wgt)], 12);
  // REGF holds 3 ifm + 3 wgt + 1 ofm = 7 words = 14 B.
  EXPECT_EQ(lr.levels[0].occupancyBytes, 14);
}

TEST(AnalysisTest, DepthwiseThreeLevels) {
  Case c{std::string(kDw) + kThreeLevel, true, bounds(1, 4, 4, 4, 1, 3, 1), {}, 1, 100};
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}}, {{C, 1}, {R, 3}}, {{K, 1}, {Xo, 1}},
                         {{{{Xo, 1}, {Xi, 1}}, 2}, {{{C, 1}}, 2}}, {{{{Xo, 2}, {Xi, 2}}, 2}});
  regf.systolic = true, regf.energy = 1;
  LevelSpec gbuf = level("GBUF", {{C, 2}, {Xi, 6}}, {{C, 2}, {R, 3}}, {{K, 2}, {Xo, 4}}, {}, {{{{C, 2}}, 2}});
  gbuf.energy = 10;
  c.levels = {regf, gbuf};
  LayerResult lr = compare(c, {{2}, {2}});
  if (lr.levels.empty())
    return;
  // By hand: a depthwise wgt tile has C*R*S words (K is C, not another factor):
  // GBUF holds ifm 2*6 = 12 + wgt 2*3 = 6 + ofm 2*4 = 8 = 26 words = 52 B.
  EXPECT_EQ(lr.levels[1].occupancyBytes, 52);
  EXPECT_DOUBLE_EQ(lr.levels[2].accesses.reads[static_cast<size_t>(TensorRole::Wgt)], 12);
  // Inputs into REGF, per GBUF channel pair: both Xo copies of each channel
  // first fetch Xi 0..3 (4 distinct words), then the new Xi 3..5 (3 words):
  // 2 channels * 7 = 14; 2 channel pairs = 28 GBUF reads.
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[static_cast<size_t>(TensorRole::Ifm)], 28);
}

// Partial last tiles (docs/directives.md §4, "Partial tiles"): tiles that do
// not divide the enclosing extent. The interpreter clips every tile to its
// enclosing tiles and the layer; a position whose tile of a role is empty
// moves none of it.

// 1-D conv with a prime K: C=2, 8 inputs, K=7, R=3 -> Xo=6. 252 MACs.
const char *const kConv1dK7 = R"(
network net { input x [C=2, X=8, Y=1]; l = conv(x, K=7, R=3, S=1); }
)";

TEST(AnalysisTest, PartialLastTileTwoLevels) {
  Case c{std::string(kConv1dK7) + kTwoLevel, false, bounds(1, 2, 7, 6, 1, 3, 1), {}, 1, 100};
  // 4 PEs stacked along K; each walks the output columns Xo, then K steps by
  // 4: ceil(7/4) = 2 trips cover K 0..7, and in the second PE 3 (K=7) idles.
  LevelSpec regf = level("REGF", {{C, 2}, {Xi, 3}}, {{K, 1}, {C, 2}, {R, 3}}, {{K, 1}, {Xo, 1}},
                         {{{{K, 1}}, 4}}, {{{{Xo, 1}, {Xi, 1}}, 6}, {{{K, 4}}, 2}});
  regf.multicast = true, regf.energy = 1;
  c.levels = {regf};
  LayerResult lr = compare(c, {{6, 2}});
  if (lr.levels.empty())
    return;
  auto acc = [&](size_t l) { return lr.levels[l].accesses; };
  const size_t ifm = static_cast<size_t>(TensorRole::Ifm), wgt = static_cast<size_t>(TensorRole::Wgt),
               ofm = static_cast<size_t>(TensorRole::Ofm);
  // By hand. MACs count real work only: K7 * C2 * Xo6 * R3 = 252.
  EXPECT_DOUBLE_EQ(lr.work, 252);
  // Weights: f* = `update K`: a PE loads its C2 x R3 = 6 words once per K
  // trip it is not idle: 7 real (PE, trip) pairs, 42 REGF writes (nominal
  // 4 * 2 * 6 = 48, times the real share 7/8); the PEs hold different
  // filters, so DRAM reads are the same 42.
  EXPECT_DOUBLE_EQ(acc(0).writes[wgt], 42);
  EXPECT_DOUBLE_EQ(acc(1).reads[wgt], 42);
  // Inputs: K is not an ifm dim, so an idle PE still receives its window
  // (a multicast reaches the whole array). f* = `update Xo` slides by 1 over
  // a 3-wide window: per PE and K trip 2 * (3 + 5 * 1) = 16 words; 4 PEs x 2
  // trips = 128 writes; multicast: DRAM reads 16 per K trip = 32.
  EXPECT_DOUBLE_EQ(acc(0).writes[ifm], 128);
  EXPECT_DOUBLE_EQ(acc(1).reads[ifm], 32);
  // Outputs: each real output (K7 x Xo6 = 42) is written back once, never
  // read back (C and R are whole in a PE).
  EXPECT_DOUBLE_EQ(acc(1).writes[ofm], 42);
  EXPECT_DOUBLE_EQ(acc(1).reads[ofm], 0);
  // Latency: a PE runs 6 * 2 steps of 1 * 2 * 3 = 6 MACs, idle or not: 72
  // cycles, the padded work 252 * 8/7 over 4 PEs. Utilization: 252 MACs over
  // 16 PEs x 72 cycles = 0.21875 (= 4/16 PEs in use x 7/8 of their steps real).
  EXPECT_DOUBLE_EQ(lr.computeCycles, 72);
  EXPECT_DOUBLE_EQ(lr.latencyCycles, 72);
  EXPECT_DOUBLE_EQ(lr.utilization, 0.21875);
  // Energy: MACs 252 pJ; REGF 1 pJ: 4 * 252 by the MACs + 128 ifm + 42 wgt
  // writes + 42 ofm read out = 1220; DRAM 100 pJ: 32 + 42 + 42 = 116 words.
  EXPECT_DOUBLE_EQ(lr.energyPj, 252 + 1220 + 11600);
}

// C=3, K=5 (both prime), 8 inputs, R=3 -> Xo=6: 270 MACs.
const char *const kConv1dC3K5 = R"(
network net { input x [C=3, X=8, Y=1]; l = conv(x, K=5, R=3, S=1); }
)";

TEST(AnalysisTest, PartialTilesThreeLevels) {
  Case c{std::string(kConv1dC3K5) + kThreeLevel, false, bounds(1, 3, 5, 6, 1, 3, 1), {}, 1, 100};
  // 2 x 2 PEs: K and C stacked, the C copies reduced systolically.
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 3}}, {{K, 1}, {C, 1}, {R, 3}}, {{K, 1}, {Xo, 1}},
                         {{{{K, 1}}, 2}, {{{C, 1}}, 2}}, {{{{Xo, 1}, {Xi, 1}}, 6}, {{{K, 2}}, 2}});
  regf.systolic = true, regf.energy = 1;
  // GBUF: K in tiles of 4 (ceil(5/4) = 2: the second holds only K=4), C in
  // tiles of 2 (ceil(3/2) = 2: the second holds only C=2). Inside the
  // partial tiles PEs idle: K=5..7 and C=3 do not exist.
  LevelSpec gbuf = level("GBUF", {{C, 2}, {Xi, 8}}, {{K, 4}, {C, 2}, {R, 3}}, {{K, 4}, {Xo, 6}}, {},
                         {{{{K, 4}}, 2}, {{{C, 2}}, 2}});
  gbuf.energy = 10;
  c.levels = {regf, gbuf};
  LayerResult lr = compare(c, {{6, 2}, {2, 2}});
  if (lr.levels.empty())
    return;
  const size_t wgt = static_cast<size_t>(TensorRole::Wgt), ofm = static_cast<size_t>(TensorRole::Ofm);
  EXPECT_DOUBLE_EQ(lr.work, 270);
  // By hand, DRAM: every real weight once (GBUF's wgt moves with its
  // innermost update): K5 x C3 x R3 = 45.
  EXPECT_DOUBLE_EQ(lr.levels[2].accesses.reads[wgt], 45);
  // Outputs at DRAM: the C loop is outermost, so each of the 5 x 6 = 30
  // outputs is written back once per C tile (2) and read back once: 60, 30.
  EXPECT_DOUBLE_EQ(lr.levels[2].accesses.writes[ofm], 60);
  EXPECT_DOUBLE_EQ(lr.levels[2].accesses.reads[ofm], 30);
  // Latency: each PE runs 6 * 2 * 2 * 2 = 48 steps of R3 MACs = 144 cycles:
  // the padded work 270 * (8/5 along K) * (4/3 along C) = 576 over 4 PEs.
  // Utilization 270 / (4 * 144) = 0.46875.
  EXPECT_DOUBLE_EQ(lr.computeCycles, 144);
  EXPECT_DOUBLE_EQ(lr.utilization, 0.46875);
}

/// The coverage issues of a schedule of `one` (tests/lit/check/Inputs) at REGF.
std::vector<diag::ID> coverageIssues(const std::string &regfMoves, const std::string &gbufMoves) {
  std::string text = R"(
network one { batch N = 2; input x [C=4, X=8, Y=8]; c1 = conv(x, K=7, R=3, pad=1); }
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; transfer = multicast; }
  level GBUF { capacity = 8 KiB; array = 4 x 4; access_energy = 10 pJ; transfer = multicast; }
  level DRAM { access_energy = 100 pJ; }
}
schedule for one on hw {
  layer c1 {
    REGF {
      tensor ifm [N=1, C=1, Xi=3, Yi=3];
      tensor wgt [K=1, C=1, R=3, S=3];
      tensor ofm [N=1, K=1, Xo=1, Yo=1];
      )" + regfMoves + R"(
    }
    GBUF {
      tensor ifm [N=2, C=4, Xi=10, Yi=10];
      tensor wgt [K=4, C=4, R=3, S=3];
      tensor ofm [N=2, K=4, Xo=8, Yo=8];
      )" + gbufMoves + R"(
    }
  }
}
)";
  test::Compiled comp = test::compile(text);
  EXPECT_TRUE(comp.model.schedules.size() == 1) << comp.diagnostics();
  std::vector<diag::ID> ids;
  if (comp.model.schedules.size() == 1)
    for (const Issue &i : analyzeSchedule(comp.model, comp.model.schedules[0]).issues)
      ids.push_back(i.id);
  return ids;
}

TEST(AnalysisTest, PartialTileCoverage) {
  const std::string regf = "update C += 1; update Xo += 1, Xi += 1; update Yo += 1, Yi += 1; update N += 1; ";
  // K=7 under GBUF tiles of 4: the outermost update over-covers by 1 < 4 (valid).
  EXPECT_EQ(coverageIssues(regf + "update K += 1;", "update K += 4;"), std::vector<diag::ID>{});
  // A GBUF stack of 2 x 4 covers 8: over by 1, less than its shift 4 (valid).
  EXPECT_EQ(coverageIssues(regf + "update K += 1;", "stack K += 4 repl 2;"), std::vector<diag::ID>{});
  // Over by a full step or more: a unit with nothing to do (E0804). GBUF K=4
  // stacked 3 times covers 12 > 7 + 4.
  EXPECT_EQ(coverageIssues(regf + "update K += 1;", "stack K += 4 repl 3;"),
            std::vector<diag::ID>{diag::err_coverage_gap});
  // A gap stays a gap: REGF tiles of K=1 stepping by 2.
  EXPECT_EQ(coverageIssues(regf + "update K += 2;", "update K += 4;"), std::vector<diag::ID>{diag::err_coverage_gap});
  // An inner factor must tile the next one exactly: 3 PEs of K=1 stepping by
  // 4 would leave K=3 uncomputed (E0804, not a partial tile: it is not the outermost).
  EXPECT_EQ(coverageIssues(regf + "stack K += 1 repl 3; update K += 4;", "update K += 4;"),
            std::vector<diag::ID>{diag::err_coverage_gap});
}

// Two nodes that split the reduction: a 1x1 conv, C=4, K=2, 2 outputs
// (2*2*4 = 16 MACs), one PE per node, each node summing half the channels.
const char *const kSplitC = R"(
network net { input x [C=4, X=2, Y=1]; l = conv(x, K=2, R=1, S=1); }
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 1 x 1; access_energy = 1 pJ; transfer = multicast; }
  level GBUF { capacity = 1 KiB; array = 1 x 2; access_energy = 10 pJ; transfer = multicast; }
  level DRAM { access_energy = 100 pJ; }
}
)";

TEST(AnalysisTest, FirstVisitPerPartialSum) {
  Case c{kSplitC, false, bounds(1, 4, 2, 2, 1, 1, 1), {}, 1, 100};
  // PE: one MAC at a time, C innermost (the output stays), then K, then Xo.
  LevelSpec regf = level("REGF", {{C, 1}, {Xi, 1}}, {{K, 1}, {C, 1}}, {{K, 1}, {Xo, 1}}, {},
                         {{{{C, 1}}, 2}, {{{K, 1}}, 2}, {{{Xo, 1}, {Xi, 1}}, 2}});
  regf.multicast = true, regf.energy = 1;
  // Nodes: node i sums channels 2i, 2i+1 of all 4 outputs.
  LevelSpec gbuf = level("GBUF", {{C, 2}, {Xi, 2}}, {{K, 2}, {C, 2}}, {{K, 2}, {Xo, 2}}, {{{{C, 2}}, 2}}, {});
  gbuf.multicast = true, gbuf.energy = 10;
  c.levels = {regf, gbuf};
  LayerResult lr = compare(c, {{2, 2, 2}, {}});
  if (lr.levels.empty())
    return;
  const size_t ofm = static_cast<size_t>(TensorRole::Ofm);
  // By hand, REGF <-> GBUF: each PE writes each of its node's 2*2 = 4 partial
  // sums back once (C is innermost): 2 nodes * 4 = 8 write-backs. Each node's
  // GBUF holds its own partial sum of each output, and the first visit of
  // each is read-free in each node: 8 - 2*4 = 0 psum reads (not 8 - |ofm| = 4).
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.writes[ofm], 16);  // the MACs' own, no psum brought back
  // GBUF <-> DRAM: both nodes' 4 partial sums go to DRAM (8 writes); DRAM holds
  // one copy of the 4 outputs, so 8 - 4 = 4 are read back into a GBUF first.
  EXPECT_DOUBLE_EQ(lr.levels[2].accesses.writes[ofm], 8);
  EXPECT_DOUBLE_EQ(lr.levels[2].accesses.reads[ofm], 4);
  // GBUF: reads 8 (to DRAM) + 0 (to the PEs); writes 8 (from the PEs) + 4 (from DRAM).
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[ofm], 8);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.writes[ofm], 12);
}

// Input windows cut by a partial tile, checked word for word (issue 12:
// the simulator's kernels found these). 2-D conv, C=1, K=1, 5 x 5 input,
// R=S=3, stride 2, pad 1: Xo = Yo = (5 + 2 - 3)/2 + 1 = 3, padded input 7 x 7.
// 81 MACs.
const char *const kStridePad5 = R"(
network net { input x [C=1, X=5, Y=5]; l = conv(x, K=1, R=3, stride=2, pad=1); }
)";

TEST(AnalysisTest, PartialWindowReadsEveryInputWordFromDram) {
  std::string hw = kTwoLevel;   // with room for a 5 x 7 window: 50 words
  hw.replace(hw.find("64 B"), 4, "128 B");
  Case c{kStridePad5 + hw, false, bounds(1, 1, 1, 3, 3, 3, 3), {}, 1, 100};
  c.pad = 1, c.width = 5, c.height = 5, c.stride = 2;
  // Two PEs split Xo in tiles of 2: PE 0 holds Xo 0..1 (padded Xi 0..4), PE 1
  // only Xo 2 of its 2 (Xi 4..6 of its nominal 4..8). Both hold all of Yo
  // (Yi 0..6). No update: each PE fills once.
  LevelSpec regf = level("REGF", {{Xi, 5}, {Yi, 7}}, {{R, 3}, {S, 3}}, {{Xo, 2}, {Yo, 3}}, {{{{Xo, 2}, {Xi, 4}}, 2}},
                         {});
  regf.multicast = true, regf.energy = 1;
  c.levels = {regf};
  LayerResult lr = compare(c, {{}});
  if (lr.levels.empty())
    return;
  const size_t ifm = static_cast<size_t>(TensorRole::Ifm);
  EXPECT_TRUE(lr.exactCounts);
  // By hand: the PEs write their real windows, 5 x 7 + 3 x 7 = 56 words; the
  // multicast reads their union, padded Xi 0..6 x Yi 0..6, of which DRAM
  // serves the data, Xi 1..5 x Yi 1..5: every input word once, 25 (the
  // analysis said 20 when it cut the partial window for padding twice).
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.writes[ifm], 56);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[ifm], 25);
}

// 1-D conv: C=1, 8 inputs, K=1, R=3 -> Xo=6: 18 MACs.
const char *const kConv1dK1 = R"(
network net { input x [C=1, X=8, Y=1]; l = conv(x, K=1, R=3, S=1); }
)";

TEST(AnalysisTest, OverlappingStackedWindowsCutByAPartialTile) {
  Case c{std::string(kConv1dK1) + kTwoLevel, false, bounds(1, 1, 1, 6, 1, 3, 1), {}, 1, 100};
  // 3 x 2 PEs: three outputs side by side, each with two filter taps (two
  // stacks that both move Xi, so the PEs' one-word windows overlap). Xo
  // steps by 3 inside, R by 2 outside: ceil(3/2) = 2 trips, and in the
  // second only tap 2 exists (the PEs of tap 3 idle).
  LevelSpec regf = level("REGF", {{Xi, 1}}, {{R, 1}}, {{Xo, 1}},
                         {{{{Xo, 1}, {Xi, 1}}, 3}, {{{R, 1}, {Xi, 1}}, 2}},
                         {{{{Xo, 3}, {Xi, 3}}, 2}, {{{R, 2}, {Xi, 2}}, 2}});
  regf.multicast = true, regf.energy = 1;
  c.levels = {regf};
  LayerResult lr = compare(c, {{2, 2}});
  if (lr.levels.empty())
    return;
  const size_t ifm = static_cast<size_t>(TensorRole::Ifm), wgt = static_cast<size_t>(TensorRole::Wgt),
               ofm = static_cast<size_t>(TensorRole::Ofm);
  EXPECT_TRUE(lr.exactCounts);
  // By hand, the multicast reads per step the union of the real windows
  // Xi = Xo + R: taps 0,1 with Xo 0..2 -> Xi 0..3 (4), Xo 3..5 -> 3..6 (4);
  // tap 2 alone: Xo 0..2 -> 2..4 (3), Xo 3..5 -> 5..7 (3). 14 DRAM reads
  // (the analysis said 12: the nominal union, 4 of 6 tiles, times the real share).
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[ifm], 14);
  // One word per real (PE, step): Xo 6 x R 3 = 18 writes, one per MAC.
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.writes[ifm], 18);
  // Weights: one tap per PE per R trip where it exists: 3 x (2 + 1) = 9
  // writes; the multicast reads taps 0, 1 then 2: 3.
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.writes[wgt], 9);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[wgt], 3);
  // Outputs: every PE, idle tap or not, writes its output back at every
  // step (6 x 4 = 24, no reduction at REGF); all but the first visit of each
  // of the 6 outputs are read back: 18.
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.writes[ofm], 24);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[ofm], 18);
}

// Where a unit resumes, after idling, the tile it holds, it keeps it: the
// counts do not know it and are an upper bound, and the analysis says so
// (LayerResult::exactCounts, docs/directives.md §4).
TEST(AnalysisTest, ResumingTheHeldTileIsNotClaimedExact) {
  test::Compiled comp = test::compile(std::string(kConv1dK1) + kTwoLevel + R"(
schedule for net on hw {
  layer l {
    REGF {
      tensor ifm [Xi=1]; tensor wgt [R=1]; tensor ofm [Xo=1];
      stack Xo += 1, Xi += 1 repl 3; stack R += 1, Xi += 1 repl 2;
      update R += 2, Xi += 2; update Xo += 3, Xi += 3;
    }
  }
}
)");
  ASSERT_EQ(comp.diagnostics(), "");
  ScheduleResult res = analyzeSchedule(comp.model, comp.model.schedules[0]);
  ASSERT_TRUE(res.valid && res.complete);
  const LayerResult &lr = res.layers[0];
  EXPECT_FALSE(lr.exactCounts);
  // R moves inside Xo now. The PEs of tap 1 fill it at the first R trip, idle
  // at the second (tap 3), and find it held at the next Xo trip: 3 PEs x 1
  // fill, where the counts take 2. Tap 0's PEs fill taps 0 and 2 on both
  // Xo trips: 3 x 4. So 15 fills happen; the counts say 3 x (4 + 2) = 18.
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.writes[static_cast<size_t>(TensorRole::Wgt)], 18);
}

// Two windows of different positions can be one window: stride 2, with R
// stepping inside Xo. Even tiles, one PE (C=1, 7 inputs, K=1, R=3 -> Xo=3).
TEST(AnalysisTest, CoincidingWindowsAreNotClaimedExact) {
  Case c{std::string(R"(
network net { input x [C=1, X=7, Y=1]; l = conv(x, K=1, R=3, S=1, stride=2); }
)") + kTwoLevel,
         false, bounds(1, 1, 1, 3, 1, 3, 1), {}, 1, 100};
  c.stride = 2;
  LevelSpec regf = level("REGF", {{Xi, 1}}, {{R, 1}}, {{Xo, 1}}, {},
                         {{{{R, 1}, {Xi, 1}}, 3}, {{{Xo, 1}, {Xi, 2}}, 3}});
  regf.multicast = true, regf.energy = 1;
  c.levels = {regf};
  test::Compiled comp = test::compile(c.text + scheduleText(c));
  ASSERT_EQ(comp.diagnostics(), "");
  ScheduleResult res = analyzeSchedule(comp.model, comp.model.schedules[0]);
  ASSERT_TRUE(res.valid && res.complete);
  const size_t ifm = static_cast<size_t>(TensorRole::Ifm);
  EXPECT_FALSE(res.layers[0].exactCounts);
  // By hand: the PE's input word is Xi = 2·xo + r: 0 1 2 | 2 3 4 | 4 5 6.
  // Twice the next output starts at the word it holds: 7 fills, where the
  // counts take one per step, 9.
  EXPECT_DOUBLE_EQ(Interpreter(c).run().writes[0][Ifm], 7);
  EXPECT_DOUBLE_EQ(res.layers[0].levels[0].accesses.writes[ifm], 9);
}

// The MACs' own accesses of a 3-operand add: per output point each operand
// is read once (3), the output read and written once; 2 additions.
TEST(AnalysisTest, AddOfThreeOperandsReadsEachOnce) {
  test::Compiled comp = test::compile(std::string(R"(
network net { input a [C=1, X=4, Y=1]; input b [C=1, X=4, Y=1]; input c [C=1, X=4, Y=1]; s = add(a, b, c); }
)") + kTwoLevel + R"(
schedule for net on hw {
  layer s {
    REGF {
      tensor ifm [C=1, Xi=1]; tensor ofm [K=1, Xo=1];
      stack Xo += 1, Xi += 1 repl 4;
    }
  }
}
)");
  ASSERT_EQ(comp.diagnostics(), "");
  ScheduleResult res = analyzeSchedule(comp.model, comp.model.schedules[0]);
  ASSERT_TRUE(res.valid && res.complete);
  const LayerResult &lr = res.layers[0];
  const size_t ifm = static_cast<size_t>(TensorRole::Ifm), ofm = static_cast<size_t>(TensorRole::Ofm);
  // 4 points: 8 additions; REGF: 3 x 4 operand words written in and 12 read
  // by the adds, 4 outputs read and written by them and 4 read out to DRAM.
  EXPECT_DOUBLE_EQ(lr.work, 8);
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.writes[ifm], 12);
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.reads[ifm], 12);
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.writes[ofm], 4);
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.reads[ofm], 4 + 4);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.reads[ifm], 12);
}

// nn_dataflow's accounting switches (docs/directives.md §12): each changes
// exactly the counts it names, derived by hand below.
/// One count of a level's accesses without and with a switch, and what each must be.
struct SwitchCount {
  size_t level;
  std::array<double, kNumRoles> LevelAccesses::*what;
  TensorRole role;
  double off, on;
};

void expectCounts(const LayerResult &off, const LayerResult &on, std::initializer_list<SwitchCount> counts) {
  for (const SwitchCount &c : counts) {
    size_t r = static_cast<size_t>(c.role);
    EXPECT_DOUBLE_EQ((off.levels.at(c.level).accesses.*c.what)[r], c.off) << "level " << c.level << " role " << r;
    EXPECT_DOUBLE_EQ((on.levels.at(c.level).accesses.*c.what)[r], c.on) << "level " << c.level << " role " << r;
  }
}

LayerResult analyzeOne(const std::string &text) {
  test::Compiled comp = test::compile(text);
  EXPECT_EQ(comp.diagnostics(), "");
  if (comp.model.schedules.empty())
    return {};
  ScheduleResult res = analyzeSchedule(comp.model, comp.model.schedules.at(0));
  EXPECT_TRUE(res.valid && res.complete);
  return res.layers.at(0);
}

TEST(AnalysisTest, FetchPaddingServesThePaddedMap) {
  // kStridePad5 on one PE that holds the whole padded 7 x 7 input: DRAM
  // serves the 25 input words by default (§6), the 49 of the padded map with
  // `fetch_padding` (nn_dataflow's layer input is the padded map).
  auto dramIfm = [](const std::string &dram) {
    std::string text = std::string(kStridePad5) + R"(
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 256 B; access_energy = 1 pJ; }
  level DRAM { access_energy = 100 pJ; )" + dram + R"( }
}
schedule for net on hw { layer l { REGF {
  tensor ifm [Xi=7, Yi=7]; tensor wgt [R=3, S=3]; tensor ofm [Xo=3, Yo=3];
} } }
)";
    LayerResult lr = analyzeOne(text);
    return lr.levels.empty() ? -1.0 : lr.levels.back().accesses.reads[static_cast<size_t>(TensorRole::Ifm)];
  };
  EXPECT_DOUBLE_EQ(dramIfm(""), 25);
  EXPECT_DOUBLE_EQ(dramIfm("fetch_padding = true;"), 49);
}

// A 1x1 conv, C=4, Xo=2 (8 MACs), on two systolic PEs that split C; the GBUF
// holds everything. Per PE: Xo inside C, so each output is left and resumed.
std::string psumCase(const std::string &regfExtra) {
  return R"(
network net { input x [C=4, X=2, Y=1]; l = conv(x, K=1, R=1, S=1); }
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 1 x 2; access_energy = 1 pJ; transfer = systolic; )" +
         regfExtra + R"( }
  level GBUF { capacity = 1 KiB; access_energy = 10 pJ; bus_energy = 1 pJ; }
  level DRAM { access_energy = 100 pJ; }
}
schedule for net on hw { layer l {
  REGF { tensor ifm [C=1, Xi=1]; tensor wgt [C=1]; tensor ofm [Xo=1];
         stack C += 1 repl 2; update Xo += 1, Xi += 1; update C += 2; }
  GBUF { tensor ifm [C=4, Xi=2]; tensor wgt [C=4]; tensor ofm [Xo=2]; }
} }
)";
}

TEST(AnalysisTest, PsumMulticastReachesEveryCopy) {
  // Each PE visits its output tile 2 (Xo) x 2 (C) = 4 times: 8 partial sums,
  // the 2 PEs' copies reduced systolically: 4 write-backs, 4 transfers. The
  // first visit of each of the 2 outputs is read-free: 4 - 2 = 2 psum reads
  // from the GBUF. By default each reaches the one PE that starts the
  // reduction (2 REGF fills); with `psum_multicast`, both copies (4), as
  // nn_dataflow's ITCN counts the psums of every PE of the set. The GBUF's
  // reads (2 psums + 2 write-backs to DRAM) do not change; the bus carries
  // the 2 more words.
  LayerResult base = analyzeOne(psumCase("")), multi = analyzeOne(psumCase("psum_multicast = true;"));
  if (base.levels.empty() || multi.levels.empty())
    return;
  const TensorRole ofm = TensorRole::Ofm;
  expectCounts(base, multi,
               {{0, &LevelAccesses::writeBacks, ofm, 4, 4}, {0, &LevelAccesses::sameLevel, ofm, 4, 4},
                {0, &LevelAccesses::fills, ofm, 2, 4}, {1, &LevelAccesses::reads, ofm, 4, 4}});
  EXPECT_DOUBLE_EQ(multi.energyBusPj - base.energyBusPj, 2);
  EXPECT_FALSE(multi.exactCounts);   // one PE needs the psum: the simulator would count 2
  // The same-level transfers' energy is reported on its own (a read and a
  // write by default, 1 + 1 pJ per word): 4 x 2.
  EXPECT_DOUBLE_EQ(base.levels[0].neighborEnergyPj, 8);
}

// fc, C=2, K=5 (10 MACs), on 3 nodes of one PE splitting K by 2: node 2's
// tile is partial (1 real channel of 2).
std::string padCase(const std::string &gbufExtra) {
  return R"(
network net { input x [C=2]; l = fc(x, K=5); }
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; access_energy = 1 pJ; }
  level GBUF { capacity = 1 KiB; array = 1 x 3; access_energy = 10 pJ; transfer = multicast; )" +
         gbufExtra + R"( }
  level DRAM { access_energy = 100 pJ; }
  noc { hop_energy = 1 pJ; }
}
schedule for net on hw { layer l {
  REGF { tensor ifm [C=1]; tensor wgt [K=1, C=1]; tensor ofm [K=1]; update C += 1; update K += 1; }
  GBUF { tensor ifm [C=2]; tensor wgt [K=2, C=2]; tensor ofm [K=2]; stack K += 2 repl 3; }
} }
)";
}

TEST(AnalysisTest, PadPartialMovesWholeNodeTiles) {
  // By default the nodes move their real words: 10 weights and 5 outputs to
  // and from DRAM (§4). With `pad_partial` on the node level node 2's tile is
  // padded to 2 channels, as nn_dataflow's part_layer rounds K 5 / 3 up: 12
  // weights read, 6 outputs written, the REGF fills likewise (wgt 12). The
  // MACs (10) and the compute time (2 x 2 PE steps per node: 4 cycles) do not
  // change. The ifm (the nodes read the same 2 words, one multicast) is
  // unchanged: 2. NoC (1 x 3 nodes, channels at nodes 0 and 2): ifm 2 words,
  // 0 hops to node 0 and a 2-hop tree: 4; wgt and ofm, a piece per node,
  // `first` averaged over the pieces (§6): 1/3 a word, 10/3 + 5/3; 9 in all.
  // With pad_partial the nodes hold the even split of K (get_ith_range:
  // [0, 1), [1, 3), [3, 5)), placed piece by piece: only node 1's 2 outputs
  // travel a hop, 2; the weights keep their tree from every channel: 28/3.
  LayerResult base = analyzeOne(padCase("")), pad = analyzeOne(padCase("pad_partial = true;"));
  if (base.levels.empty() || pad.levels.empty())
    return;
  const TensorRole ifm = TensorRole::Ifm, wgt = TensorRole::Wgt, ofm = TensorRole::Ofm;
  expectCounts(base, pad,
               {{2, &LevelAccesses::reads, wgt, 10, 12}, {2, &LevelAccesses::writes, ofm, 5, 6},
                {2, &LevelAccesses::reads, ofm, 0, 0}, {2, &LevelAccesses::reads, ifm, 2, 2},
                {0, &LevelAccesses::fills, wgt, 10, 12}});
  EXPECT_DOUBLE_EQ(pad.work, 10);
  EXPECT_DOUBLE_EQ(base.computeCycles, 4);
  EXPECT_DOUBLE_EQ(pad.computeCycles, 4);
  EXPECT_DOUBLE_EQ(base.hops, 9);
  EXPECT_DOUBLE_EQ(pad.hops, 4 + 10.0 / 3 + 2);
  EXPECT_FALSE(pad.exactCounts);     // the padding does not exist to be moved
}

TEST(AnalysisTest, VectorUnitLayer) {
  // docs/directives.md §7 "Vector units", by hand as tests/lit/check/vector.test:
  // an add of two 4 x 4 tensors (16 ops) on VPU at GBUF (2 nodes, 4 ops a
  // cycle, 0.5 pJ an op). The result is the full template's: REGF listed,
  // empty; GBUF 112 accesses (the unit's 64, 32 fills, 16 write-backs).
  test::Compiled comp = test::compile(R"(network one {
    input a [C=4, X=4, Y=1]; input b [C=4, X=4, Y=1]; s = add(a, b);
  }
  hardware vec {
    word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
    level REGF { capacity = 64 B; array = 2 x 2; access_energy = 1 pJ; }
    level GBUF { capacity = 4 KiB; array = 2 x 1; access_energy = 10 pJ; }
    level DRAM { access_energy = 100 pJ; bandwidth = 64 B/cycle; }
    vector VPU { ops = 4; energy = 0.5 pJ; level = GBUF; }
  }
  schedule for one on vec {
    layer s on VPU {
      GBUF { tensor ifm [C=2, Xi=4, Yi=1]; tensor ofm [K=2, Xo=4, Yo=1]; stack C += 2 repl 2; }
    }
  })");
  ASSERT_EQ(comp.diagnostics(), "");
  ASSERT_EQ(comp.model.schedules.at(0).layers.at(0).unit, 0);
  ScheduleResult res = analyzeSchedule(comp.model, comp.model.schedules.at(0));
  ASSERT_TRUE(res.valid && res.complete);
  const LayerResult &lr = res.layers.at(0);
  EXPECT_EQ(lr.unit, 0);
  ASSERT_EQ(lr.levels.size(), 3u);
  for (size_t l = 0; l < 3; ++l)
    EXPECT_EQ(lr.levels[l].level, static_cast<int>(l));
  EXPECT_DOUBLE_EQ(lr.levels[0].accesses.total(), 0);
  EXPECT_DOUBLE_EQ(lr.levels[1].accesses.total(), 112);
  EXPECT_EQ(lr.levels[1].unitsInUse, 2);
  EXPECT_DOUBLE_EQ(lr.energyMacPj, 8);
  EXPECT_DOUBLE_EQ(lr.energyPj, 5928);
  EXPECT_DOUBLE_EQ(lr.computeCycles, 2);
  EXPECT_EQ(lr.bindingLevel, -1);
  // The schedule's levels, moved to the unit's template and back.
  const LayerScheduleModel &ls = comp.model.schedules.at(0).layers.at(0);
  EXPECT_EQ(shiftLevels(ls, 1).levels.at(0).level, 0);
  EXPECT_EQ(shiftLevels(shiftLevels(ls, 1), -1).levels.at(0).level, 1);
}

} // namespace
} // namespace dfl
