// The intrinsic-embedding benchmark (docs/benchmarks.md, "Intrinsic
// embedding"): every DeepBench inference-server convolution embedded into
// every intrinsic a DFL file declares, against the padded static template
// (TVM's VTA conv2d: i <- n, j <- k, k <- c, each padded to whole tiles; the
// paper's §5.1 and §6 baseline). Per problem: found, solve time, search
// nodes, the intrinsic's MAC utilization and the tensors' footprint (in
// elements, as §4.4 counts data) of both. The convolutions are built here
// as loop nests with per-axis stride and padding, in the form sema gives a
// conv (frontend/NetworkSema.cpp): dims xo, yo, r, s, n, k, c.
//
// Usage: dflc_embed_bench DEEPBENCH.csv INTRINSICS.dfl   (bench/run_embed_bench.sh)
#include "driver/Compilation.h"
#include "scheduler/embedding/IntrinsicEmbedding.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace dfl;

namespace {

struct Problem {
  int64_t w, h, c, n, k, fw, fh, pw, ph, sw, sh;
  int64_t xo() const { return (w + 2 * pw - fw) / sw + 1; }
  int64_t yo() const { return (h + 2 * ph - fh) / sh + 1; }
};

LoopNest convNest(const Problem &p) {
  LoopNest nest;
  nest.name = "conv";
  AffineExpr xo = nest.addDim("xo", p.xo(), {Dim::Xo}), yo = nest.addDim("yo", p.yo(), {Dim::Yo});
  AffineExpr r = nest.addDim("r", p.fw, {Dim::R}), s = nest.addDim("s", p.fh, {Dim::S});
  AffineExpr n = nest.addDim("n", p.n, {Dim::N});
  AffineExpr k = nest.addDim("k", p.k, {Dim::K}), c = nest.addDim("c", p.c, {Dim::C});
  nest.accesses.push_back({TensorRole::Ifm, "x", {n, c, xo * p.sw + r - p.pw, yo * p.sh + s - p.ph}, {p.n, p.c, p.w, p.h}, {}});
  nest.accesses.push_back({TensorRole::Wgt, "w", {k, c, r, s}, {p.k, p.c, p.fw, p.fh}, {}});
  nest.accesses.push_back({TensorRole::Ofm, "y", {n, k, xo, yo}, {p.n, p.k, p.xo(), p.yo()}, {}});
  return nest;
}

int64_t up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

/// The static template's MACs and footprint: batch, output and input
/// channels padded to the intrinsic's i, j and k.
struct Template {
  int64_t macs, data;
};
Template staticTemplate(const Problem &p, const LoopNest &in) {
  const int64_t i = in.dims[0].extent, j = in.dims[1].extent, k = in.dims[2].extent;
  const int64_t N = up(p.n, i), K = up(p.k, j), C = up(p.c, k);
  return {N * K * C * p.xo() * p.yo() * p.fw * p.fh, N * C * p.w * p.h + K * C * p.fw * p.fh + N * K * p.xo() * p.yo()};
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DEEPBENCH.csv INTRINSICS.dfl\n", argv[0]);
    return 2;
  }
  std::ifstream csv(argv[1]);
  std::vector<Problem> problems;
  for (std::string line; std::getline(csv, line);) {
    if (line.empty() || line[0] == '#' || line[0] == 'w')
      continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream is(line);
    Problem p{};
    if (is >> p.w >> p.h >> p.c >> p.n >> p.k >> p.fw >> p.fh >> p.pw >> p.ph >> p.sw >> p.sh)
      problems.push_back(p);
  }
  driver::DriverOptions o;
  o.files = {argv[2]};
  driver::Compilation c(o);
  if (!(c.load() && c.analyze()) || c.model().intrinsics.empty() || problems.empty()) {
    std::fprintf(stderr, "%s: no problems in %s or no intrinsics in %s\n", argv[0], argv[1], argv[2]);
    return 1;
  }
  std::printf("| # | W x H, C -> K, N | filter / stride / pad | intrinsic | found | model | ms | nodes | "
              "util | util (template) | data (k elements) | data (template) |\n");
  std::printf("| ---: | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Intrinsic &in : c.model().intrinsics) {
    if (in.nest.dims.size() != 3)
      continue;   // the template maps a three-dim GEMM only
    size_t found = 0;
    double maxMs = 0, logGain = 0, logData = 0;
    uint64_t maxNodes = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
      const Problem &p = problems[i];
      LoopNest nest = convNest(p);
      EmbeddingResult r = embedIntrinsic(nest, in.nest);
      Template t = staticTemplate(p, in.nest);
      const double tUtil = static_cast<double>(nest.points()) / static_cast<double>(t.macs);
      maxMs = std::max(maxMs, r.stats.milliseconds);
      maxNodes = std::max(maxNodes, r.stats.nodes);
      std::string util = "-", data = "-", model = "-";
      if (!r.candidates.empty()) {
        const Embedding &e = r.candidates[0];
        ++found;
        logGain += std::log(e.utilization() / tUtil);
        logData += std::log(static_cast<double>(e.data) / static_cast<double>(t.data));
        char b[64];
        std::snprintf(b, sizeof b, "%.3f", e.utilization());
        util = b;
        std::snprintf(b, sizeof b, "%.1f", static_cast<double>(e.data) / 1000);
        data = b;
        model = embeddingModelName(e.model);
      }
      std::printf("| %zu | %lldx%lld, %lld -> %lld, %lld | %lldx%lld / %lld,%lld / %lld,%lld | %s | %s | %s | %.1f | %llu | "
                  "%s | %.3f | %s | %.1f |\n",
                  i + 1, static_cast<long long>(p.w), static_cast<long long>(p.h), static_cast<long long>(p.c),
                  static_cast<long long>(p.k), static_cast<long long>(p.n), static_cast<long long>(p.fw),
                  static_cast<long long>(p.fh), static_cast<long long>(p.sw), static_cast<long long>(p.sh),
                  static_cast<long long>(p.pw), static_cast<long long>(p.ph), in.name.c_str(),
                  r.candidates.empty() ? "no" : "yes", model.c_str(), r.stats.milliseconds,
                  static_cast<unsigned long long>(r.stats.nodes), util.c_str(), tUtil, data.c_str(),
                  static_cast<double>(t.data) / 1000);
    }
    std::fprintf(stderr,
                 "%s: %zu of %zu embedded; slowest %.1f ms, most nodes %llu; geometric mean utilization gain over "
                 "the padded template %.3fx, footprint %.3fx\n",
                 in.name.c_str(), found, problems.size(), maxMs, static_cast<unsigned long long>(maxNodes),
                 found ? std::exp(logGain / static_cast<double>(found)) : 0.0,
                 found ? std::exp(logData / static_cast<double>(found)) : 0.0);
  }
  return 0;
}
