// Per-layer directive analysis: tiles, coverage and trip counts, units,
// occupancy, access counts, energy and latency (docs/directives.md §1-§8, §10).
#include "scheduler/analysis/LayerAnalysis.h"

#include "model/Geometry.h"
#include "scheduler/analysis/NocHops.h"

#include "model/LoopNest.h"
#include "support/Check.h"
#include "support/Format.h"
#include "support/Hash.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <unordered_map>

namespace dfl {
namespace {


bool isIndependent(Dim d) { return d != Dim::Xi && d != Dim::Yi; }


/// FreshWindowSums: the window sums' memo is off on this thread.
thread_local bool freshWindowSums = false;

/// One stack or update, reduced to what the analysis needs.
struct Move {
  bool isStack = false;
  int level = 0;
  int64_t count = 1;            // repl for stacks; trip count for updates (inferred)
  DimVector amount{};           // per (canonical) dim; 0 if not moved
  int independent = -1;         // the one independent dim it moves, or -1
  SourceRange range;
  size_t indexInLevel = 0;      // position among the level's updates (updates only)
};

class LayerAnalyzer {
public:
  LayerAnalyzer(const Network &net, const Layer &layer, int layerIndex, const Hardware &hw,
                const LayerScheduleModel *ls, std::vector<Issue> &issues)
      : net_(net), layer_(layer), hw_(hw), ls_(ls), issues_(issues), scale_(hw.wordScale(layer_.output)) {
    result_.layer = layerIndex;
    channelWise_ = layer_.channelWise();
    wgtPerSample_ = wgtPerSample(layer_.nest);
    for (TensorRole r : layer_.roles())
      roles_[nRoles_++] = r;
    // The role dims, once: the solver runs this analysis millions of times.
    for (TensorRole r : kRoles) {
      size_t ri = static_cast<size_t>(r);
      dims_[ri].clear(), dimsCanon_[ri].clear();
      if (r == TensorRole::Wgt && wgtPerSample_)
        dims_[ri].push_back(Dim::N), dimsCanon_[ri].push_back(Dim::N);
      for (Dim d : roleDims(r))
        if (!(channelWise_ && r == TensorRole::Wgt && d == Dim::K)) {
          dims_[ri].push_back(d);
          dimsCanon_[ri].push_back(canon(d));
        }
    }
  }

  LayerAnalyzer(const LayerAnalyzer &) = delete;
  ~LayerAnalyzer() { spare() = std::move(own_); }

  /// Once, on a temporary: the result is moved out, not copied.
  LayerResult run() && {
    const size_t nl = hw_.levels.size();
    result_.levels.resize(nl);
    directives_.assign(nl, nullptr);
    moves_.clear();
    for (auto &cache : realExtents_) {   // none known yet: n = 0, as assign(nl, {}) left them
      cache.resize(nl);
      for (auto &dims : cache)
        for (Extents &xs : dims)
          xs.n = 0;
    }
    if (ls_)
      for (const LevelDirectives &d : ls_->levels)
        if (d.level >= 0 && static_cast<size_t>(d.level) < nl)
          directives_[d.level] = &d;
    if (directives_[nl - 1] && !directives_[nl - 1]->empty())
      issue(directives_[nl - 1]->range, diag::err_outermost_directives, {hw_.levels[nl - 1].name});

    result_.work = static_cast<double>((layer_.macs ? layer_.macs : layer_.ops) * net_.batch);
    for (size_t l = 0; l < nl; ++l) {
      LevelResult &lr = result_.levels[l];
      lr.level = static_cast<int>(l);
      if (l + 1 == nl) {
        lr.known = true;
        lr.extent = layer_.bounds;
        deriveInputExtents(lr.extent, layer_.window);
        continue;
      }
      lr.known = directives_[l] && tilesFor(l);
      if (!lr.known && !directives_[l])
        result_.missing.push_back("layer '" + layer_.name + "' has no directives at level " + hw_.levels[l].name);
    }
    result_.complete = std::all_of(result_.levels.begin(), result_.levels.end(), [](auto &l) { return l.known; });

    for (size_t l = 0; l + 1 < nl; ++l) {
      result_.levels[l].written = directives_[l] != nullptr;
      if (result_.levels[l].known) {
        collectMoves(l);
        checkUnits(l);
        checkOccupancy(l);
        checkFixed(l);
        if (l + 2 == nl)
          findSplitRows(l);
      } else if (directives_[l]) {
        // A level written without all its tensors: the rules its stacks and
        // updates decide alone (a completion keeps them, §11).
        collectMoves(l);
        checkUnits(l);
        checkFixed(l);
        checkOccupancyBound(l);
      } else {
        checkOccupancyBound(l);   // not written: at least what a known level below covers
      }
    }
    // A known level is checked against the nearest known level outside it (the
    // outermost always is): what no completion of the levels between can fix
    // is reported at the directive, as in a complete schedule. A written level
    // without its tiles: its chains of stacks and updates.
    for (size_t l = 0; l + 1 < nl; ++l)
      if (result_.levels[l].known || directives_[l]) {
        size_t o = l + 1;
        while (!result_.levels[o].known)
          ++o;
        checkCoverage(l, o);
        if (result_.levels[l].known)
          recordTrips(l);
      }

    result_.valid = issueCount_ == 0;
    if (result_.complete && result_.valid) {
      result_.exactCounts = true;
      countAccesses();
    }
    return std::move(result_);
  }

private:
  // ---- dimensions --------------------------------------------------------------

  Dim canon(Dim d) const { return canonicalDim(d, channelWise_); }

  /// The dims of role r in this layer: a channel-wise layer's wgt has C but no
  /// separate K (K is C), so a depthwise filter has C*R*S words, not C*C*R*S.
  const std::vector<Dim> &dimsOf(TensorRole r) const { return dims_[static_cast<size_t>(r)]; }

  const std::vector<Dim> &roleDimsCanon(TensorRole r) const { return dimsCanon_[static_cast<size_t>(r)]; }

  /// layer_.roles(), kept: it returns a new vector.
  std::span<const TensorRole> roles() const { return {roles_.data(), nRoles_}; }

  void issue(SourceRange range, diag::ID id, std::vector<std::string> args, std::vector<Issue::Note> notes = {}) {
    issues_.push_back({id, range, std::move(args), std::move(notes)});
    ++issueCount_;
  }

  // ---- §1 tiles and extents ------------------------------------------------------
  bool tilesFor(size_t l) {
    const LevelDirectives &d = *directives_[l];
    LevelResult &lr = result_.levels[l];
    const std::string &level = hw_.levels[l].name;
    bool ok = true;
    std::array<const TensorDirective *, kNumRoles> given{};
    for (const TensorDirective &t : d.tensors)
      given[static_cast<size_t>(t.role)] = &t;
    for (TensorRole r : roles())
      if (!given[static_cast<size_t>(r)]) {
        result_.missing.push_back("level " + level + " of layer '" + layer_.name + "' has no tensor " + roleName(r));
        ok = false;
      }
    if (!ok)
      return false;

    // Extents of the independent dims, with the role that gave them first.
    DimVector extent{};
    std::array<const char *, kNumDims> from{};
    for (TensorRole r : roles()) {
      const TensorDirective &t = *given[static_cast<size_t>(r)];
      TileResult &tile = lr.tiles[static_cast<size_t>(r)];
      tile.present = true;
      tile.shr = t.shr;
      tile.words = 1;
      for (Dim raw : dimsOf(r)) {
        // A dim the directive does not list has size 1; for channel-wise layers K is C.
        int64_t size = at(t.sizes, raw);
        if (size == 0 && layer_.channelWise() && (raw == Dim::K || raw == Dim::C))
          size = at(t.sizes, raw == Dim::K ? Dim::C : Dim::K);
        if (r == TensorRole::Wgt && raw == Dim::N)
          size = at(extent, Dim::N);   // a per-sample wgt: the samples the ifm tile holds
        if (size == 0)
          size = 1;
        tile.words *= size;
        Dim d = canon(raw);
        if (!isIndependent(d))
          continue;
        if (at(extent, d) == 0) {
          at(extent, d) = size;
          from[static_cast<size_t>(d)] = roleName(r);
        } else if (at(extent, d) != size) {
          issue(t.range, diag::err_extent_disagree,
                {level, layer_.name, from[static_cast<size_t>(d)], dimName(d), std::to_string(at(extent, d)),
                 roleName(r), std::to_string(size)});
          ok = false;
        }
      }
    }
    if (layer_.channelWise())
      at(extent, Dim::K) = at(extent, Dim::C);
    for (Dim d : kIndependentDims)
      if (at(extent, d) == 0)
        at(extent, d) = 1;
    // Layers without weights have no tensor giving R, S: the ifm window implies them (§1).
    if (!layer_.hasWeights())
      if (const TensorDirective *ifm = given[static_cast<size_t>(TensorRole::Ifm)])
        for (auto [in, out, win] : {std::tuple{Dim::Xi, Dim::Xo, Dim::R}, std::tuple{Dim::Yi, Dim::Yo, Dim::S}}) {
          int64_t size = at(ifm->sizes, in) ? at(ifm->sizes, in) : 1;
          const WindowAxis &a = layer_.window.along(in);
          int64_t w = windowTaps(size, at(extent, out), a.stride, a.dilation);
          at(extent, win) = w >= 1 && w <= at(layer_.bounds, win) ? w : 1;
        }
    deriveInputExtents(extent, layer_.window);
    // The ifm tile must be its window (§1, E0808).
    if (const TensorDirective *ifm = given[static_cast<size_t>(TensorRole::Ifm)])
      for (auto [in, out, win] : {std::tuple{Dim::Xi, Dim::Xo, Dim::R}, std::tuple{Dim::Yi, Dim::Yo, Dim::S}}) {
        int64_t size = at(ifm->sizes, in) ? at(ifm->sizes, in) : 1;
        if (size != at(extent, in)) {
          issue(ifm->range, diag::err_window_mismatch,
                {level, layer_.name, dimName(in), std::to_string(size), std::to_string(at(extent, out)),
                 std::to_string(layer_.window.along(in).stride), std::to_string(at(extent, win)),
                 std::to_string(layer_.window.along(in).dilation),
                 std::to_string(at(extent, in))});
          ok = false;
        }
      }
    lr.extent = extent;
    return ok;
  }

  // ---- §2/§3 moves ------------------------------------------------------------------
  void collectMoves(size_t l) {
    const LevelDirectives &d = *directives_[l];
    auto add = [&](const std::vector<std::pair<Dim, int64_t>> &amounts, bool isStack, int64_t count,
                   SourceRange range, size_t index) {
      Move m;
      m.isStack = isStack;
      m.level = static_cast<int>(l);
      m.count = count;
      m.range = range;
      m.indexInLevel = index;
      for (auto [dim, amt] : amounts)
        at(m.amount, canon(dim)) = amt;
      const char *what = isStack ? "stack" : "update";
      std::array<Dim, std::size(kIndependentDims)> moved{};
      size_t nMoved = 0;
      for (Dim dim : kIndependentDims)
        if (at(m.amount, dim) && !(layer_.channelWise() && dim == Dim::K))
          moved[nMoved++] = dim;
      if (nMoved > 1) {
        issue(range, diag::err_move_diagonal, {what, dimName(moved[0]), dimName(moved[1])});
      } else if (nMoved == 0 && !amounts.empty()) {
        issue(range, diag::err_move_nothing, {what});
      } else if (nMoved) {
        m.independent = static_cast<int>(moved[0]);
        checkWindowMove(m, what);
      }
      moves_.push_back(m);
    };
    for (const StackDirective &s : d.stacks)
      add(s.shifts, true, s.repl, s.range, 0);
    for (size_t i = 0; i < d.updates.size(); ++i)
      add(d.updates[i].steps, false, 1, d.updates[i].range, i);
  }

  void checkWindowMove(const Move &m, const char *what) {
    for (auto [in, out, win] : {std::tuple{Dim::Xi, Dim::Xo, Dim::R}, std::tuple{Dim::Yi, Dim::Yo, Dim::S}}) {
      const WindowAxis &a = layer_.window.along(in);
      int64_t expect = at(m.amount, out) * a.stride + at(m.amount, win) * a.dilation;
      if (at(m.amount, in) == expect)
        continue;
      std::string hint = expect ? std::string("; write ") + dimName(in) + " += " + std::to_string(expect)
                                : std::string("; the input window only moves with ") + dimName(out) + " or " +
                                      dimName(win);
      issue(m.range, diag::err_move_window,
            {what, dimName(in), std::to_string(at(m.amount, in)), std::to_string(expect),
             std::to_string(a.stride), std::to_string(a.dilation), hint});
    }
  }

  // ---- §2 units -----------------------------------------------------------------------
  void checkUnits(size_t l) {
    const LevelDirectives &d = *directives_[l];
    const Level &lv = hw_.levels[l];
    LevelResult &lr = result_.levels[l];
    std::vector<int64_t> &repls = own_->repls;
    repls.clear();
    for (const StackDirective &s : d.stacks)
      repls.push_back(s.repl);
    // The product in double for the message: repl factors each fit 64 bits,
    // their product need not (a hostile input's three stacks of 2^31 - 1).
    double product = 1;
    for (int64_t r : repls)
      product *= static_cast<double>(r);
    lr.units = 1;
    for (int64_t r : repls)
      if (__builtin_mul_overflow(lr.units, r, &lr.units)) {
        lr.units = lv.units() + 1;   // over the array either way; the issue below stops the layer
        break;
      }
    auto list = [&] {   // for the messages only
      std::string text;
      for (size_t i = 0; i < repls.size(); ++i)
        text += (i ? " x " : "") + std::to_string(repls[i]);
      return text;
    };
    if (lr.units > lv.units()) {
      issue(d.stacks.empty() ? d.range : d.stacks.back().range, diag::err_array_overuse,
            {lv.name, layer_.name, product < 0x1p62 ? std::to_string(lr.units) : formatNumber(product),
             std::to_string(lv.units()), "repl " + list()},
            {{lv.arrayRange.valid() ? lv.arrayRange : lv.nameRange, diag::note_array_here,
              {lv.name, std::to_string(lv.rows) + " x " + std::to_string(lv.cols)}}});
      return;
    }
    // Some split into row and column groups must fit (§2, E0803).
    // More stacks than we enumerate: trust the count check.
    if (repls.size() <= 16 && !stackRowMask(repls, lv.rows, lv.cols))
      issue(d.stacks.back().range, diag::err_array_shape,
            {lv.name, layer_.name, "repl " + list(), std::to_string(lv.rows), std::to_string(lv.cols)},
            {{lv.arrayRange.valid() ? lv.arrayRange : lv.nameRange, diag::note_array_here,
              {lv.name, std::to_string(lv.rows) + " x " + std::to_string(lv.cols)}}});
  }

  // ---- §5 occupancy ---------------------------------------------------------------------
  void checkOccupancy(size_t l) {
    const Level &lv = hw_.levels[l];
    LevelResult &lr = result_.levels[l];
    std::array<int64_t, kNumRoles> words{};
    for (TensorRole r : roles()) {
      const TileResult &t = lr.tiles[static_cast<size_t>(r)];
      words[static_cast<size_t>(r)] = (t.words + t.shr - 1) / t.shr;
      if (t.shr > 1 && !lv.can(Transfer::Sharing) && !lv.can(Transfer::Systolic)) {
        std::string allowed;
        for (Transfer tr : {Transfer::Unicast, Transfer::Multicast, Transfer::Systolic, Transfer::Sharing})
          if (lv.can(tr))
            allowed += (allowed.empty() ? "" : ", ") + std::string(transferName(tr));
        const TensorDirective *td = tensorDirective(l, r);
        issue(td ? td->range : directives_[l]->range, diag::err_transfer_unsupported,
              {std::string("sharing tensor ") + roleName(r) + " (shr " + std::to_string(t.shr) + ")", lv.name,
               allowed});
      }
    }
    lr.bufferBytes = hw_.bufferBytes(l, words, layer_.output);
    lr.occupancyBytes = 0;
    for (int64_t b : lr.bufferBytes)
      lr.occupancyBytes += b;
    // Per buffer, what it holds must fit (§5): a role bypassing the level takes no room.
    for (size_t b = 0; b < lv.buffers.size(); ++b) {
      const Buffer &buf = lv.buffers[b];
      if (!buf.capacityBytes || lr.bufferBytes[b] <= *buf.capacityBytes)
        continue;
      std::string parts;   // only for the diagnostic: the solver asks millions of fitting tiles
      for (TensorRole r : roles())
        if (buf.holds(r))
          parts += std::string(parts.empty() ? "" : ", ") + roleName(r) + " " +
                   formatBytes(static_cast<double>(hw_.bytesOf(words[static_cast<size_t>(r)],
                                                               hw_.heldBits(r, layer_.output))));
      overflow(l, b, directives_[l]->range, formatBytes(static_cast<double>(lr.bufferBytes[b])), parts);
    }
  }

  /// E0801 at `at`: buffer b of level l needs `need` (`parts`, by role).
  void overflow(size_t l, size_t b, SourceRange at, const std::string &need, const std::string &parts) {
    const Level &lv = hw_.levels[l];
    const Buffer &buf = lv.buffers[b];
    const std::string where = buf.implicit ? lv.name : lv.name + " buffer " + buf.name;
    const std::string cap = formatBytes(static_cast<double>(*buf.capacityBytes));
    issue(at, diag::err_buffer_overflow, {where, layer_.name, need, cap, parts},
          {{buf.capacityRange, diag::note_capacity_here, {where, cap}}});
  }

  /// §11: a level written without all its tensors, or not written above a
  /// known one, holds under every completion at least its smallest
  /// completion's tiles: along each dim the
  /// most of what its written tensors (and the hardware's fixed ones) give,
  /// its first stack's or update's step (the tile, else that factor leaves a
  /// gap or counts twice, E0804/E0805), and what the nearest known level
  /// below covers (its stacked tile over-covers by less than a tile); every
  /// other dim at 1. Above the capacity: E0801, "at least", at the written
  /// block (or the known one below), with each tensor's words.
  void checkOccupancyBound(size_t l) {
    const Level &lv = hw_.levels[l];
    if (std::none_of(lv.buffers.begin(), lv.buffers.end(), [](const Buffer &b) { return b.capacityBytes.has_value(); }))
      return;
    const std::span<const TensorRole> roles = this->roles();
    DimVector low{};
    auto atLeast = [&](Dim d, int64_t v) { at(low, d) = std::max(at(low, d), v); };
    size_t below = l;   // the nearest known level below (l: none)
    for (size_t k = l; k-- > 0 && below == l;)
      if (result_.levels[k].known)
        below = k;
    if (!directives_[l] && below == l)
      return;   // nothing written at or below it: the smallest completion fits
    for (const LevelDirectives *block : {directives_[l], &lv.fixed}) {
      if (!block)
        continue;
      for (const TensorDirective &t : block->tensors)
        if (std::find(roles.begin(), roles.end(), t.role) != roles.end())
          for (Dim raw : dimsOf(t.role))
            if (at(t.sizes, raw))
              atLeast(canon(raw), at(t.sizes, raw));
    }
    for (Dim d : kIndependentDims) {
      bool first = true;
      int64_t repl = 1;   // the stacks along d at level `below`
      for (const Move &m : moves_) {
        if (m.independent != static_cast<int>(d))
          continue;
        if (m.level == static_cast<int>(l) && first)
          atLeast(d, at(m.amount, d)), first = false;
        if (m.isStack && m.level == static_cast<int>(below))
          repl = std::min(repl * m.count, at(layer_.bounds, d));   // beyond the dim: E0802/E0804 say so
      }
      if (below < l) {
        const int64_t tile = at(result_.levels[below].extent, d);
        atLeast(d, std::max(tile, tile * (repl - 1) + 1));
      }
      atLeast(d, 1);
    }
    if (channelWise_)
      at(low, Dim::K) = at(low, Dim::C);
    DimVector window = low;
    deriveInputExtents(window, layer_.window);
    for (Dim in : {Dim::Xi, Dim::Yi})
      atLeast(in, at(window, in));
    // No valid tile exceeds the layer (E0806): capped there, the words stay
    // below the tensors' (at most 2^53, E0308).
    DimVector whole = layer_.bounds;
    deriveInputExtents(whole, layer_.window);
    for (size_t i = 0; i < kNumDims; ++i)
      low[i] = std::min(low[i], std::max<int64_t>(whole[i], 1));
    std::array<int64_t, kNumRoles> words{};
    std::array<std::string, kNumRoles> parts;
    for (TensorRole r : roles) {
      int64_t all = 1;
      for (Dim raw : dimsOf(r))
        all *= at(low, canon(raw));
      // Not written, on a level that may share: a completion's `shr` may
      // leave one word per buffer (nothing bounds it), so one is counted.
      const TensorDirective *t = tensorDirective(l, r);
      const bool shared = !t && (lv.can(Transfer::Sharing) || lv.can(Transfer::Systolic));
      const int64_t shr = t ? t->shr : shared ? all : 1;
      const int64_t held = (all + shr - 1) / shr;
      words[static_cast<size_t>(r)] = held;
      parts[static_cast<size_t>(r)] = std::string(roleName(r)) + " " + std::to_string(held) +
                                      (held == 1 ? " word" : " words") + (shared ? " (shared)" : "") + " " +
                                      formatBytes(static_cast<double>(hw_.bytesOf(held, hw_.heldBits(r, layer_.output))));
    }
    const BufferBytes bytes = hw_.bufferBytes(l, words, layer_.output);
    for (size_t b = 0; b < lv.buffers.size(); ++b) {
      const Buffer &buf = lv.buffers[b];
      if (!buf.capacityBytes || bytes[b] <= *buf.capacityBytes)
        continue;
      std::string held;
      for (TensorRole r : roles)
        if (buf.holds(r))
          held += (held.empty() ? "" : ", ") + parts[static_cast<size_t>(r)];
      // At the written block; a level not written, at the known one below
      // whose stacked tile it must hold.
      overflow(l, b, directives_[l] ? directives_[l]->range : directives_[below]->range,
               "at least " + formatBytes(static_cast<double>(bytes[b])),
               "every completion: " + held + ", the dims no directive fixes at their least");
    }
  }

  const TensorDirective *tensorDirective(size_t l, TensorRole r) const {
    if (!directives_[l])
      return nullptr;
    for (const TensorDirective &t : directives_[l]->tensors)
      if (t.role == r)
        return &t;
    return nullptr;
  }

  // ---- §10 fixed dataflow -------------------------------------------------------------------
  void checkFixed(size_t l) {
    const Level &lv = hw_.levels[l];
    const LevelDirectives &fixed = lv.fixed;
    if (fixed.empty())
      return;
    for (const TensorDirective &ft : fixed.tensors) {
      const TensorDirective *t = tensorDirective(l, ft.role);
      if (!t)
        continue;   // a role this layer does not have
      for (size_t i = 0; i < kNumDims; ++i) {
        if (!ft.sizes[i])
          continue;
        int64_t have = t->sizes[i] ? t->sizes[i] : 1;
        if (have != ft.sizes[i])
          issue(t->range, diag::err_fixed_dataflow,
                {lv.name, hw_.name,
                 std::string("tensor ") + roleName(ft.role) + " " + dimName(static_cast<Dim>(i)) + "=" +
                     std::to_string(ft.sizes[i]),
                 layer_.name, std::string(dimName(static_cast<Dim>(i))) + "=" + std::to_string(have)},
                {{ft.range, diag::note_fixed_here, {}}});
      }
    }
    const LevelDirectives &d = *directives_[l];
    if (!result_.levels[l].known && d.stacks.empty())
      return;   // written without stacks (§11): the completion takes the hardware's
    for (size_t i = 0; i < fixed.stacks.size(); ++i) {
      const StackDirective &fs = fixed.stacks[i];
      bool same = i < d.stacks.size() && d.stacks[i].repl == fs.repl && d.stacks[i].shifts == fs.shifts;
      if (!same)
        issue(i < d.stacks.size() ? d.stacks[i].range : d.range, diag::err_fixed_dataflow,
              {lv.name, hw_.name, "stack #" + std::to_string(i + 1) + " (repl " + std::to_string(fs.repl) + ")",
               layer_.name,
               i < d.stacks.size() ? "a different stack (repl " + std::to_string(d.stacks[i].repl) + ")"
                                   : std::string("no such stack")},
              {{fs.range, diag::note_fixed_here, {}}});
    }
  }

  // ---- §7 normalizations: whole or split rows ----------------------------------------------
  /// A softmax's or norm's rows whole in the tiles of the outermost on-chip
  /// level take one statistics pass there; split, the statistics passes
  /// stream the input from DRAM again (docs/directives.md §7, "Rows and the
  /// passes"). A segment forwarding the layer's input refuses a split (E0826,
  /// ScheduleAnalysis).
  void findSplitRows(size_t l) {
    if (!layer_.normalizes() || layer_.output != TensorRole::Ofm)
      return;
    result_.rowsSplit = splitRowDim(layer_, result_.levels[l].extent).has_value();
    result_.statisticsPasses = result_.rowsSplit && layer_.type == LayerType::Softmax ? 2 : 1;
  }

  // ---- §4 coverage and trip counts ------------------------------------------------------------
  /// Level l's tiles, stacks and updates against the extents of level o, the
  /// nearest known level outside it. When o is not l + 1 the enclosing extent
  /// is the completion's to pick, at most o's: only what no pick can fix is an
  /// issue, and the outermost update's trip count stays unknown (0).
  /// Level l's trip counts, in update order (0: not known yet).
  void recordTrips(size_t l) {
    std::vector<int64_t> &trips = result_.levels[l].trips;
    trips.assign(directives_[l]->updates.size(), 1);
    for (const Move &m : moves_)
      if (!m.isStack && m.level == static_cast<int>(l))
        trips[m.indexInLevel] = m.count;
  }

  void checkCoverage(size_t l, size_t o) {
    const LevelResult &in = result_.levels[l], &out = result_.levels[o];
    const std::string &level = hw_.levels[l].name;
    // Without its tiles (§11) the level's tile along d is the completion's:
    // only the first factor's step leaves no gap and no double count, so
    // the chain is checked from there.
    const bool tileFree = !in.known;
    const bool exact = o == l + 1 && !tileFree;
    std::vector<Move *> &factors = own_->factors;
    factors.clear();
    for (Dim d : kIndependentDims) {
      if (layer_.channelWise() && d == Dim::K)
        continue;
      int64_t tile = at(in.extent, d), enclosing = at(out.extent, d);
      if (tileFree) {
        const Move *first = nullptr;
        for (const Move &m : moves_)
          if (m.level == static_cast<int>(l) && m.independent == static_cast<int>(d) &&
              (!first || at(m.amount, d) < at(first->amount, d)))
            first = &m;
        if (!first)
          continue;
        tile = at(first->amount, d);
      } else if (tile > enclosing) {
        issue(directives_[l]->range, diag::err_extent_exceeds,
              {dimName(d), std::to_string(tile), level, layer_.name, std::to_string(enclosing),
               hw_.levels[o].name});
        continue;
      }
      factors.clear();
      for (Move &m : moves_)
        if (m.level == static_cast<int>(l) && m.independent == static_cast<int>(d))
          factors.push_back(&m);
      // By amount, stably: an insertion sort of a handful (std::stable_sort
      // allocates a buffer, and this runs for every candidate the solver scores).
      for (size_t k = 1; k < factors.size(); ++k)
        for (size_t j = k; j > 0 && at(factors[j]->amount, d) < at(factors[j - 1]->amount, d); --j)
          std::swap(factors[j], factors[j - 1]);
      int64_t covered = tile;
      bool ok = true;
      for (size_t k = 0; k < factors.size() && ok; ++k) {
        Move &m = *factors[k];
        int64_t amount = at(m.amount, d);
        const char *what = m.isStack ? "stack" : "update";
        if (amount < covered) {
          issue(m.range, diag::err_coverage_double,
                {dimName(d), level, layer_.name,
                 std::string("this ") + what + " moves " + dimName(d) + " by " + std::to_string(amount) +
                     ", but the tiles inside it already cover " + std::to_string(covered)});
          ok = false;
        } else if (amount > covered) {
          issue(m.range, diag::err_coverage_gap,
                {dimName(d), level, layer_.name, dimName(d), std::to_string(enclosing),
                 std::string("this ") + what + " moves " + dimName(d) + " by " + std::to_string(amount) +
                     ", leaving a gap after the " + std::to_string(covered) + " covered inside it"});
          ok = false;
        } else if (m.isStack) {
          covered *= m.count;
        } else {
          // The outermost factor may end in a partial last tile (trip count
          // ceil); inner ones must tile the next factor's step exactly.
          bool last = k + 1 == factors.size();
          int64_t next = last ? enclosing : at(factors[k + 1]->amount, d);
          if (last && !exact) {
            m.count = 0;   // steps over the extent the completion picks
            break;
          } else if (last && next > covered) {
            m.count = (next + covered - 1) / covered;
            covered *= m.count;
          } else if (next % covered != 0 || next < covered) {
            issue(m.range, diag::err_coverage_gap,
                  {dimName(d), level, layer_.name, dimName(d), std::to_string(enclosing),
                   std::string("steps of ") + std::to_string(amount) + " do not divide " + std::to_string(next)});
            ok = false;
          } else {
            m.count = next / covered;
            covered = next;
          }
        }
      }
      // Over-coverage by less than the outermost factor's step: its last
      // tile (or stacked unit) starts inside the extent and is partial (§4).
      bool partial = !factors.empty() && covered > enclosing && covered - enclosing < at(factors.back()->amount, d);
      if (!exact) {
        // A completion can enclose what this level covers (an outermost
        // update reaches any extent), unless it covers more than o's extent.
        bool steps = !factors.empty() && !factors.back()->isStack;
        if (ok && !steps && covered > enclosing && !partial)
          issue(factors.empty() ? directives_[l]->range : factors.back()->range, diag::err_coverage_gap,
                {dimName(d), level, layer_.name, dimName(d), std::to_string(enclosing),
                 std::string("the tile and its stacks cover ") + std::to_string(covered)});
        continue;
      }
      uneven_ = uneven_ || (ok && partial);
      if (ok && covered != enclosing && !partial) {
        std::string why = factors.empty()
                              ? std::string("the tile has ") + dimName(d) + "=" + std::to_string(tile) +
                                    " and no stack or update moves " + dimName(d)
                              : std::string("the tile and its stacks cover ") + std::to_string(covered);
        issue(factors.empty() ? directives_[l]->range : factors.back()->range, diag::err_coverage_gap,
              {dimName(d), level, layer_.name, dimName(d), std::to_string(enclosing), why});
      }
    }
  }

  // ---- §6-§8 accesses, energy, latency ------------------------------------------------------
  bool moves(const Move &m, TensorRole r) const {
    for (Dim d : roleDimsCanon(r))
      if (at(m.amount, d))
        return true;
    return false;
  }

  /// Distinct words across the stacked tiles of role r at level l (union per
  /// dim); with `slab`, of the stacked slabs of width step along the dims a
  /// sliding update moves (what the units fetch on a sliding step).
  int64_t distinctWords(size_t l, TensorRole r, const Move *slab = nullptr) const {
    const LevelResult &lr = result_.levels[l];
    int64_t total = 1;
    for (Dim raw : dimsOf(r)) {
      Dim d = canon(raw);
      int64_t size = at(lr.extent, d);
      // window_span (§12): an input window's words come as one span, the
      // holes a stride leaves between windows included.
      const bool span = hw_.levels[l].windowSpan && isInputWindow(raw);
      if (slab && at(slab->amount, d))
        size = span ? at(slab->amount, d) : std::min(size, at(slab->amount, d));
      // One stack along d (the solver's plans): the union in closed form.
      const Move *only = nullptr;
      int stacks = 0;
      for (const Move &m : moves_)
        if (m.level == static_cast<int>(l) && m.isStack && at(m.amount, d) != 0)
          only = &m, ++stacks;
      if (stacks == 0) {
        total *= size;
        continue;
      }
      if (stacks == 1 && at(only->amount, d) > 0 && only->count >= 1) {
        int64_t step = at(only->amount, d);
        total *= step >= size && !span ? only->count * size : (only->count - 1) * step + size;
        continue;
      }
      std::vector<int64_t> offsets{0};   // sorted, distinct
      for (const Move &m : moves_) {
        if (m.level != static_cast<int>(l) || !m.isStack || at(m.amount, d) == 0)
          continue;
        std::vector<int64_t> next;
        for (int64_t o : offsets)
          for (int64_t i = 0; i < m.count; ++i)
            next.push_back(o + i * at(m.amount, d));
        std::sort(next.begin(), next.end());
        next.erase(std::unique(next.begin(), next.end()), next.end());
        offsets = std::move(next);
      }
      // Length of the union of [o, o + size) (the span with window_span).
      int64_t len = 0, end = INT64_MIN;
      for (int64_t o : offsets) {
        int64_t b = std::max(o, end);
        if (o + size > b)
          len += o + size - b;
        end = std::max(end, o + size);
      }
      total *= span ? offsets.back() + size - offsets.front() : len;
    }
    return total;
  }

  // ---- §4 partial tiles: real extents, words moved, padded work ----------------------------
  /// The real extents of level l's tile positions along independent dim d over
  /// the whole layer, as (extent, positions): each enclosing tile's real part x
  /// holds floor(x/E) full tiles, one of x mod E, and idle ones (extent 0).
  /// A level adds at most one new extent per entry and E and 0, so a few
  /// entries, kept inline (the solver runs this analysis millions of times).
  static constexpr size_t kMaxLevels = 8;
  struct Extents {
    std::array<std::pair<int64_t, int64_t>, 2 * kMaxLevels + 2> v{};
    size_t n = 0;
    const std::pair<int64_t, int64_t> *begin() const { return v.data(); }
    const std::pair<int64_t, int64_t> *end() const { return v.data() + n; }
    void put(int64_t x, int64_t k) {
      for (size_t i = 0; i < n; ++i)
        if (v[i].first == x)
          return void(v[i].second += k);
      if (k > 0) {
        // Each level adds its tile and 0 and one remainder per entry: 2 per level.
        DFLC_CHECK(n < v.size());   // at most kMaxLevels levels of partial tiles
        v[n++] = {x, k};
      }
    }
  };

  /// Memoized per analysis (realExtents_): every role and the latency ask.
  /// With `padded`, a partial tile of a level with `pad_partial` counts whole
  /// (nn_dataflow's rounded-up partitions: the words it moves); without, the
  /// real work (the MACs, so the padded steps of §8).
  const Extents &realExtents(size_t l, Dim d, bool padded = true) const {
    const size_t nl = result_.levels.size();
    Extents &xs = realExtents_[padded ? 1 : 0][l][static_cast<size_t>(d)];
    if (xs.n)
      return xs;
    xs.put(at(result_.levels[nl - 1].extent, d), 1);
    for (size_t m = nl - 1; m-- > l;) {
      int64_t e = std::max<int64_t>(1, at(result_.levels[m].extent, d)), count = 1;
      for (const Move &mv : moves_)
        if (mv.level == static_cast<int>(m) && mv.independent == static_cast<int>(d))
          count *= mv.count;
      const bool pad = padded && hw_.levels[m].padPartial;
      Extents next;
      for (auto [x, k] : xs) {
        int64_t full = x / e, rem = x % e;
        next.put(e, k * full);
        if (rem)
          next.put(pad ? e : rem, k);
        next.put(0, k * std::max<int64_t>(0, count - full - (rem ? 1 : 0)));
      }
      xs = next;
    }
    return xs;
  }

  /// Real over nominal extent of level l's tiles along d: 1 when evenly tiled.
  double realShare(size_t l, Dim d, bool padded = true) const {
    double real = 0, positions = 0;
    for (auto [x, k] : realExtents(l, d, padded))
      real += static_cast<double>(x * k), positions += static_cast<double>(k);
    return real / (positions * static_cast<double>(std::max<int64_t>(1, at(result_.levels[l].extent, d))));
  }

  /// The part of role r's nominal level-l traffic that moves real words (§4,
  /// partial tiles): the product over its dims of the real share of its tiles;
  /// along an input window, of the windows of the real output and filter extents.
  double realFraction(size_t l, TensorRole r) const {
    if (!uneven_)
      return 1;
    const LevelResult &lr = result_.levels[l];
    double f = 1;
    for (Dim d : roleDimsCanon(r)) {
      if (d != Dim::Xi && d != Dim::Yi) {
        f *= realShare(l, d);
        continue;
      }
      auto [out, win] = d == Dim::Xi ? std::pair{Dim::Xo, Dim::R} : std::pair{Dim::Yo, Dim::S};
      double words = 0, positions = 0;
      for (auto [xo, ko] : realExtents(l, out))
        for (auto [xw, kw] : realExtents(l, win)) {
          positions += static_cast<double>(ko * kw);
          if (xo && xw)
            words += static_cast<double>(windowSpan(xo, xw, layer_.window.along(d)) * ko * kw);
        }
      f *= words / (positions * static_cast<double>(std::max<int64_t>(1, at(lr.extent, d))));
    }
    return f;
  }

  /// Padded over real words of role r at the nodes (the level below the
  /// outermost): above 1 only where that level's partial tiles are padded
  /// (`pad_partial`, §4). Along an input window, its output dim stands in.
  double paddedGrowth(TensorRole r) const {
    if (!uneven_ || hw_.levels.size() < 2 || !hw_.levels[hw_.levels.size() - 2].padPartial)
      return 1;
    const size_t node = hw_.levels.size() - 2;
    double g = 1;
    for (Dim d : roleDimsCanon(r)) {
      Dim e = d == Dim::Xi ? Dim::Xo : d == Dim::Yi ? Dim::Yo : d;
      g *= realSum(node, e, true) / realSum(node, e, false);
    }
    return g;
  }

  /// Nominal over real work: the PE steps the padded tiles take per real MAC (§8).
  double paddedWork() const {
    if (!uneven_)
      return 1;
    double pad = 1;
    for (Dim d : kIndependentDims)
      if (!(channelWise_ && d == Dim::K))
        pad /= realShare(0, d, false);
    return pad;
  }

  /// The read-free first visits of output words at boundary l/l+1 (§6): one per
  /// distinct partial sum, i.e. per word each level-(l+1) unit visits over the
  /// layer. Per dim, a unit visits its tile times the trips of the updates at
  /// levels > l that move the dim (exact coverage: each step is new ground);
  /// a data gradient's Xi, Yi are the window of the Xo, R (Yo, S) it visits.
  double firstVisits(size_t l, const std::vector<const Move *> &nest, double outputWords) {
    // Partial sums accumulate at the level holding the output (§6 "Bypass"):
    // one read-free visit per word each of its units visits.
    const size_t h = hw_.holderAbove(l, layer_.output);
    const bool top = h + 1 == hw_.levels.size();
    if (top && layer_.output == TensorRole::Ifm && !windowsTooMany(l))
      // A data gradient's windows at DRAM: the data they cover, which stride
      // may leave holes in (a 1x1 stride-2 dX never visits odd rows).
      return static_cast<double>(at(layer_.bounds, Dim::N) * at(layer_.bounds, Dim::C)) *
             parentWindowUnion(l, Dim::Xi, true) * parentWindowUnion(l, Dim::Yi, true);
    if (top)
      return outputWords * paddedGrowth(layer_.output);
    const LevelResult &outer = result_.levels[h];
    DimVector visited = outer.extent;
    for (const Move *m : nest)
      if (m->level >= static_cast<int>(h) && m->independent >= 0)
        visited[static_cast<size_t>(m->independent)] *= m->count;
    deriveInputExtents(visited, layer_.window);
    double words = static_cast<double>(outer.unitsInUse);
    if (h != l + 1 && layer_.output == TensorRole::Ifm)
      result_.exactCounts = false;   // a data gradient's window unions are per level-(l+1) unit
    if (layer_.output == TensorRole::Ifm && !windowsTooMany(l)) {
      // A data gradient: the union of the windows, which stride or dilation
      // may leave holes between (the unit's real part along N and C, §4).
      for (Dim d : {Dim::N, Dim::C})
        words *= static_cast<double>(at(visited, d)) * (uneven_ ? realShare(h, d) : 1.0);
      return words * parentWindowUnion(l, Dim::Xi) * parentWindowUnion(l, Dim::Yi);
    }
    for (Dim d : roleDimsCanon(layer_.output))
      words *= static_cast<double>(at(visited, d));
    return words * realFraction(h, layer_.output);   // partial tiles visit their real part (§4)
  }

  // ---- input windows, word for word (§4 partial tiles, §6 padding) --------------------------
  /// Level l's tile positions along independent dim d over the whole layer:
  /// every combination of the coordinates of the moves along d at levels >= l,
  /// with its real part [lo, hi) in layer coordinates (empty: idle). The
  /// level's own stacks are the fastest coordinates, so the positions that
  /// differ only in them (the stacked units of one parent at one step) are
  /// consecutive blocks of `block`; `prev` is the position one step of
  /// `slide` back (-1: none, or slide's first step).
  struct Axis {
    std::vector<int64_t> lo, hi, prev;
    std::vector<int64_t> parent;   // the position's level-(l+1) unit: its stack coordinates along d
    int64_t block = 1, parents = 1;
  };
  /// Positions enumerated at most (per dim, or pairs of a window's two):
  /// beyond, the counts keep the nominal approximation and are not claimed
  /// exact (a dimension of 2^31 would make the enumeration hang).
  static constexpr int64_t kMaxPositions = 1 << 14;
  /// Positions along one dim mayResumeHeld looks at, at most (it runs on every
  /// role and level of every analysis with idle positions; beyond, it assumes).
  static constexpr int64_t kMaxIdleCheck = 256;

  /// The number of level-l positions along d (axis(l, d).lo.size()),
  /// saturated at kMaxPositions + 1.
  int64_t positionCount(size_t l, Dim d) const {
    int64_t n = 1;
    for (const Move &m : moves_)
      if (m.level >= static_cast<int>(l) && m.independent == static_cast<int>(d))
        n = std::min(kMaxPositions + 1, n * m.count);
    return n;
  }

  /// Storage axis(), windowSums() and mayResumeHeld() reuse from one analysis
  /// to the next (the solver runs millions): no allocation once warm.
  struct Scratch {
    std::array<Axis, 2> axes;
    std::vector<const Move *> moves;
    std::vector<int64_t> coords;
    std::vector<std::pair<int64_t, int64_t>> spans;
  };
  static Scratch &scratch() {
    thread_local Scratch s;
    return s;
  }

  /// Fills `a` (reusing its storage: the solver runs this millions of times).
  void axis(size_t l, Dim d, const Move *slide, Axis &a) const {
    const size_t nl = result_.levels.size();
    std::vector<const Move *> &mv = scratch().moves;   // outer levels first, level l's stacks last
    mv.clear();
    for (size_t m = nl - 1; m-- > l;)
      for (const Move &x : moves_)
        if (x.level == static_cast<int>(m) && x.independent == static_cast<int>(d) && !(m == l && x.isStack))
          mv.push_back(&x);
    a.block = 1;
    for (const Move &x : moves_)
      if (x.level == static_cast<int>(l) && x.independent == static_cast<int>(d) && x.isStack)
        mv.push_back(&x), a.block *= x.count;
    int64_t total = 1, slideStride = 0;
    for (size_t j = mv.size(); j-- > 0;) {
      if (mv[j] == slide)
        slideStride = total;
      total *= mv[j]->count;
    }
    a.lo.resize(static_cast<size_t>(total)), a.hi.resize(a.lo.size()), a.prev.assign(a.lo.size(), -1);
    a.parent.resize(a.lo.size());
    a.parents = 1;
    for (const Move *x : mv)
      if (x->isStack && x->level > static_cast<int>(l))
        a.parents *= x->count;
    // Position i's coordinates c (mixed radix, the last move fastest), kept
    // by counting up rather than divided out of i; mv runs from the outer
    // levels in, so one pass adds each level's moves before its extent clips.
    std::vector<int64_t> &c = scratch().coords;
    c.assign(mv.size(), 0);
    const int64_t top = at(result_.levels[nl - 1].extent, d);
    for (int64_t i = 0; i < total; ++i) {
      int64_t origin = 0, hi = top, key = 0;
      size_t j = 0;
      for (size_t m = nl - 1; m-- > l;) {
        for (; j < mv.size() && mv[j]->level == static_cast<int>(m); ++j) {
          origin += c[j] * at(mv[j]->amount, d);
          if (mv[j]->isStack && m > l)
            key = key * mv[j]->count + c[j];
        }
        hi = std::min(hi, origin + at(result_.levels[m].extent, d));
      }
      a.lo[static_cast<size_t>(i)] = origin, a.hi[static_cast<size_t>(i)] = std::max(origin, hi);
      a.parent[static_cast<size_t>(i)] = key;
      if (slideStride && (i / slideStride) % slide->count != 0)
        a.prev[static_cast<size_t>(i)] = i - slideStride;
      for (size_t k = mv.size(); k-- > 0 && ++c[k] == mv[k]->count;)
        c[k] = 0;
    }
  }

  /// The input's width (x) or height without padding: the view's Xi or Yi,
  /// which are the ifm's but where a Yo-dim indexes no row of it (kaplaView).
  int64_t inputExtent(bool x) const { return at(layer_.bounds, x ? Dim::Xi : Dim::Yi); }

  /// Along one input window dim (Xi or Yi) of level l's ifm tiles, summed over
  /// all positions: the words the units write (on a step of the sliding loop
  /// `slide`, only those not in the window they held); the words their
  /// parents read, the union over a parent's stacked units per step where the
  /// level serves copies (`merged`); and of those, the words inside the input
  /// (DRAM does not serve padding, §6).
  struct WindowSums {
    double written = 0, read = 0, data = 0;
  };
  using Span = std::pair<int64_t, int64_t>;
  /// The input window (in padded coordinates) of output position o and
  /// filter position w along axis `a`; empty where either is idle.
  static Span windowOf(const WindowAxis &a, const Axis &out, const Axis &win, int64_t o, int64_t w) {
    auto oi = static_cast<size_t>(o), wi = static_cast<size_t>(w);
    if (out.lo[oi] >= out.hi[oi] || win.lo[wi] >= win.hi[wi])
      return {0, 0};
    return {out.lo[oi] * a.stride + win.lo[wi] * a.dilation,
            (out.hi[oi] - 1) * a.stride + (win.hi[wi] - 1) * a.dilation + 1};
  }

  static Span clip(Span s, int64_t lo, int64_t hi) { return {std::max(s.first, lo), std::min(s.second, hi)}; }

  /// The length of the union of spans (sorted in place).
  static double unionLength(std::vector<Span> &spans) {
    std::sort(spans.begin(), spans.end());
    double words = 0;
    int64_t end = std::numeric_limits<int64_t>::min();
    for (auto [lo, hi] : spans) {
      lo = std::max(lo, end);
      if (hi > lo)
        words += static_cast<double>(hi - lo), end = hi;
    }
    return words;
  }

  /// windowSums by what it reads: level l, the window, and along the two
  /// dims (outputs, taps) every level's extent from l out and every move at
  /// or above l (the slide marked). The solver's candidates for a layer share
  /// a few of these among many tilings of the other dims.
  WindowSums windowSums(size_t l, Dim in, const Move *slide, bool merged) const {
    if (freshWindowSums)
      return enumerateWindowSums(l, in, slide, merged);
    thread_local std::unordered_map<std::vector<int64_t>, WindowSums, IntVectorHash> memo;
    thread_local std::vector<int64_t> key;
    const bool x = in == Dim::Xi;
    const WindowAxis &a = layer_.window.along(in);
    key.assign({static_cast<int64_t>(l), static_cast<int64_t>(result_.levels.size()), merged, a.stride, a.dilation,
                a.padBegin, inputExtent(x)});
    for (Dim d : {x ? Dim::Xo : Dim::Yo, x ? Dim::R : Dim::S}) {
      for (size_t m = l; m < result_.levels.size(); ++m)
        key.push_back(at(result_.levels[m].extent, d));
      for (const Move &mv : moves_)
        if (mv.level >= static_cast<int>(l) && mv.independent == static_cast<int>(d))
          key.insert(key.end(), {mv.level, mv.count, at(mv.amount, d), mv.isStack, &mv == slide});
      key.push_back(-1);
    }
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
    if (memo.size() >= (1u << 16))   // a bound on the memory, not on the work
      memo.clear();
    return memo.emplace(key, enumerateWindowSums(l, in, slide, merged)).first->second;
  }
  WindowSums enumerateWindowSums(size_t l, Dim in, const Move *slide, bool merged) const {
    const bool x = in == Dim::Xi;
    Axis &out = scratch().axes[0], &win = scratch().axes[1];
    axis(l, x ? Dim::Xo : Dim::Yo, slide, out);
    axis(l, x ? Dim::R : Dim::S, slide, win);
    const WindowAxis &a = layer_.window.along(in);
    const int64_t dataLo = a.padBegin, dataHi = a.padBegin + inputExtent(x);
    auto window = [&](int64_t o, int64_t w) { return windowOf(a, out, win, o, w); };
    auto data = [&](Span s) { return std::max<int64_t>(0, std::min(s.second, dataHi) - std::max(s.first, dataLo)); };
    WindowSums sums;
    std::vector<Span> &fresh = scratch().spans;
    const int64_t no = static_cast<int64_t>(out.lo.size()), nw = static_cast<int64_t>(win.lo.size());
    for (int64_t go = 0; go < no; go += out.block)
      for (int64_t gw = 0; gw < nw; gw += win.block) {
        fresh.clear();
        for (int64_t o = go; o < go + out.block; ++o)
          for (int64_t w = gw; w < gw + win.block; ++w) {
            Span s = window(o, w);
            if (s.first >= s.second)
              continue;
            int64_t po = out.prev[static_cast<size_t>(o)], pw = win.prev[static_cast<size_t>(w)];
            if (po >= 0 || pw >= 0) {   // a sliding step keeps the overlap with the window before
              Span before = window(po >= 0 ? po : o, pw >= 0 ? pw : w);
              if (before.first < before.second)
                s.first = std::min(s.second, std::max(s.first, before.second));
            }
            if (s.first < s.second)
              fresh.push_back(s);
          }
        for (Span s : fresh)
          sums.written += static_cast<double>(s.second - s.first);
        if (!merged) {
          for (Span s : fresh)
            sums.read += static_cast<double>(s.second - s.first), sums.data += static_cast<double>(data(s));
          continue;
        }
        std::sort(fresh.begin(), fresh.end());
        int64_t lo = 0, hi = 0;   // the union, interval by interval
        for (size_t i = 0; i <= fresh.size(); ++i) {
          if (i < fresh.size() && fresh[i].first <= hi && hi > lo) {
            hi = std::max(hi, fresh[i].second);
            continue;
          }
          sums.read += static_cast<double>(hi - lo), sums.data += static_cast<double>(data({lo, hi}));
          if (i < fresh.size())
            lo = fresh[i].first, hi = fresh[i].second;
        }
      }
    return sums;
  }

  /// Along input window dim `in` (a data gradient's output, §6): the words
  /// the level-l tiles inside each level-(l+1) unit cover over the whole
  /// layer (their union), averaged over those units; with dataOnly, the
  /// data they cover (no padding).
  double parentWindowUnion(size_t l, Dim in, bool dataOnly = false) const {
    const bool x = in == Dim::Xi;
    Axis &out = scratch().axes[0], &win = scratch().axes[1];
    axis(l, x ? Dim::Xo : Dim::Yo, nullptr, out);
    axis(l, x ? Dim::R : Dim::S, nullptr, win);
    const WindowAxis &a = layer_.window.along(in);
    const int64_t dataLo = dataOnly ? a.padBegin : std::numeric_limits<int64_t>::min();
    const int64_t dataHi = dataOnly ? a.padBegin + inputExtent(x)
                                    : std::numeric_limits<int64_t>::max();
    std::vector<std::vector<Span>> byParent(static_cast<size_t>(out.parents * win.parents));
    for (int64_t o = 0; o < static_cast<int64_t>(out.lo.size()); ++o)
      for (int64_t w = 0; w < static_cast<int64_t>(win.lo.size()); ++w)
        if (Span s = clip(windowOf(a, out, win, o, w), dataLo, dataHi); s.first < s.second)
          byParent[static_cast<size_t>(out.parent[static_cast<size_t>(o)] * win.parents +
                                       win.parent[static_cast<size_t>(w)])]
              .push_back(s);
    double words = 0;
    for (std::vector<Span> &spans : byParent)
      words += unionLength(spans);
    return words / static_cast<double>(byParent.size());
  }

  /// The loops and stacks at or above level l that repeat role r's tiles
  /// (they do not move it): the stacks' units (`replicas`: those of level l)
  /// and the steps of the loops outside f*, the innermost loop moving r.
  std::pair<double, double> windowRepeats(size_t l, TensorRole r, size_t first,
                                          const std::vector<const Move *> &nest) const {
    double repeats = 1, replicas = 1;
    for (const Move &m : moves_)
      if (m.isStack && m.level >= static_cast<int>(l) && !moves(m, r))
        repeats *= static_cast<double>(m.count), replicas *= m.level == static_cast<int>(l) ? static_cast<double>(m.count) : 1.0;
    for (size_t f = first; f < nest.size(); ++f)
      if (!moves(*nest[f], r))
        repeats *= static_cast<double>(nest[f]->count);
    return {repeats, replicas};
  }

  /// Whether DRAM would serve padding: some window of the layer reaches
  /// outside the input (§6).
  bool readsPadding() const {
    const Window &w = layer_.window;
    return w.padded() || windowSpan(at(layer_.bounds, Dim::Xo), at(layer_.bounds, Dim::R), w.x) > inputExtent(true) ||
           windowSpan(at(layer_.bounds, Dim::Yo), at(layer_.bounds, Dim::S), w.y) > inputExtent(false);
  }

  /// Whether level l's input windows are all whole: no partial or idle
  /// position along Xo, R, Yo or S (then the nominal windows are exact).
  bool windowsEven(size_t l) const {
    if (!uneven_)
      return true;
    for (Dim d : {Dim::Xo, Dim::R, Dim::Yo, Dim::S})
      for (auto [x, k] : realExtents(l, d))
        if (x != at(result_.levels[l].extent, d))
          return false;
    return true;
  }

  /// Whether a unit of level l can come back, after idling, to the tile of r
  /// it holds (§4): it then keeps it (no fill, no write-back), where the
  /// counts take a new residency. That needs g, the innermost loop outside f*
  /// with more than one trip that does not move r, and for every dim d that
  /// the loops between f* and g with more than one trip move, a position
  /// whose part along d is real before the second step of the one moving d
  /// least and empty after it (a conservative test: it does not ask that the
  /// other loops along d be at their first step). Or two windows coincide.
  bool mayResumeHeld(size_t l, TensorRole r, size_t first, const std::vector<const Move *> &nest) const {
    // Input windows of different positions can be the same window: a loop
    // moving Xo outside one moving R (or the other way) whose window shift is
    // a multiple of the inner one's, within its reach, comes back to a window
    // the unit held (stride 4, S += 4 inside Yo += 2: Yi advances by 8 and 4).
    for (Dim in : {Dim::Xi, Dim::Yi})
      if (std::find(roleDimsCanon(r).begin(), roleDimsCanon(r).end(), in) != roleDimsCanon(r).end())
        for (size_t a = first; a < nest.size(); ++a)
          for (size_t b = first; b < a; ++b) {
            const Move &outer = *nest[a], &inner = *nest[b];
            int64_t so = at(outer.amount, in), si = at(inner.amount, in);
            if (outer.count > 1 && inner.count > 1 && so > 0 && si > 0 && outer.independent != inner.independent &&
                so % si == 0 && so / si <= inner.count - 1)
              return true;
          }
    size_t g = first;
    while (g < nest.size() && (nest[g]->count == 1 || moves(*nest[g], r)))
      ++g;
    if (g == nest.size())
      return false;   // every loop outside f* moves r: each tile comes once
    std::array<const Move *, kNumDims> least{};
    bool inner = false;
    for (size_t f = first; f < g; ++f) {
      const Move *m = nest[f];
      if (m->count == 1 || m->independent < 0)
        continue;
      inner = true;
      const Move *&lm = least[static_cast<size_t>(m->independent)];
      if (!lm || at(m->amount, static_cast<Dim>(m->independent)) < at(lm->amount, static_cast<Dim>(lm->independent)))
        lm = m;
    }
    if (!inner)
      return true;   // g repeats the same tile
    if (!uneven_)
      return false;  // no position is ever idle
    for (size_t d = 0; d < kNumDims; ++d) {
      if (!least[d])
        continue;
      const Extents &xs = realExtents(l, static_cast<Dim>(d));
      if (std::none_of(xs.begin(), xs.end(), [](auto xk) { return xk.first == 0 && xk.second > 0; }))
        return false;   // no position along d is ever idle
      if (positionCount(l, static_cast<Dim>(d)) > kMaxIdleCheck)
        continue;       // too many positions to look at: assume there is one
      Axis &a = scratch().axes[0];
      axis(l, static_cast<Dim>(d), least[d], a);
      bool found = false;
      for (size_t i = 0; i < a.lo.size() && !found; ++i) {
        int64_t p = a.prev[i];
        found = p >= 0 && a.prev[static_cast<size_t>(p)] < 0 && a.lo[i] >= a.hi[i] &&
                a.lo[static_cast<size_t>(p)] < a.hi[static_cast<size_t>(p)];
      }
      if (!found)
        return false;
    }
    return true;
  }

  /// Whether level l's input windows are too many to enumerate (kMaxPositions).
  bool windowsTooMany(size_t l) const {
    return positionCount(l, Dim::Xo) * positionCount(l, Dim::R) > kMaxPositions ||
           positionCount(l, Dim::Yo) * positionCount(l, Dim::S) > kMaxPositions;
  }

  /// The sum of the real extents of level l's positions along independent dim d.
  double realSum(size_t l, Dim d, bool padded = true) const {
    double sum = 0;
    for (auto [x, k] : realExtents(l, d, padded))
      sum += static_cast<double>(x * k);
    return sum;
  }

  /// §6, §7 at level 0: the MACs' own accesses, and a normalization's
  /// statistics pass. `operands`: an add's or mul's inputs (else 1).
  void countPeAccesses(double operands) {
    const size_t nl = hw_.levels.size();
    const double wordBytes = static_cast<double>(hw_.wordBytes());
    const TensorRole output = layer_.output;
    // The MACs' own accesses at level 0, per point computed: the inputs read
    // (each operand of an add or mul once), the output read and written. An
    // n-operand add or mul does n - 1 operations per point (§6, §7).
    const int64_t perElement = layer_.opsPerElement();
    const double points = perElement ? result_.work / static_cast<double>(perElement)
                                     : result_.work / std::max(1.0, operands - 1);
    for (TensorRole r : roles()) {
      size_t ri = static_cast<size_t>(r);
      // Charged at the innermost level holding the role (§6 "Bypass").
      LevelAccesses &pe = result_.levels[hw_.innermostHolder(r)].accesses;
      if (r == output) {
        pe.reads[ri] += points;
        pe.writes[ri] += points;
      } else {
        pe.reads[ri] += points * (r == TensorRole::Ifm ? operands : 1.0);
      }
    }
    // A softmax's or norm's statistics passes (§7) read its input once each
    // out of the outermost on-chip level; where its tiles split the rows,
    // each pass first streams the input there from DRAM.
    if (layer_.normalizes() && output == TensorRole::Ofm) {
      // The outermost on-chip level holding the input (§6 "Bypass"), DRAM if
      // none does: then every pass reads DRAM.
      const size_t row = hw_.outermostOnChipHolder(TensorRole::Ifm);
      const size_t ri = static_cast<size_t>(TensorRole::Ifm);
      // A causal softmax's rows: the words each query sees, its points (ops
      // are counted over them, sema).
      const int64_t perSample = layer_.causal ? layer_.ops / layer_.opsPerElement() : layer_.ifmShape.size();
      const double passes = std::max(1, result_.statisticsPasses);
      const double words = static_cast<double>(perSample * net_.batch) * passes;
      result_.levels[row].accesses.reads[ri] += words;
      addTraffic(row, TensorRole::Ifm, words, scale_.boundaryWords(ri, words, 0, row + 1 == nl) * wordBytes);
      if (result_.rowsSplit && row + 1 < nl) {
        LevelResult &dram = result_.levels[nl - 1];
        result_.levels[row].accesses.writes[ri] += words;
        result_.levels[row].accesses.fills[ri] += words;
        dram.accesses.reads[ri] += words;
        addTraffic(nl - 1, TensorRole::Ifm, words, scale_.boundaryWords(ri, words, 0, true) * wordBytes);
      }
    }
  }

  /// §6 at boundary l/l+1 for the tensor the layer produces (`all` words of
  /// it at level l): write-backs, summed among the units first where the level
  /// reduces (systolic, reduction), and the partial sums brought back in.
  void countWriteBacks(size_t l, TensorRole r, double all, size_t first, const std::vector<const Move *> &nest,
                       double outputWords) {
    const size_t nl = hw_.levels.size(), ri = static_cast<size_t>(r);
    const double wordBytes = static_cast<double>(hw_.wordBytes());
    LevelResult &lr = result_.levels[l];
    const size_t h = hw_.holderAbove(l, r);   // the level that serves l's partial sums (§6 "Bypass")
    LevelResult &outer = result_.levels[h];
    const Level &lv = hw_.levels[l];
    const TileResult &t = lr.tiles[ri];
    // Units holding partial sums of the same outputs add them up among
    // themselves (systolic, or a reduction network) before writing back.
    const bool reducing = lv.can(Transfer::Systolic) || lv.can(Transfer::Reduction);
    bool reduce = reducing && t.rep > 1;
    double back = reduce ? all / t.rep : all;
    if (r == TensorRole::Ifm && windowsTooMany(l)) {
      result_.exactCounts = false;   // nominal windows, padding counted as data (§4)
    } else if (r == TensorRole::Ifm) {
      // A data gradient writes input windows, word for word: where the
      // level sums copies, their union across a parent's stacked units
      // per step; at the top only their data (padding is dropped, §6).
      const bool top = h + 1 == nl;
      WindowSums x = windowSums(l, Dim::Xi, nullptr, reducing), y = windowSums(l, Dim::Yi, nullptr, reducing);
      // Overlapping windows summed among units: the union per step is
      // what a word's copies would be if all began their residencies
      // together; units whose windows shift by less than their size
      // begin them at different steps and write back more (§4).
      if (reducing && (x.read < x.written || y.read < y.written))
        result_.exactCounts = false;
      auto [repeats, replicas] = windowRepeats(l, r, first, nest);
      const double nc = realSum(l, Dim::N) * realSum(l, Dim::C);
      const double backRepeats = reducing ? repeats / replicas : repeats;
      if (top) {
        // Every window's data: x and y already, unless they are unions.
        WindowSums xs = reducing ? windowSums(l, Dim::Xi, nullptr, false) : x;
        WindowSums ys = reducing ? windowSums(l, Dim::Yi, nullptr, false) : y;
        all = repeats * nc * xs.data * ys.data;
        back = backRepeats * nc * x.data * y.data;
      } else {
        all = repeats * nc * x.written * y.written;
        back = backRepeats * nc * x.read * y.read;
      }
      reduce = reducing;
    }
    // Partial sums read back: the write-backs past each word's first visit.
    // Equal counts may differ in their last bits (back is a quotient): such
    // a residue is no read (a count the simulator's kernel finds 0 of).
    double psumReads = back - firstVisits(l, nest, outputWords);
    if (psumReads <= 1e-12 * back)
      psumReads = 0;
    // With psum_multicast, a partial sum brought back reaches every unit
    // holding a copy (nn_dataflow's ITCN: every PE of the set, both ways).
    double psumIn = reduce && lv.psumMulticast ? psumReads * t.rep : psumReads;
    if (psumIn != psumReads)
      result_.exactCounts = false;   // more words than a unit needs, on purpose (§12)
    lr.accesses.reads[ri] += back;          // read out to write back
    lr.accesses.writes[ri] += psumIn;       // partial sums brought back in
    lr.accesses.writeBacks[ri] += back;
    lr.accesses.fills[ri] += psumIn;
    outer.accesses.writes[ri] += back;
    outer.accesses.reads[ri] += psumReads;
    if (reduce)
      lr.accesses.sameLevel[ri] += all - back;
    addTraffic(h, r, back + psumReads, scale_.boundaryWords(ri, psumReads, back, h + 1 == nl) * wordBytes);
  }

  /// `words` (`bytes` at their widths) of role r cross level h's ports, into
  /// the buffer holding r (§8: buffers side by side have their own).
  void addTraffic(size_t h, TensorRole r, double words, double bytes) {
    LevelResult &lr = result_.levels[h];
    lr.trafficWords += words;
    lr.trafficBytes += bytes;
    const Level &lv = hw_.levels[h];
    if (lv.buffers.size() > 1)
      lr.bufferTrafficBytes[static_cast<size_t>(lv.bufferOf(r))] += bytes;
  }

  void countAccesses() {
    const size_t nl = hw_.levels.size();
    for (size_t l = nl - 1; l-- > 0;)
      result_.levels[l].unitsInUse = result_.levels[l].units * result_.levels[l + 1].unitsInUse;
    for (size_t l = 0; l + 1 < nl && uneven_; ++l)
      if (hw_.levels[l].padPartial)
        result_.exactCounts = false;   // padded tiles move words that do not exist (§12)
    std::vector<const Move *> &nest = own_->nest;   // all updates, innermost first
    nest.clear();
    for (size_t l = 0; l + 1 < nl; ++l)
      for (size_t i = 0; i < directives_[l]->updates.size(); ++i)
        for (const Move &m : moves_)
          if (!m.isStack && m.level == static_cast<int>(l) && m.indexInLevel == i)
            nest.push_back(&m);

    const double operands = static_cast<double>(layer_.pointOperands());
    // The tensor the layer produces: ofm forward; ifm (data gradient) or wgt
    // (weight gradient) for training's backward layers. It accumulates partial sums.
    const TensorRole output = layer_.output;
    double outputWords = static_cast<double>(layer_.outputWords() *
                                             (output != TensorRole::Wgt || wgtPerSample_ ? net_.batch : 1));

    const double wordBytes = static_cast<double>(hw_.wordBytes());
    for (size_t l = 0; l + 1 < nl; ++l) {
      LevelResult &lr = result_.levels[l];
      const Level &lv = hw_.levels[l];
      // The levels from l out hold the inner boundaries' accesses so far.
      std::vector<double> &beforePj = own_->beforePj;
      beforePj.assign(nl, 0.0);
      for (size_t j = l; j < nl; ++j)
        beforePj[j] = accessEnergy(j);
      bool replicaServe = lv.can(Transfer::Multicast) || lv.can(Transfer::Systolic) || lv.can(Transfer::Sharing);
      for (TensorRole r : roles()) {
        size_t ri = static_cast<size_t>(r);
        TileResult &t = lr.tiles[ri];
        // Innermost relevant loop at or above level l.
        size_t first = nest.size();
        for (size_t f = 0; f < nest.size(); ++f)
          if (nest[f]->level >= static_cast<int>(l) && moves(*nest[f], r)) {
            first = f;
            break;
          }
        double loads = 1;
        for (size_t f = first; f < nest.size(); ++f)
          loads *= static_cast<double>(nest[f]->count);
        double fresh = 1;   // fraction of a tile that is new on a sliding step
        const bool sliding = first < nest.size() && nest[first]->level == static_cast<int>(l) && r != output;
        if (sliding) {
          double overlap = 1, grown = 1;
          for (Dim raw : dimsOf(r)) {
            Dim d = canon(raw);
            int64_t step = at(nest[first]->amount, d);
            if (!step)
              continue;
            int64_t size = at(lr.extent, d);
            overlap *= size > step ? static_cast<double>(size - step) / static_cast<double>(size) : 0.0;
            // window_span: a step past the window brings the hole before it too.
            if (lv.windowSpan && isInputWindow(raw) && step > size)
              grown *= static_cast<double>(step) / static_cast<double>(size);
          }
          double trips = static_cast<double>(nest[first]->count);
          fresh = (1 + (trips - 1) * (1 - overlap) * grown) / trips;
        }
        t.loads = loads;
        if (t.shr > 1 || mayResumeHeld(l, r, first, nest))
          result_.exactCounts = false;
        const double real = realFraction(l, r);
        const double perOperand = r == TensorRole::Ifm && r != output ? operands : 1.0;
        t.wordsPerUnit = static_cast<double>(t.words) * loads * fresh * real * perOperand;
        t.distinctWords = distinctWords(l, r);
        t.rep = static_cast<double>(lr.units * t.words) / static_cast<double>(std::max<int64_t>(1, t.distinctWords));
        if (t.rep < 1)
          t.rep = 1;
        double all = static_cast<double>(lr.unitsInUse) * t.wordsPerUnit;
        // A role bypassing level l is not stored there: no fills, no
        // write-backs; the holder above serves the level inside (§6 "Bypass").
        if (!lv.holds(r))
          continue;
        const size_t h = hw_.holderAbove(l, r);
        LevelResult &outer = result_.levels[h];
        if (r != output) {
          double shareFrac = t.shr > 1 ? static_cast<double>(t.shr - 1) / static_cast<double>(t.shr) : 0.0;
          double own = all * (1 - shareFrac);
          double fromOuter = replicaServe ? own / std::max(1.0, t.rep / static_cast<double>(t.shr)) : own;
          double fromDram = fromOuter;
          const bool top = h + 1 == nl;
          // DRAM serves only data (§6), unless the hardware fetches the padded map.
          const bool dataOnly = top && !hw_.levels.back().fetchPadding;
          if (top && !dataOnly && r == TensorRole::Ifm && readsPadding())
            result_.exactCounts = false;   // padding counted as data on purpose (§12)
          const bool windowed = r == TensorRole::Ifm && ((dataOnly && readsPadding()) || !windowsEven(l));
          const bool enumerable = t.shr == 1 && !windowsTooMany(l);
          if (windowed && !enumerable)
            result_.exactCounts = false;   // nominal windows, padding counted as data: an upper bound (§4)
          if (windowed && enumerable) {
            // Input windows word for word (§4, §6): the fresh words of every
            // window, their union across a parent's stacked units, the data.
            const Move *slide = first < nest.size() && nest[first]->level == static_cast<int>(l) ? nest[first] : nullptr;
            WindowSums x = windowSums(l, Dim::Xi, slide, replicaServe), y = windowSums(l, Dim::Yi, slide, replicaServe);
            // The other moves: along N and C disjoint tiles (their real
            // extents); the rest repeat the same windows, on other units
            // (replicas, which share a read where the level serves copies)
            // or on other steps of loops outside f*.
            auto [repeats, replicas] = windowRepeats(l, r, first, nest);
            const double nc = realSum(l, Dim::N) * realSum(l, Dim::C) * perOperand;
            const double readRepeats = replicaServe ? repeats / replicas : repeats;
            own = repeats * nc * x.written * y.written;
            fromOuter = readRepeats * nc * x.read * y.read;
            fromDram = dataOnly ? readRepeats * nc * x.data * y.data : fromOuter;
            all = own;
            t.wordsPerUnit = own / static_cast<double>(lr.unitsInUse);
          } else if (replicaServe && (fresh < 1 || (sliding && lv.windowSpan && fresh > 1))) {
            // Sliding (§6): per run of f*, the stacked units fetch their whole
            // tiles once (distinct words), then on each further step only the
            // new slabs, whose union across the stack is not distinct/rep of
            // the slabs when the stack shifts along the sliding dim.
            double trips = static_cast<double>(nest[first]->count);
            double runs = loads / trips;
            double units = static_cast<double>(lr.unitsInUse / std::max<int64_t>(1, lr.units));
            fromOuter = units * runs * real *
                        (static_cast<double>(t.distinctWords) +
                         (trips - 1) * static_cast<double>(distinctWords(l, r, nest[first])));
            fromDram = fromOuter;
          }
          lr.accesses.writes[ri] += own;
          lr.accesses.fills[ri] += own;
          outer.accesses.reads[ri] += fromDram;
          double neighbour = all * shareFrac;
          if (!lv.can(Transfer::Multicast))
            neighbour += own - fromOuter;
          lr.accesses.sameLevel[ri] += neighbour;
          addTraffic(h, r, fromDram, scale_.boundaryWords(ri, fromDram, 0, top) * wordBytes);
        } else {
          countWriteBacks(l, r, all, first, nest, outputWords);
        }
      }
      // What this boundary added, wherever its accesses were charged (§6 "Bypass").
      lr.boundaryEnergyPj = accessEnergy(l) - beforePj[l];
      for (size_t j = l + 1; j < nl; ++j)
        lr.boundaryEnergyPj += accessEnergy(j) - beforePj[j];
      lr.boundaryEnergyPj += busEnergy(l + 1);
    }
    countPeAccesses(operands);

    countHops();
    cost();
  }

  /// §6 NoC: the nodes (the units of the level below the outermost) sit on a
  /// mesh fed from the memory channels. Every DRAM word of a role travels from
  /// the nearest channel to the nearest node holding its piece, then along the
  /// forwarding tree over the piece's nodes (`meshPieceHops`); an output's
  /// partial sums are reduced along that tree, half of it counted
  /// (nn_dataflow: `partition._unit_nhops_to_ofm`). A level that cannot serve
  /// copies (or reduce) moves each node's own words: the mean distance.
  void countHops() {
    const size_t nl = hw_.levels.size();
    if (nl < 2)
      return;
    size_t node = nl - 2;
    const Level &lv = hw_.levels[node];
    if (lv.units() <= 1)
      return;
    const LevelResult &lr = result_.levels[node];
    std::vector<const Move *> &stacks = own_->stacks;
    std::vector<int64_t> &repls = own_->repls;
    stacks.clear(), repls.clear();
    for (const Move &m : moves_)
      if (m.isStack && m.level == static_cast<int>(node)) {
        stacks.push_back(&m);
        repls.push_back(m.count);
      }
    // The stacks as rows and columns (§2); past the enumerable, greedily.
    std::optional<uint64_t> mask = stackRowMask(repls, lv.rows, lv.cols);
    std::vector<MeshStack> &placed = own_->placed;
    placed.assign(stacks.size(), MeshStack{});
    int64_t rowsUsed = 1;
    for (size_t i = 0; i < stacks.size(); ++i) {
      placed[i].repl = repls[i];
      placed[i].row = mask ? ((*mask >> i) & 1) != 0 : rowsUsed * repls[i] <= lv.rows;
      if (placed[i].row)
        rowsUsed *= repls[i];
    }
    auto hopsOf = [&](TensorRole r, bool tree, bool everyChannel) {
      for (size_t i = 0; i < stacks.size(); ++i)
        placed[i].shared = tree && !moves(*stacks[i], r);
      return meshPieceHops(placed, lv.rows, lv.cols, hw_.memoryChannels, everyChannel);
    };
    const LevelAccesses &dram = result_.levels[nl - 1].accesses;
    bool replicaServe = lv.can(Transfer::Multicast) || lv.can(Transfer::Systolic) || lv.can(Transfer::Sharing);
    double hops = 0, wordHops = 0;   // the latter in `word`s, for the energy
    for (TensorRole r : roles()) {
      size_t ri = static_cast<size_t>(r);
      const TileResult &t = lr.tiles[ri];
      // The node level's same-level transfers of r are the tree's edges
      // (copies forwarded, partial sums reduced): no hops of their own.
      bool tree = r == layer_.output ? (lv.can(Transfer::Systolic) || lv.can(Transfer::Reduction)) && t.rep > 1
                                     : replicaServe;
      // Weights are constants: every channel may hold a copy, and the tree
      // grows from all of them. Activations are stored once: at the nearest
      // channel, or where a layout puts them.
      bool everyChannel = r == TensorRole::Wgt && r != layer_.output && !wgtPerSample_;
      PieceHops ph = hopsOf(r, tree, everyChannel);
      const LayoutDirective *layout = layoutOf(r);
      // Pieces placed by hand where a layout stores the role, or where their
      // ranges are not whole tiles (a pooling input's extra channel, an even
      // split of a padded partition); weights from every channel keep the tree.
      if (layout || (!everyChannel && unevenPieces(r))) {
        const PieceGeometry g = pieceGeometry(r, stacks);
        std::vector<std::pair<size_t, int64_t>> parts;
        if (layout)
          parts = layoutParts(r, *layout);
        LayoutHops lh = layoutFirstHops(placed, g, parts, lv.rows, lv.cols, hw_.memoryChannels);
        ph.first = lh.first;
        ph.tree *= lh.growth;
        everyChannel = false;
      }
      double perWord = r == layer_.output ? ph.first + ph.tree / 2 : everyChannel ? ph.fromEvery : ph.first + ph.tree;
      result_.dramReadHops[ri] = perWord;
      result_.dramWriteHops[ri] = perWord;
      // Padded words (pad_partial) are not stored: only the real ones travel.
      hops += (dram.reads[ri] + dram.writes[ri]) * perWord / paddedGrowth(r);
      wordHops += scale_.outerWords(ri, dram.reads[ri], dram.writes[ri]) * perWord / paddedGrowth(r);
    }
    result_.hops = hops;
    result_.energyNocPj = wordHops * hw_.nocHopEnergyPj;
    result_.levels[node].boundaryEnergyPj += result_.energyNocPj;
  }

  /// The outermost level's layout of role r, if the schedule gives one.
  const LayoutDirective *layoutOf(TensorRole r) const {
    const LevelDirectives *top = directives_.back();
    if (top)
      for (const LayoutDirective &l : top->layouts)
        if (l.role == r)
          return &l;
    return nullptr;
  }

  /// nn_dataflow's pooling input range per node ends a channel past the
  /// output's (`partition.proc_data_range`, n_end + nreg - nreg // 2 with
  /// nreg = 1): role r's pieces carry that channel too.
  bool poolExtra(TensorRole r) const {
    return hw_.poolExtraChannel && r == TensorRole::Ifm &&
           (layer_.type == LayerType::MaxPool || layer_.type == LayerType::AvgPool);
  }

  /// Whether dim `raw` is split evenly over the node level's units (a padded
  /// partition, `pad_partial`): a window dim never is, nor one not split.
  bool evenSplit(Dim raw) const {
    const size_t top = hw_.levels.size() - 2;
    return hw_.levels[top].padPartial && !isInputWindow(raw) &&
           at(result_.levels[top].extent, canon(raw)) < at(layer_.bounds, raw);
  }

  /// Whether role r's pieces are not whole tiles of the node level: an extra
  /// channel, or an even split that does not divide (what pieceGeometry's
  /// `extra` and `even` make uneven, without building it: most schedules
  /// have neither).
  bool unevenPieces(TensorRole r) const {
    const LevelResult &node = result_.levels[hw_.levels.size() - 2];
    for (Dim raw : dimsOf(r))
      if ((poolExtra(r) && raw == Dim::C) || (evenSplit(raw) && at(layer_.bounds, raw) % at(node.extent, canon(raw)) != 0))
        return true;
    return false;
  }

  /// Role r's pieces in its tensor (§6 NoC, layouts): per dim of r, the
  /// tensor's data, a node's tile, where the first starts (a padded input's
  /// -pad) and each node-level stack's shift per copy.
  PieceGeometry pieceGeometry(TensorRole r, const std::vector<const Move *> &stacks) const {
    PieceGeometry g;
    const LevelResult &node = result_.levels[hw_.levels.size() - 2];
    const bool extra = poolExtra(r), padPartial = hw_.levels[hw_.levels.size() - 2].padPartial;
    g.shift.resize(stacks.size());
    for (Dim raw : dimsOf(r)) {
      Dim d = canon(raw);
      bool window = isInputWindow(raw);
      g.extent.push_back(at(layer_.bounds, raw));
      g.tile.push_back(at(node.extent, d));
      g.offset.push_back(window ? -layer_.window.along(raw).padBegin : 0);
      if (extra)
        g.extra.push_back(raw == Dim::C ? 1 : 0);
      if (padPartial)
        g.even.push_back(evenSplit(raw));
      for (size_t i = 0; i < stacks.size(); ++i)
        g.shift[i].push_back(at(stacks[i]->amount, d));
    }
    return g;
  }

  /// A layout's parts as (index into dimsOf(r), parts).
  std::vector<std::pair<size_t, int64_t>> layoutParts(TensorRole r, const LayoutDirective &layout) const {
    std::vector<std::pair<size_t, int64_t>> parts;
    const std::vector<Dim> &dims = dimsOf(r);
    for (const auto &[dim, n] : layout.parts)
      for (size_t i = 0; i < dims.size(); ++i)
        if (canon(dims[i]) == canon(dim))
          parts.emplace_back(i, n);
    return parts;
  }

  /// The energy of level l's accesses as they stand.
  double accessEnergy(size_t l) const { return levelAccessEnergyPj(hw_, l, result_.levels[l].accesses, scale_); }


  /// Level l's array bus: every word its inner units fill or write back.
  double busEnergy(size_t l) const {
    if (l == 0)
      return 0.0;
    const LevelAccesses &a = result_.levels[l - 1].accesses;
    double words = 0;
    for (size_t r = 0; r < kNumRoles; ++r)
      words += scale_.boundaryWords(r, a.fills[r], a.writeBacks[r], l + 1 == hw_.levels.size());
    return hw_.levels[l].busEnergyPj * words;
  }

  void cost() {
    const size_t nl = hw_.levels.size();
    // Compute: the MACs (or operations), and each fused activation once per output element.
    result_.energyMacPj = result_.work * hw_.macEnergyPj;
    for (const std::string &a : layer_.activations)
      if (auto it = hw_.activationEnergyPj.find(a); it != hw_.activationEnergyPj.end())
        result_.energyMacPj += it->second * static_cast<double>(layer_.ofmShape.size() * net_.batch);
    result_.energyPj = result_.energyMacPj;
    result_.energyBusPj = 0;
    for (size_t l = 0; l < nl; ++l) {
      result_.levels[l].energyPj = accessEnergy(l);
      result_.levels[l].neighborEnergyPj = levelNeighborEnergyPj(hw_, l, result_.levels[l].accesses, scale_);
      result_.levels[l].busEnergyPj = busEnergy(l);
      result_.energyBusPj += result_.levels[l].busEnergyPj;
      result_.energyPj += result_.levels[l].energyPj;
    }
    result_.energyPj += result_.energyNocPj + result_.energyBusPj;

    // §8 latency: compute vs. the traffic out of each level, per unit of bandwidth.
    int64_t pes = result_.levels[0].unitsInUse;
    // A partial last tile takes a full step on its units (§8).
    // A vector unit performs opsPerCycle operations a cycle; a PE, one MAC.
    result_.computeCycles =
        result_.work * paddedWork() / static_cast<double>(std::max<int64_t>(1, pes) * hw_.opsPerCycle);
    int64_t allPes = 1;
    for (size_t l = 0; l + 1 < nl; ++l)
      allPes *= hw_.levels[l].units();
    result_.utilization = static_cast<double>(pes) / static_cast<double>(allPes) / paddedWork();
    settleLatency(hw_, result_);
  }

  const Network &net_;
  const Layer &layer_;
  const Hardware &hw_;
  const LayerScheduleModel *ls_;
  std::vector<Issue> &issues_;
  size_t issueCount_ = 0;
  /// The analysis' storage, kept from one analysis to the next on this thread
  /// (the solver runs millions: their allocations were a fifth of its time).
  /// Each analysis clears what it uses; one inside another takes new storage.
  struct Buffers {
    std::vector<const LevelDirectives *> directives;
    std::vector<Move> moves;
    std::array<std::vector<std::array<Extents, kNumDims>>, 2> realExtents;
    std::array<std::vector<Dim>, kNumRoles> dims, dimsCanon;
    std::vector<const Move *> nest, stacks;
    std::vector<Move *> factors;
    std::vector<double> beforePj;
    std::vector<int64_t> repls;
    std::vector<MeshStack> placed;
  };
  static std::unique_ptr<Buffers> &spare() {
    thread_local std::unique_ptr<Buffers> s;
    return s;
  }
  std::unique_ptr<Buffers> own_ = spare() ? std::move(spare()) : std::make_unique<Buffers>();
  std::vector<const LevelDirectives *> &directives_ = own_->directives;
  std::vector<Move> &moves_ = own_->moves;
  std::array<TensorRole, kNumRoles> roles_{};
  size_t nRoles_ = 0;
  bool channelWise_ = false;
  bool uneven_ = false;   // some level's tiles over-cover their enclosing extent (partial last tiles)
  std::array<std::vector<std::array<Extents, kNumDims>>, 2> &realExtents_ = own_->realExtents;   // unpadded, padded
  bool wgtPerSample_ = false;
  std::array<std::vector<Dim>, kNumRoles> &dims_ = own_->dims, &dimsCanon_ = own_->dimsCanon;   // dimsOf, roleDimsCanon
  WordScale scale_;
  LayerResult result_;
};

} // namespace

double LevelAccesses::total() const {
  double t = 0;
  for (size_t r = 0; r < kNumRoles; ++r)
    t += reads[r] + writes[r] + sameLevel[r];
  return t;
}

double LevelAccesses::boundaryWords() const {
  double t = 0;
  for (size_t r = 0; r < kNumRoles; ++r)
    t += fills[r] + writeBacks[r];
  return t;
}

double levelAccessEnergyPj(const Hardware &hw, size_t level, const LevelAccesses &a, const WordScale &s) {
  const Level &lv = hw.levels[level];
  const bool outermost = level + 1 == hw.levels.size();
  double pj = 0;
  for (size_t r = 0; r < kNumRoles; ++r) {
    // Each role at the energies of the buffer holding it (§7); one bypassing
    // the level has no accesses there.
    const int b = lv.bufferOf(static_cast<TensorRole>(r));
    if (b < 0)
      continue;
    const Buffer &buf = lv.buffers[static_cast<size_t>(b)];
    if (outermost) {
      // Reads serve finished data, or an output's partial sums coming back
      // in; as many writes as those are the partial sums going out.
      double reads = a.reads[r] * (r == s.output ? s.held[r] : s.data[r]);
      pj += reads * buf.readEnergyPj + (s.outerWords(r, a.reads[r], a.writes[r]) - reads) * buf.writeEnergyPj;
      continue;
    }
    double e = (a.reads[r] - a.writeBacks[r]) * buf.readEnergyPj + (a.writes[r] - a.fills[r]) * buf.writeEnergyPj;
    e += buf.fillEnergyPj ? (a.fills[r] + a.writeBacks[r]) * *buf.fillEnergyPj
                          : a.fills[r] * buf.writeEnergyPj + a.writeBacks[r] * buf.readEnergyPj;
    pj += e * s.held[r];
  }
  return pj + levelNeighborEnergyPj(hw, level, a, s);
}

double levelNeighborEnergyPj(const Hardware &hw, size_t level, const LevelAccesses &a, const WordScale &s) {
  const Level &lv = hw.levels[level];
  double pj = 0;
  for (size_t b = 0; b < lv.buffers.size(); ++b) {
    const Buffer &buf = lv.buffers[b];
    double words = 0;
    for (size_t r = 0; r < kNumRoles; ++r)
      if (buf.holds(static_cast<TensorRole>(r)))
        words += a.sameLevel[r] * s.held[r];
    pj += words * lv.neighborEnergyPj.value_or(buf.readEnergyPj + buf.writeEnergyPj);
  }
  return pj;
}

FreshWindowSums::FreshWindowSums() : before_(freshWindowSums) { freshWindowSums = true; }
FreshWindowSums::~FreshWindowSums() { freshWindowSums = before_; }

LayerResult analyzeLayer(const Network &net, int layer, const Hardware &hw, const LayerScheduleModel *schedule,
                         std::vector<Issue> &issues) {
  return analyzeLayer(net, net.layers[static_cast<size_t>(layer)], layer, hw, schedule, issues);
}

LayerResult analyzeLayer(const Network &net, const Layer &shape, int layer, const Hardware &hw,
                         const LayerScheduleModel *schedule, std::vector<Issue> &issues) {
  if (!schedule || schedule->unit < 0)
    return LayerAnalyzer(net, shape, layer, hw, schedule, issues).run();
  // On a vector unit: the unit's truncated template, its levels indexed from
  // the unit's level (docs/directives.md §7, "Vector units").
  const VectorUnit &v = hw.vectors.at(static_cast<size_t>(schedule->unit));
  const LayerScheduleModel shifted = shiftLevels(*schedule, v.level);
  return liftVectorResult(LayerAnalyzer(net, shape, layer, *v.truncated, &shifted, issues).run(), v.level,
                          schedule->unit);
}

LayerResult liftVectorResult(LayerResult r, int offset, int unit) {
  std::vector<LevelResult> levels(static_cast<size_t>(offset));
  for (size_t l = 0; l < levels.size(); ++l) {
    // No word reaches these levels: one unit each, holding nothing.
    levels[l].level = static_cast<int>(l);
    levels[l].known = true;
    if (!r.levels.empty()) {
      levels[l].extent = r.levels.front().extent;
      levels[l].unitsInUse = r.levels.front().unitsInUse;
    }
  }
  for (LevelResult &lr : r.levels) {
    lr.level += offset;
    levels.push_back(std::move(lr));
  }
  r.levels = std::move(levels);
  if (r.bindingLevel >= 0)
    r.bindingLevel += offset;
  r.unit = unit;
  return r;
}

LayerResult lowerVectorResult(LayerResult r, int offset) {
  r.levels.erase(r.levels.begin(), r.levels.begin() + std::min<ptrdiff_t>(offset, std::ssize(r.levels)));
  for (LevelResult &lr : r.levels)
    lr.level -= offset;
  if (r.bindingLevel >= 0)
    r.bindingLevel -= offset;
  return r;
}

std::optional<std::pair<Dim, int64_t>> splitRowDim(const Layer &layer, const DimVector &extent) {
  for (auto [axis, row] : layer.rowDims())   // groupnorm's rows span C, X and Y
    if (at(extent, axis) % row != 0)
      return std::pair{axis, row};
  return std::nullopt;
}

std::optional<double> boundaryCycles(const Hardware &hw, const LayerResult &lr, size_t l) {
  const Level &lv = hw.levels[l];
  const LevelResult &level = lr.levels[l];
  const double units = static_cast<double>(std::max<int64_t>(1, level.unitsInUse));
  // Buffers side by side have their own ports: the slowest one's time (§8).
  std::optional<double> cycles;
  for (size_t b = 0; b < lv.buffers.size(); ++b) {
    const std::optional<double> &bw = lv.buffers[b].bandwidthBytesPerCycle;
    if (!bw)
      continue;
    const double bytes = lv.buffers.size() == 1 ? level.trafficBytes : level.bufferTrafficBytes[b];
    cycles = std::max(cycles.value_or(0.0), bytes / (*bw * units));
  }
  return cycles;
}

void settleLatency(const Hardware &hw, LayerResult &lr) {
  // §8 latency: compute vs. the traffic across each level's boundary, per unit of bandwidth.
  lr.latencyCycles = lr.computeCycles;
  lr.bindingLevel = -1;
  for (size_t l = 1; l < hw.levels.size() && l < lr.levels.size(); ++l) {
    std::optional<double> cycles = boundaryCycles(hw, lr, l);
    if (!cycles)
      continue;
    lr.levels[l].cycles = *cycles;
    if (*cycles > lr.latencyCycles) {
      lr.latencyCycles = *cycles;
      lr.bindingLevel = static_cast<int>(l);
    }
  }
  // §7 static energy: the whole chip leaks while the layer runs, used or idle.
  const double leak = hw.chipStaticEnergyPj() * lr.latencyCycles;
  lr.energyPj += leak - lr.energyStaticPj;
  lr.energyStaticPj = leak;
}

} // namespace dfl
