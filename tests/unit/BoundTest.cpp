// The exhaustive search's bound (docs/solver.md, "The exhaustive yardstick"):
// a layer's energy is its MACs, their level-0 accesses and one term per
// boundary l/l+1 (LevelResult::boundaryEnergyPj), each >= 0 and a function of
// the directives of levels >= l only. Checked on stdlib layers of every kind:
// for valid complete plans, replacing the levels below m by other valid
// completions leaves every term b >= m unchanged.
#include "scheduler/kapla/IntraLayerSolver.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "frontend/Loader.h"
#include "frontend/Sema.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

using namespace dfl;

namespace {

struct Loaded {
  std::unique_ptr<SourceManager> sm = std::make_unique<SourceManager>();
  std::unique_ptr<DiagnosticsEngine> diags = std::make_unique<DiagnosticsEngine>(*sm);
  Model model;
};

std::unique_ptr<Loaded> load(const std::string &net, const std::string &hw, int64_t batch, bool training) {
  auto l = std::make_unique<Loaded>();
  const std::string &root = dfl::test::kStdlibRoot;
  LoadedFiles files = loadFiles({root + "/stdlib/nets/" + net + ".dfl", root + "/stdlib/hw/" + hw + ".dfl"},
                                LoadOptions{{root}}, *l->sm, *l->diags);
  l->model = analyze(files.files, *l->diags, AnalyzeOptions{training, batch});
  EXPECT_FALSE(l->diags->hasErrors()) << net << " on " << hw;
  return l;
}

/// Levels below m replaced by 1-element tiles without stacks; level m-1
/// steps through level m's tile one element at a time, its updates in the
/// given order of the independent dims (or reversed).
LayerScheduleModel completeBelow(const Layer &layer, const LayerScheduleModel &plan, const LevelResult &levelM, int m,
                                 bool reversed) {
  LayerScheduleModel s = plan;
  std::vector<Dim> dims(std::begin(kIndependentDims), std::end(kIndependentDims));
  if (reversed)
    std::reverse(dims.begin(), dims.end());
  for (LevelDirectives &d : s.levels) {
    const int level = d.level;
    if (level >= m)
      continue;
    d = LevelDirectives{};
    d.level = level;
    for (TensorRole r : layer.roles())
      d.tensors.push_back(TensorDirective{r, {}, 1, {}});   // unlisted dims have size 1
    if (level != m - 1)
      continue;
    for (Dim dim : dims) {
      if (at(levelM.extent, dim) <= 1 || (layer.channelWise() && dim == Dim::K))
        continue;
      UpdateDirective u;
      u.steps = {{dim, 1}};
      if (dim == Dim::Xo || dim == Dim::Yo)
        u.steps.push_back({dim == Dim::Xo ? Dim::Xi : Dim::Yi, layer.window.along(dim).stride});
      if (dim == Dim::R || dim == Dim::S)
        u.steps.push_back({dim == Dim::R ? Dim::Xi : Dim::Yi, layer.window.along(dim).dilation});
      d.updates.push_back(u);
    }
  }
  return s;
}

double near(double a) { return 1e-9 * std::max(1.0, std::abs(a)); }

/// Valid complete plans of a layer: KAPLA's, random samples, and the best of a
/// short unseeded exhaustive run (different corners of the space).
std::vector<LayerScheduleModel> plansFor(const Network &net, int layer, const Hardware &hw) {
  std::vector<LayerScheduleModel> plans;
  auto add = [&](IntraLayerOptions o) {
    IntraLayerStats stats;
    SolveFailure why;
    if (auto sol = solveLayer(net, layer, hw, nullptr, o, stats, why))
      plans.push_back(sol->schedule);
  };
  add({});
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    IntraLayerOptions o;
    o.search = IntraLayerSearch::Random;
    o.maxCandidates = 600;   // uneven tiles make the random space larger, its fitting share smaller
    o.seed = seed;
    add(o);
  }
  IntraLayerOptions o;
  o.search = IntraLayerSearch::Exhaustive;
  o.maxCandidates = 1500;
  o.seedWithKapla = false;
  add(o);
  return plans;
}


/// Checks the claim on one kind of each layer of a model's network; returns
/// how many (plan, m, completion) were checked and how many changed a term below m.
std::pair<int, int> checkModel(const Model &model, const std::string &what) {
  const Network &net = model.networks[0];
  const Hardware &hw = model.hardware[0];
  const size_t nl = hw.levels.size();
  int checked = 0, changedBelow = 0;
  // One layer of each kind: type, channel-wise, which tensor it produces.
  std::set<std::tuple<LayerType, bool, TensorRole>> kinds;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer &layer = net.layers[i];
    if (!kinds.insert({layer.type, layer.channelWise(), layer.output}).second)
      continue;
    const std::string where = what + " " + layer.name;
    for (const LayerScheduleModel &plan : plansFor(net, static_cast<int>(i), hw)) {
      std::vector<Issue> issues;
      LayerResult full = analyzeLayer(net, static_cast<int>(i), hw, &plan, issues);
      EXPECT_TRUE(full.valid && full.complete) << where;
      if (!full.valid || !full.complete)
        continue;
      // The terms add up to the energy: MACs, their level-0 accesses, the boundaries.
      const double operands = layer.type == LayerType::Add || layer.type == LayerType::Mul
                                  ? static_cast<double>(layer.ifmOperands().size())
                                  : 1.0;
      // Static energy depends on the latency, not on one boundary: it is its own term.
      double macReads = 0, macWrites = 0;
      for (TensorRole r : layer.roles()) {
        macReads += full.work * (r == TensorRole::Ifm && r != layer.output ? operands : 1.0);
        macWrites += r == layer.output ? full.work : 0.0;
      }
      double sum = full.energyMacPj + macReads * hw.levels[0].readEnergyPj +
                   macWrites * hw.levels[0].writeEnergyPj + full.energyStaticPj;
      for (size_t b = 0; b + 1 < nl; ++b) {
        EXPECT_GE(full.levels[b].boundaryEnergyPj, 0) << where << " boundary " << b;
        sum += full.levels[b].boundaryEnergyPj;
      }
      EXPECT_NEAR(sum, full.energyPj, near(full.energyPj)) << where;
      for (int m = 1; m + 1 < static_cast<int>(nl); ++m)
        for (bool reversed : {false, true}) {
          LayerScheduleModel other = completeBelow(layer, plan, full.levels[m], m, reversed);
          std::vector<Issue> otherIssues;
          LayerResult alt = analyzeLayer(net, static_cast<int>(i), hw, &other, otherIssues);
          EXPECT_TRUE(alt.valid && alt.complete) << where << " completed below " << m;
          if (!alt.valid || !alt.complete)
            continue;
          for (size_t b = static_cast<size_t>(m); b + 1 < nl; ++b)
            EXPECT_NEAR(alt.levels[b].boundaryEnergyPj, full.levels[b].boundaryEnergyPj,
                        near(full.levels[b].boundaryEnergyPj))
                << where << " boundary " << b << " with the levels below " << m << " replaced";
          // Hence the bound: the completion's energy less its terms below m is
          // the plan's energy less the plan's terms below m, and below it.
          // Static energy follows the latency, which every level sets: it is
          // left out of the bound (a lower bound still, as it is never negative).
          double boundAlt = alt.energyPj - alt.energyStaticPj, boundFull = full.energyPj - full.energyStaticPj;
          for (int b = 0; b < m; ++b) {
            boundAlt -= alt.levels[b].boundaryEnergyPj;
            boundFull -= full.levels[b].boundaryEnergyPj;
            changedBelow += std::abs(alt.levels[b].boundaryEnergyPj - full.levels[b].boundaryEnergyPj) >
                            near(full.levels[b].boundaryEnergyPj);
          }
          EXPECT_NEAR(boundAlt, boundFull, near(full.energyPj)) << where;
          EXPECT_LE(boundFull, full.energyPj * (1 + 1e-12)) << where;
          ++checked;
        }
    }
  }
  return {checked, changedBelow};
}

} // namespace

TEST(Bound, BoundaryTermsDependOnlyOnTheLevelsAbove) {
  struct Case {
    const char *net, *hw;
    int64_t batch;
    bool training;
  };
  // conv, pool, FC (alexnet); depthwise (mobilenet); add (resnet18); backward
  // layers, data and weight gradients (mlp, alexnet training).
  const Case cases[] = {{"alexnet", "eyeriss_multinode", 4, false}, {"alexnet", "edge_systolic", 1, false},
                        {"mobilenet", "eyeriss_multinode", 2, false}, {"mobilenet", "edge_systolic", 1, false},
                        {"resnet18", "eyeriss_multinode", 2, false},  {"mlp", "eyeriss_multinode", 8, true},
                        {"alexnet", "eyeriss_multinode", 2, true}};
  int checked = 0, changedBelow = 0;
  for (const Case &c : cases) {
    auto l = load(c.net, c.hw, c.batch, c.training);
    auto [n, changed] = checkModel(l->model, std::string(c.net) + " on " + c.hw);
    checked += n;
    changedBelow += changed;
  }
  EXPECT_GE(checked, 100);
  EXPECT_GT(changedBelow, checked / 2);   // the replacements do change what lies below m
}

// Four levels, so that m = 2 is checked too (the stdlib templates have three).
TEST(Bound, FourLevels) {
  auto c = dfl::test::compile(R"(network n {
  batch N = 4;
  input x [C=8, X=6, Y=6];
  a = conv(x, K=8, R=3, pad=1);
  p = maxpool(a, R=2, stride=2);
  d = dwconv(p, R=3, pad=1);
  f = fc(d, K=10);
}
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 32 B; array = 2 x 2; access_energy = 1 pJ; transfer = multicast, systolic; }
  level LBUF { capacity = 512 B; array = 2; access_energy = 3 pJ; transfer = multicast; }
  level GBUF { capacity = 8 KiB; array = 2 x 2; access_energy = 6 pJ; transfer = multicast, sharing; }
  level DRAM { access_energy = 200 pJ; bandwidth = 8 B/cycle; }
  noc { hop_energy = 2 pJ; topology = mesh; }
}
)");
  ASSERT_EQ(c.diagnostics(), "");
  auto [checked, changedBelow] = checkModel(c.model, "four levels");
  EXPECT_GE(checked, 30);
  EXPECT_GT(changedBelow, 0);
}
