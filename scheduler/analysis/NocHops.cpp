// NoC hops between the memory channels and the nodes (docs/directives.md §6).
#include "scheduler/analysis/NocHops.h"

#include "support/Check.h"
#include "support/Hash.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>

namespace dfl {

namespace {

/// The first split (in mask order) of `repls` into rows and columns that fits
/// a rows x cols array: every one of the 2^n is tried.
std::optional<uint64_t> firstRowSplit(const std::vector<int64_t> &repls, int64_t rows, int64_t cols) {
  const size_t n = repls.size();
  DFLC_CHECK(n < 64) << n << " stacks to split into rows and columns";
  for (uint64_t mask = 0; mask < (uint64_t{1} << n); ++mask) {
    int64_t r = 1, c = 1;
    for (size_t i = 0; i < n && r <= rows && c <= cols; ++i)
      ((mask >> i) & 1 ? r : c) *= repls[i];
    if (r <= rows && c <= cols)
      return mask;
  }
  return std::nullopt;
}

} // namespace

std::optional<uint64_t> stackRowMask(const std::vector<int64_t> &repls, int64_t rows, int64_t cols) {
  if (repls.size() > 16)
    return std::nullopt;
  return firstRowSplit(repls, rows, cols);
}

namespace {

constexpr int64_t kEnumerate = 4096;     // a piece's row (column) offsets listed up to this many
constexpr int64_t kBudget = 1 << 14;     // pieces x channels whose nearest distances are computed
constexpr int64_t kPrimBudget = 1 << 16; // pieces x nodes x (nodes + channels): trees grown from every channel

/// One digit of a mixed-radix coordinate: `repl` copies `weight` apart.
struct Digit {
  int64_t weight, repl;
};

/// One mesh dimension of a role's stacks: the digits that tell pieces apart
/// (the pieces' origins) and those that copy a piece (its nodes' offsets).
struct Axis {
  std::vector<Digit> origin, copy;   // copy: by weight, ascending
  int64_t copySpan = 0;              // the largest copy offset
  std::vector<int64_t> copies;       // every copy offset, sorted, if at most kEnumerate

  int64_t origins() const {
    int64_t n = 1;
    for (const Digit &d : origin)
      n *= d.repl;
    return n;
  }
  /// The offset of the k-th origin (mixed radix over `origin`).
  int64_t originAt(int64_t k) const {
    int64_t off = 0;
    for (const Digit &d : origin) {
      off += (k % d.repl) * d.weight;
      k /= d.repl;
    }
    return off;
  }
  /// How far x is from the nearest node of the piece at origin o.
  int64_t distance(int64_t o, int64_t x) const {
    if (x <= o)
      return o - x;
    if (x >= o + copySpan)
      return x - o - copySpan;
    if (copies.empty())
      return 0;   // inside a span too large to list: a lower bound
    auto it = std::lower_bound(copies.begin(), copies.end(), x - o);
    int64_t best = *it - (x - o);
    if (it != copies.begin())
      best = std::min(best, (x - o) - *std::prev(it));
    return best;
  }
};

Axis makeAxis(const std::vector<MeshStack> &stacks, bool row) {
  Axis a;
  int64_t weight = 1;   // the last listed stack is the least significant
  for (size_t i = stacks.size(); i-- > 0;) {
    const MeshStack &s = stacks[i];
    if (s.row != row || s.repl <= 1)
      continue;
    (s.shared ? a.copy : a.origin).push_back({weight, s.repl});
    if (s.shared)
      a.copySpan += (s.repl - 1) * weight;
    weight *= s.repl;
  }
  int64_t n = 1;
  for (const Digit &d : a.copy)
    n *= d.repl;
  if (n <= kEnumerate) {
    a.copies = {0};
    for (const Digit &d : a.copy) {
      std::vector<int64_t> next;
      for (int64_t k = 0; k < d.repl; ++k)
        for (int64_t c : a.copies)
          next.push_back(c + k * d.weight);
      a.copies = std::move(next);
    }
    std::sort(a.copies.begin(), a.copies.end());
  }
  return a;
}

/// The gaps between consecutive copy offsets of an axis: (length, how many).
/// With copies sorted by weight w_1 < w_2 < ..., moving to the next offset
/// steps digit j and resets the digits below it: a gap of
/// w_j - sum_{i<j} (r_i - 1) w_i, which happens (r_j - 1) prod_{i>j} r_i times.
std::vector<std::pair<int64_t, double>> gaps(const Axis &a) {
  std::vector<std::pair<int64_t, double>> out;
  int64_t below = 0;   // sum_{i<j} (r_i - 1) w_i
  for (size_t j = 0; j < a.copy.size(); ++j) {
    double times = static_cast<double>(a.copy[j].repl - 1);
    for (size_t i = j + 1; i < a.copy.size(); ++i)
      times *= static_cast<double>(a.copy[i].repl);
    out.push_back({a.copy[j].weight - below, times});
    below += (a.copy[j].repl - 1) * a.copy[j].weight;
  }
  return out;
}

/// The minimum spanning tree of the product of the two axes' copy offsets
/// under Manhattan distance. Kruskal over the gaps, shortest first: the
/// nodes' components are always (row segment) x (column segment), so a row
/// gap joins as many pairs of components as there are column segments.
double productTree(const Axis &rows, const Axis &cols) {
  struct Gap {
    int64_t length;
    double times;
    bool row;
  };
  std::vector<Gap> all;
  for (auto [g, n] : gaps(rows))
    all.push_back({g, n, true});
  for (auto [g, n] : gaps(cols))
    all.push_back({g, n, false});
  std::stable_sort(all.begin(), all.end(), [](const Gap &a, const Gap &b) { return a.length < b.length; });
  double rowSegments = 1, colSegments = 1;
  for (const Digit &d : rows.copy)
    rowSegments *= static_cast<double>(d.repl);
  for (const Digit &d : cols.copy)
    colSegments *= static_cast<double>(d.repl);
  double tree = 0;
  for (const Gap &g : all) {
    tree += static_cast<double>(g.length) * g.times * (g.row ? colSegments : rowSegments);
    (g.row ? rowSegments : colSegments) -= g.times;
  }
  return tree;
}

/// `count` of the n indices 0 .. n-1, evenly spaced (all of them if count >= n).
std::vector<int64_t> sample(int64_t n, int64_t count) {
  count = std::min(n, std::max<int64_t>(1, count));
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out.push_back(static_cast<int64_t>(static_cast<double>(i) * static_cast<double>(n) / static_cast<double>(count)));
  return out;
}

std::vector<std::pair<int64_t, int64_t>> channelsOrCorners(const std::vector<std::pair<int64_t, int64_t>> &channels,
                                                           int64_t rows, int64_t cols) {
  if (!channels.empty())
    return channels;
  return {{0, 0}, {0, cols - 1}, {rows - 1, 0}, {rows - 1, cols - 1}};
}

} // namespace

namespace {
PieceHops computePieceHops(const std::vector<MeshStack> &stacks, int64_t rows, int64_t cols,
                           const std::vector<std::pair<int64_t, int64_t>> &channels, bool fromEveryChannel) {
  const std::vector<std::pair<int64_t, int64_t>> at = channelsOrCorners(channels, rows, cols);
  const Axis ra = makeAxis(stacks, true), ca = makeAxis(stacks, false);
  PieceHops h;
  h.tree = productTree(ra, ca);

  // The pieces' origins, all or an even sample of them.
  const int64_t m = static_cast<int64_t>(at.size());
  const int64_t nr = ra.origins(), nc = ca.origins();
  int64_t sr = nr, sc = nc;
  if (static_cast<double>(nr) * static_cast<double>(nc) * static_cast<double>(m) > static_cast<double>(kBudget)) {
    int64_t side = std::max<int64_t>(1, static_cast<int64_t>(std::sqrt(static_cast<double>(kBudget / m))));
    sr = std::min(nr, side);
    sc = std::min(nc, std::max<int64_t>(1, kBudget / m / sr));
    sr = std::min(nr, std::max<int64_t>(1, kBudget / m / sc));
  }
  const std::vector<int64_t> ri = sample(nr, sr), ci = sample(nc, sc);
  // Per origin and channel, the distance along each axis.
  std::vector<int64_t> dr(ri.size() * at.size()), dc(ci.size() * at.size());
  for (size_t i = 0; i < ri.size(); ++i)
    for (size_t k = 0; k < at.size(); ++k)
      dr[i * at.size() + k] = ra.distance(ra.originAt(ri[i]), at[k].first);
  for (size_t j = 0; j < ci.size(); ++j)
    for (size_t k = 0; k < at.size(); ++k)
      dc[j * at.size() + k] = ca.distance(ca.originAt(ci[j]), at[k].second);
  double sum = 0;
  for (size_t i = 0; i < ri.size(); ++i)
    for (size_t j = 0; j < ci.size(); ++j) {
      int64_t best = dr[i * at.size()] + dc[j * at.size()];
      for (size_t k = 1; k < at.size(); ++k)
        best = std::min(best, dr[i * at.size() + k] + dc[j * at.size() + k]);
      sum += static_cast<double>(best);
    }
  h.first = sum / (static_cast<double>(ri.size()) * static_cast<double>(ci.size()));
  h.fromEvery = fromEveryChannel ? h.first + h.tree : std::numeric_limits<double>::quiet_NaN();
  if (!fromEveryChannel || ra.copies.empty() || ca.copies.empty())
    return h;
  const int64_t nodes = static_cast<int64_t>(ra.copies.size() * ca.copies.size());
  if (nodes > 256)
    return h;
  // Prim from the channels (all in the tree at the start) over each piece's nodes.
  const int64_t pieces = std::max<int64_t>(1, kPrimBudget / (nodes * (nodes + m)));
  const std::vector<int64_t> pr = sample(nr, std::min(nr, std::max<int64_t>(1, pieces / std::min(nc, pieces)))),
                             pc = sample(nc, std::min(nc, pieces));
  std::vector<std::pair<int64_t, int64_t>> node(static_cast<size_t>(nodes));
  std::vector<int64_t> key(static_cast<size_t>(nodes));
  std::vector<char> in(static_cast<size_t>(nodes));
  double grown = 0;
  for (int64_t i : pr)
    for (int64_t j : pc) {
      const int64_t orow = ra.originAt(i), ocol = ca.originAt(j);
      size_t n = 0;
      for (int64_t r : ra.copies)
        for (int64_t c : ca.copies) {
          node[n] = {orow + r, ocol + c};
          int64_t best = std::abs(node[n].first - at[0].first) + std::abs(node[n].second - at[0].second);
          for (const auto &[cr, cc] : at)
            best = std::min(best, std::abs(node[n].first - cr) + std::abs(node[n].second - cc));
          key[n] = best;
          in[n] = 0;
          ++n;
        }
      for (size_t step = 0; step < node.size(); ++step) {
        size_t v = node.size();
        for (size_t u = 0; u < node.size(); ++u)
          if (!in[u] && (v == node.size() || key[u] < key[v]))
            v = u;
        in[v] = 1;
        grown += static_cast<double>(key[v]);
        for (size_t u = 0; u < node.size(); ++u)
          if (!in[u])
            key[u] = std::min(key[u], std::abs(node[u].first - node[v].first) + std::abs(node[u].second - node[v].second));
      }
    }
  h.fromEvery = grown / (static_cast<double>(pr.size()) * static_cast<double>(pc.size()));
  return h;
}
} // namespace

namespace {
/// min over x in {o + c : c in the axis' copies} of sum_j w_j |x - at_j|: the
/// axis' part of a piece's weighted distance (Manhattan distance separates).
double nearestOnAxis(const Axis &a, int64_t o, const std::vector<double> &w, const std::vector<int64_t> &at) {
  auto cost = [&](int64_t x) {
    double sum = 0;
    for (size_t j = 0; j < w.size(); ++j)
      sum += w[j] * static_cast<double>(std::abs(x - at[j]));
    return sum;
  };
  if (!a.copies.empty()) {
    double best = cost(o + a.copies.front());
    for (int64_t c : a.copies)
      best = std::min(best, cost(o + c));
    return best;
  }
  // Too many copies to list: the best point of the span (a lower bound).
  double best = std::min(cost(o), cost(o + a.copySpan));
  for (int64_t x : at)
    if (x >= o && x <= o + a.copySpan)
      best = std::min(best, cost(x));
  return best;
}
} // namespace

LayoutHops layoutFirstHops(const std::vector<MeshStack> &stacks, const PieceGeometry &g,
                           const std::vector<std::pair<size_t, int64_t>> &parts, int64_t rows, int64_t cols,
                           const std::vector<std::pair<int64_t, int64_t>> &channels) {
  const std::vector<std::pair<int64_t, int64_t>> at = channelsOrCorners(channels, rows, cols);
  const Axis ra = makeAxis(stacks, true), ca = makeAxis(stacks, false);
  const size_t dims = g.extent.size();
  // The stacks that tell pieces apart, with their weight along their axis
  // (as makeAxis places them: the last listed least significant).
  struct Origin {
    size_t stack;
    int64_t weight;
  };
  std::vector<Origin> origins;
  int64_t rowWeight = 1, colWeight = 1, pieces = 1;
  for (size_t i = stacks.size(); i-- > 0;) {
    const MeshStack &s = stacks[i];
    if (s.repl <= 1)
      continue;
    int64_t &weight = s.row ? rowWeight : colWeight;
    if (!s.shared) {
      origins.push_back({i, weight});
      pieces *= s.repl;
    }
    weight *= s.repl;
  }
  // The parts' ranges per dim; every part at its channel. No parts: the
  // whole tensor at every channel, each piece taking the nearest.
  const bool nearest = parts.empty();
  const size_t m = nearest ? at.size() : std::min(at.size(), [&] {
    size_t n = 1;
    for (const auto &[d, k] : parts)
      n *= static_cast<size_t>(k);
    return n;
  }());
  std::vector<std::vector<std::pair<int64_t, int64_t>>> partRange(m);
  for (size_t j = 0; j < m; ++j) {
    partRange[j].resize(dims);
    for (size_t d = 0; d < dims; ++d)
      partRange[j][d] = {0, g.extent[d]};
    size_t k = j;
    for (size_t p = parts.size(); p-- > 0;) {
      const auto [d, n] = parts[p];
      int64_t idx = static_cast<int64_t>(k % static_cast<size_t>(n));
      k /= static_cast<size_t>(n);
      partRange[j][d] = {idx * g.extent[d] / n, (idx + 1) * g.extent[d] / n};
    }
  }
  std::vector<int64_t> atRow(m), atCol(m);
  for (size_t j = 0; j < m; ++j)
    atRow[j] = at[j].first, atCol[j] = at[j].second;

  double hops = 0, words = 0, moved = 0;
  std::vector<double> w(m), one(1, 1.0);
  std::vector<int64_t> begin(dims), end(dims), reach(dims);
  for (int64_t p : sample(pieces, kBudget)) {
    int64_t orow = 0, ocol = 0, k = p;
    for (size_t d = 0; d < dims; ++d)
      begin[d] = g.offset[d];
    for (const Origin &o : origins) {
      const MeshStack &s = stacks[o.stack];
      int64_t idx = k % s.repl;
      k /= s.repl;
      (s.row ? orow : ocol) += idx * o.weight;
      for (size_t d = 0; d < dims; ++d)
        begin[d] += idx * g.shift[o.stack][d];
    }
    double size = 1, reached = 1;
    for (size_t d = 0; d < dims; ++d) {
      if (!g.even.empty() && g.even[d] && begin[d] >= 0 && begin[d] % g.tile[d] == 0) {
        const int64_t n = (g.extent[d] + g.tile[d] - 1) / g.tile[d], block = begin[d] / g.tile[d];
        begin[d] = block * g.extent[d] / n;
        end[d] = (block + 1) * g.extent[d] / n;
      } else
        end[d] = std::min(g.extent[d], begin[d] + g.tile[d]);
      reach[d] = std::min(g.extent[d], end[d] + (g.extra.empty() ? 0 : g.extra[d]));
      begin[d] = std::max<int64_t>(0, begin[d]);
      size *= static_cast<double>(std::max<int64_t>(0, end[d] - begin[d]));
      reached *= static_cast<double>(std::max<int64_t>(0, reach[d] - begin[d]));
    }
    if (size <= 0)
      continue;
    if (nearest) {
      double best = std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < m; ++j)
        best = std::min(best, nearestOnAxis(ra, orow, one, {atRow[j]}) + nearestOnAxis(ca, ocol, one, {atCol[j]}));
      hops += reached * best;
    } else {
      for (size_t j = 0; j < m; ++j) {
        w[j] = 1;
        for (size_t d = 0; d < dims; ++d)
          w[j] *= static_cast<double>(std::max<int64_t>(
              0, std::min(reach[d], partRange[j][d].second) - std::max(begin[d], partRange[j][d].first)));
      }
      hops += nearestOnAxis(ra, orow, w, atRow) + nearestOnAxis(ca, ocol, w, atCol);
    }
    words += size;
    moved += reached;
  }
  if (words <= 0)
    return {};
  return {hops / words, moved / words};
}

PieceHops meshPieceHops(const std::vector<MeshStack> &stacks, int64_t rows, int64_t cols,
                        const std::vector<std::pair<int64_t, int64_t>> &channels, bool fromEveryChannel) {
  // A solve analyses thousands of schedules with the same few node splits:
  // remembered per thread, forgotten wholesale past kRemembered.
  // The key is built in place and hashed (a look-up allocates nothing: the
  // analysis asks several times per candidate scored).
  constexpr size_t kRemembered = 4096;
  thread_local std::vector<int64_t> key;
  key.assign({rows, cols, fromEveryChannel, static_cast<int64_t>(channels.size())});
  for (const auto &[r, c] : channels) {
    key.push_back(r);
    key.push_back(c);
  }
  for (const MeshStack &s : stacks)
    key.push_back(s.repl * 4 + (s.row ? 2 : 0) + (s.shared ? 1 : 0));
  thread_local std::unordered_map<std::vector<int64_t>, PieceHops, IntVectorHash> remembered;
  if (auto it = remembered.find(key); it != remembered.end())
    return it->second;
  if (remembered.size() >= kRemembered)
    remembered.clear();
  PieceHops h = computePieceHops(stacks, rows, cols, channels, fromEveryChannel);
  remembered.emplace(key, h);
  return h;
}

bool stacksFit(const std::vector<int64_t> &repls, int64_t rows, int64_t cols, int64_t allowed) {
  int64_t total = 1;
  for (int64_t r : repls)
    total *= r;
  return total <= allowed && firstRowSplit(repls, rows, cols).has_value();
}

} // namespace dfl
