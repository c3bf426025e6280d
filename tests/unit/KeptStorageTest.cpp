// The descents' candidate analysis keeps its storage from one plan to the
// next (docs/solver.md, "Speed"): the directives are written over those of
// the plan before (TilingSpace::directivesInto) and the layer analysis reuses
// its buffers per thread. Checked on random plans of stdlib layers: the
// directives written into one reused level equal the fresh ones, and every
// analysis equals the same analysis made after other plans' (in reverse
// order, and on the reused schedule) and made with its window sums
// enumerated rather than read from their memo.
#include "scheduler/kapla/TilingSpace.h"
#include "scheduler/kapla/IntraLayerSolver.h"
#include "scheduler/analysis/LayerAnalysis.h"
#include "model/ScheduleWriter.h"
#include "frontend/Loader.h"
#include "frontend/Sema.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

using namespace dfl;
using intra::Plan;
using intra::TilingSpace;

namespace {

struct Loaded {
  std::unique_ptr<SourceManager> sm = std::make_unique<SourceManager>();
  std::unique_ptr<DiagnosticsEngine> diags = std::make_unique<DiagnosticsEngine>(*sm);
  Model model;
};

std::unique_ptr<Loaded> load(const std::string &net, const std::string &hw, int64_t batch) {
  auto l = std::make_unique<Loaded>();
  const std::string &root = dfl::test::kStdlibRoot;
  LoadedFiles files = loadFiles({root + "/stdlib/nets/" + net + ".dfl", root + "/stdlib/hw/" + hw + ".dfl"},
                                LoadOptions{{root}}, *l->sm, *l->diags);
  l->model = analyze(files.files, *l->diags, AnalyzeOptions{false, batch});
  EXPECT_FALSE(l->diags->hasErrors()) << net << " on " << hw;
  return l;
}

/// A plan of random tiles (a divisor-like size up to the dim's bound, or
/// the whole), stack factors 1-4 and loop orders: valid or not, as a
/// descent's candidates are.
Plan randomPlan(const Layer &layer, size_t levels, std::mt19937_64 &rng) {
  Plan p;
  p.levels.resize(levels);
  for (auto &lp : p.levels) {
    for (size_t i = 0; i < intra::kND; ++i) {
      const int64_t bound = std::max<int64_t>(1, at(layer.bounds, kIndependentDims[i]));
      lp.tile[i] = rng() % 3 == 0 ? bound : 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(bound));
      lp.repl[i] = 1 + static_cast<int64_t>(rng() % 4);
    }
    lp.order = rng() % intra::loopOrders().size();
  }
  return p;
}

/// What a descent reads of an analysis, and its issues, exactly.
std::string summary(const LayerResult &r, const std::vector<Issue> &issues) {
  char buf[128];
  std::string s = std::to_string(r.valid) + std::to_string(r.complete) + std::to_string(r.exactCounts);
  std::snprintf(buf, sizeof buf, " %a %a %a", r.energyPj, r.latencyCycles, r.hops);
  s += buf;
  for (const LevelResult &lr : r.levels) {
    s += " | " + std::to_string(lr.units) + " " + std::to_string(lr.occupancyBytes);
    for (size_t i = 0; i < kNumRoles; ++i) {
      std::snprintf(buf, sizeof buf, " %a/%a", lr.accesses.reads[i], lr.accesses.writes[i]);
      s += buf;
    }
    for (int64_t t : lr.trips)
      s += " t" + std::to_string(t);
  }
  for (const Issue &i : issues)
    s += " E" + std::to_string(static_cast<int>(i.id));
  return s;
}

std::string text(const LayerScheduleModel &s) {
  std::string t;
  for (const LevelDirectives &d : s.levels)
    t += std::to_string(d.level) + ": " + joinList(printDirectives(d), " ", " ") + "\n";
  return t;
}

void checkNetwork(const std::string &net, const std::string &hwName) {
  auto l = load(net, hwName, 4);
  const Network &network = l->model.networks[0];
  const Hardware &hw = l->model.hardware[0];
  std::mt19937_64 rng(36);
  int full = 0;
  for (size_t i = 0; i < network.layers.size(); i += 3) {
    const TilingSpace space(network, static_cast<int>(i), hw, nullptr, IntraLayerOptions{});
    std::vector<LayerScheduleModel> fresh;
    LayerScheduleModel reused;   // written over, plan after plan
    std::vector<std::string> inOrder;
    // A solved plan among the random ones: its analysis runs to the end.
    IntraLayerStats stats;
    SolveFailure why;
    if (auto sol = solveLayer(network, static_cast<int>(i), hw, nullptr, IntraLayerOptions{}, stats, why)) {
      fresh.push_back(sol->schedule);
      // Its loops in other orders: the same tiles, other loops sliding.
      for (size_t m = 0; m < sol->schedule.levels.size(); ++m)
        for (size_t k = 1; k < sol->schedule.levels[m].updates.size(); ++k) {
          LayerScheduleModel s = sol->schedule;
          std::vector<UpdateDirective> &u = s.levels[m].updates;
          std::rotate(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(k), u.end());
          fresh.push_back(std::move(s));
        }
    }
    for (int k = 0; k < 40; ++k) {
      const Plan p = randomPlan(network.layers[i], hw.levels.size() - 1, rng);
      LayerScheduleModel s;
      reused.levels.resize(p.levels.size());
      for (size_t m = 0; m < p.levels.size(); ++m) {
        s.levels.push_back(space.directivesFor(p, m));
        space.directivesInto(p, m, reused.levels[m]);
      }
      ASSERT_EQ(text(reused), text(s)) << net << " layer " << i << " plan " << k;
      std::vector<Issue> a, b;
      EXPECT_EQ(summary(analyzeLayer(network, static_cast<int>(i), hw, &reused, a), a),
                summary(analyzeLayer(network, static_cast<int>(i), hw, &s, b), b));
      fresh.push_back(std::move(s));
    }
    for (const LayerScheduleModel &s : fresh) {
      std::vector<Issue> issues;
      inOrder.push_back(summary(analyzeLayer(network, static_cast<int>(i), hw, &s, issues), issues));
      full += inOrder.back()[0] == '1';
    }
    for (size_t k = fresh.size(); k-- > 0;) {
      std::vector<Issue> issues;
      EXPECT_EQ(summary(analyzeLayer(network, static_cast<int>(i), hw, &fresh[k], issues), issues), inOrder[k])
          << net << " layer " << i << " plan " << k << " analysed after another";
    }
    // The window sums kept by what they read: as enumerated afresh.
    const FreshWindowSums enumerated;
    for (size_t k = 0; k < fresh.size(); ++k) {
      std::vector<Issue> issues;
      EXPECT_EQ(summary(analyzeLayer(network, static_cast<int>(i), hw, &fresh[k], issues), issues), inOrder[k])
          << net << " layer " << i << " plan " << k << " with its window sums enumerated";
    }
  }
  EXPECT_GT(full, 0) << net << ": some analyses ran to the end";
}

} // namespace

TEST(KeptStorage, DirectivesAndAnalysesAsFresh) {
  checkNetwork("resnet50", "eyeriss_multinode");
  checkNetwork("mobilenet_v2", "edge_systolic");
}
