// KAPLA vs. the exhaustive yardstick, side by side in one run (issue 4's table):
// for each network x setting, the energy each finds, KAPLA's overhead, both
// solve times and the speedup; for comparison, the random solver's energy and
// KAPLA's without spatially pipelined segments ("no-spat"). Exhaustive is a
// branch and bound capped per layer (CAP candidates scored); each row says in
// how many layers it finished (proved its schedule optimal) and in how many it
// was capped (then it returns the best found, never worse than KAPLA's).
//
// Usage: dflc_solver_bench [CAP] [--net NAME] [--setting TEXT] [--kapla-only]
//   (run from the source root). --net / --setting run only the rows whose
//   network is NAME / whose setting contains TEXT (e.g. "train"); --kapla-only
//   skips the other solvers (their columns print "-"), for quick before/after
//   comparisons of the KAPLA column and its solve time.
//        dflc_solver_bench --layers NET HW BATCH infer|train CAP
//   per layer of stdlib/nets/NET.dfl on stdlib/hw/HW.dfl: KAPLA's and the
//   exhaustive search's energy, whether it proved optimality, its lower bound
//   and the gap to it, candidates, time.
//        dflc_solver_bench --exact [CAP] [--net NAME] [--setting TEXT] [--gap P]
//   the exact search (docs/solver.md, "The exact search") on each distinct
//   layer shape of the networks, alone on all nodes, on eyeriss_multinode and
//   edge_systolic at batch 1 and 64 (inference), at most CAP work per layer
//   (analyses, 64 steps of the enumeration counting as one; default 30000,
//   under 10 s a layer on the loaded 2-core machine but for the largest):
//   per network and setting, layers proved / total, time per
//   layer (max, median), KAPLA's distance from the optimum over the proved
//   layers (average, worst) and, over all, the most it can be (KAPLA over the
//   lower bound) and the gap left (the best found over the lower bound).
//   With --gap P (percent) the search cuts what cannot beat its best by more
//   than P % (IntraLayerOptions::gap) and a column counts the layers it
//   proved within P % of the optimum.
#include "driver/Compilation.h"
#include "scheduler/kapla/InterLayerSolver.h"
#include "scheduler/kapla/IntraLayerSolver.h"
#include "scheduler/kapla/Solver.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace dfl;

namespace {

struct Setting {
  const char *name;
  const char *hardware;
  int64_t batch;
  bool training;
};

/// The network and hardware, loaded by the driver as `dflc compile --batch`
/// loads them.
std::optional<Model> load(const std::string &net, const std::string &hw, int64_t batch, bool training) {
  driver::DriverOptions o;
  o.files = {net, hw};
  o.train = training;
  o.batch = batch;
  driver::Compilation c(o);
  if (!(c.load() && c.analyze()) || c.model().networks.size() != 1 || c.model().hardware.size() != 1)
    return std::nullopt;
  return c.model();
}

/// The per-layer view of the yardstick (layers alone on all nodes).
int perLayer(const std::string &net, const std::string &hw, int64_t batch, bool training, int64_t cap) {
  auto model = load("stdlib/nets/" + net + ".dfl", "stdlib/hw/" + hw + ".dfl", batch, training);
  if (!model) {
    std::printf("cannot load %s on %s\n", net.c_str(), hw.c_str());
    return 1;
  }
  const Network &n = model->networks[0];
  std::printf("%-24s %12s %12s %8s %7s %12s %8s %10s %10s %11s %8s\n", "layer", "KAPLA [uJ]", "exhaust [uJ]", "gain",
              "proved", "bound [uJ]", "gap", "candidates", "cut", "steps", "time [s]");
  int proved = 0;
  double seconds = 0;
  for (size_t i = 0; i < n.layers.size(); ++i) {
    IntraLayerOptions o;
    IntraLayerStats ks, es;
    SolveFailure why;
    auto k = solveLayer(n, static_cast<int>(i), model->hardware[0], nullptr, o, ks, why);
    o.search = IntraLayerSearch::Exhaustive;
    o.maxCandidates = cap;
    auto t0 = std::chrono::steady_clock::now();
    auto e = solveLayer(n, static_cast<int>(i), model->hardware[0], nullptr, o, es, why);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    seconds += s;
    proved += es.provedOptimal ? 1 : 0;
    double ke = k ? k->result.energyPj / 1e6 : 0, ee = e ? e->result.energyPj / 1e6 : 0;
    const double lb = es.lowerBoundPj / 1e6;
    std::printf("%-24s %12.3f %12.3f %7.2f%% %7s %12.3f %7.2f%% %10lld %10lld %11lld %8.2f\n", n.layers[i].name.c_str(),
                ke, ee, ke > 0 && ee > 0 ? (1 - ee / ke) * 100 : 0.0, es.provedOptimal ? "yes" : "no", lb,
                lb > 0 ? (ee / lb - 1) * 100 : 0.0, static_cast<long long>(es.candidates),
                static_cast<long long>(es.prunedByBound), static_cast<long long>(es.enumerated), s);
    std::fflush(stdout);
  }
  std::printf("exhaustive proved optimal in %d/%zu layers, %.1f s\n", proved, n.layers.size(), seconds);
  return 0;
}

/// One network on one setting under the exact search: a row of the --exact table.
struct ExactRow {
  int proved = 0, within = 0, shapes = 0;
  std::vector<double> seconds;
  std::vector<double> provedDistance;   // KAPLA / optimum - 1, proved layers
  std::vector<double> mostDistance;     // KAPLA / lower bound - 1, every layer
  std::vector<double> gap;              // best found / lower bound - 1, every layer
};

double mean(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double worst(const std::vector<double> &v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

ExactRow exactRow(const Network &n, const Hardware &hw, int64_t cap, double gap) {
  ExactRow row;
  std::vector<std::string> seen;
  for (size_t i = 0; i < n.layers.size(); ++i) {
    const std::string key = shapeKey(n.layers[i]);
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      continue;
    seen.push_back(key);
    IntraLayerOptions o;
    IntraLayerStats ks, es;
    SolveFailure why;
    auto k = solveLayer(n, static_cast<int>(i), hw, nullptr, o, ks, why);
    o.search = IntraLayerSearch::Exhaustive;
    o.maxCandidates = cap;
    o.gap = gap;
    auto t0 = std::chrono::steady_clock::now();
    auto e = solveLayer(n, static_cast<int>(i), hw, nullptr, o, es, why);
    row.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ++row.shapes;
    if (!k || !e)
      continue;
    const double kapla = k->result.energyPj, best = e->result.energyPj, bound = es.lowerBoundPj;
    if (es.provedOptimal) {
      ++row.proved;
      row.provedDistance.push_back(kapla / best - 1);
    }
    row.within += es.provedWithinGap && bound > 0 ? 1 : 0;
    if (bound > 0) {
      row.mostDistance.push_back(kapla / bound - 1);
      row.gap.push_back(best / bound - 1);
    }
  }
  return row;
}

/// The exact search over the distinct layer shapes (the --exact table).
int exactTable(int64_t cap, double gap, const std::string &onlyNet, const std::string &onlySetting) {
  const char *nets[] = {"alexnet", "vgg16", "googlenet", "resnet50", "mobilenet", "mlp", "lstm"};
  const Setting settings[] = {{"multi-node b1", "eyeriss_multinode", 1, false},
                              {"multi-node b64", "eyeriss_multinode", 64, false},
                              {"edge b1", "edge_systolic", 1, false},
                              {"edge b64", "edge_systolic", 64, false}};
  std::printf("%-10s %-15s %8s %9s %9s %10s %10s %10s %10s %10s%s\n", "network", "setting", "proved", "max [s]",
              "median[s]", "dist avg", "dist worst", "most avg", "most worst", "gap median", gap > 0 ? "   within" : "");
  int proved = 0, within = 0, shapes = 0, quick = 0;
  for (const Setting &st : settings)
    for (const char *net : nets) {
      if ((!onlyNet.empty() && onlyNet != net) ||
          (!onlySetting.empty() && std::string(st.name).find(onlySetting) == std::string::npos))
        continue;
      auto model = load(std::string("stdlib/nets/") + net + ".dfl", std::string("stdlib/hw/") + st.hardware + ".dfl",
                        st.batch, st.training);
      if (!model) {
        std::printf("%-10s %-15s cannot load\n", net, st.name);
        continue;
      }
      ExactRow r = exactRow(model->networks[0], model->hardware[0], cap, gap);
      proved += r.proved;
      within += r.within;
      shapes += r.shapes;
      for (double s : r.seconds)
        quick += s < 10 ? 1 : 0;
      std::printf("%-10s %-15s %4d/%-3d %9.2f %9.2f %9.2f%% %9.2f%% %9.2f%% %9.2f%% %9.2f%%", net, st.name, r.proved,
                  r.shapes, worst(r.seconds), median(r.seconds), 100 * mean(r.provedDistance),
                  100 * worst(r.provedDistance), 100 * mean(r.mostDistance), 100 * worst(r.mostDistance),
                  100 * median(r.gap));
      if (gap > 0)
        std::printf(" %4d/%-3d", r.within, r.shapes);
      std::printf("\n");
      std::fflush(stdout);
    }
  std::printf("proved %d/%d distinct layer shapes (%d of them solved in under 10 s); at most %lld analyses' work per "
              "layer\n",
              proved, shapes, quick, static_cast<long long>(cap));
  if (gap > 0)
    std::printf("proved within %g %% of the optimum: %d/%d (the search cut what could not beat its best by more)\n",
                100 * gap, within, shapes);
  std::printf("(dist: KAPLA / proved optimum - 1 over the proved layers; most: KAPLA / lower bound - 1, what KAPLA's "
              "distance can be at most, every layer; gap: best found / lower bound - 1)\n");
  return 0;
}

const char *kUsage =
    "usage: dflc_solver_bench [CAP] [--net NAME] [--setting TEXT] [--kapla-only]\n"
    "       dflc_solver_bench --layers NET HW BATCH infer|train CAP\n"
    "       dflc_solver_bench --exact [CAP] [--net NAME] [--setting TEXT] [--gap P]\n"
    "(run from the source root; the file's header says what each prints)\n";

/// A work limit: digits only, else the usage and exit 2 (`--help`: exit 0).
int64_t capOf(const std::string &arg) {
  if (arg.empty() || arg.find_first_not_of("0123456789") != std::string::npos) {
    const bool help = arg == "--help" || arg == "-h";
    std::fputs(kUsage, help ? stdout : stderr);
    std::exit(help ? 0 : 2);
  }
  return std::atoll(arg.c_str());
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 7 && std::string(argv[1]) == "--layers")
    return perLayer(argv[2], argv[3], std::atoll(argv[4]), std::string(argv[5]) == "train", std::atoll(argv[6]));
  if (argc >= 2 && std::string(argv[1]) == "--exact") {
    int64_t cap = 30000;
    std::string net, setting;
    double gap = 0;
    for (int a = 2; a < argc; ++a)
      if (std::string(argv[a]) == "--net" && a + 1 < argc)
        net = argv[++a];
      else if (std::string(argv[a]) == "--gap" && a + 1 < argc)
        gap = std::atof(argv[++a]) / 100;
      else if (std::string(argv[a]) == "--setting" && a + 1 < argc)
        setting = argv[++a];
      else
        cap = capOf(argv[a]);
    return exactTable(cap, gap, net, setting);
  }
  int64_t cap = 60000;   // about 7 minutes in all on the 2-core development machine
  std::string onlyNet, onlySetting;
  bool kaplaOnly = false;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--net" && a + 1 < argc)
      onlyNet = argv[++a];
    else if (arg == "--setting" && a + 1 < argc)
      onlySetting = argv[++a];
    else if (arg == "--kapla-only")
      kaplaOnly = true;
    else
      cap = capOf(arg);
  }
  const char *nets[] = {"alexnet", "vgg16", "googlenet", "resnet50", "mobilenet", "mlp", "lstm"};
  const Setting settings[] = {
      {"infer b64 multi-node", "eyeriss_multinode", 64, false},
      {"train b64 multi-node", "eyeriss_multinode", 64, true},
      {"infer b1 edge", "edge_systolic", 1, false},
  };
  std::printf("%-10s %-21s %12s %12s %12s %9s %9s %10s %8s %12s  %s\n", "network", "setting", "no-spat [mJ]",
              "KAPLA [mJ]", "exhaust [mJ]", "overhead", "KAPLA [s]", "exhaust [s]", "speedup", "random [mJ]", "note");
  double sumOverhead[3] = {0, 0, 0};
  double worst[3] = {0, 0, 0};
  int rows[3] = {0, 0, 0};
  for (size_t si = 0; si < 3; ++si) {
    const Setting &st = settings[si];
    if (!onlySetting.empty() && std::string(st.name).find(onlySetting) == std::string::npos)
      continue;
    for (const char *net : nets) {
      if (!onlyNet.empty() && onlyNet != net)
        continue;
      auto model = load(std::string("stdlib/nets/") + net + ".dfl", std::string("stdlib/hw/") + st.hardware + ".dfl",
                        st.batch, st.training);
      if (!model) {
        std::printf("%-10s %-21s cannot load\n", net, st.name);
        continue;
      }
      Schedule given;
      given.network = 0;
      given.hardware = 0;
      SolverOptions so;
      SolveFailure f1, f2;
      auto t0 = std::chrono::steady_clock::now();
      auto k = makeSolver("kapla")->solve(*model, given, so, f1);
      auto t1 = std::chrono::steady_clock::now();
      if (kaplaOnly) {
        if (k)
          std::printf("%-10s %-21s %12s %12.6f %12s %9s %9.3f %10s %8s %12s\n", net, st.name, "-",
                      k->result.energyPj / 1e9, "-", "-", std::chrono::duration<double>(t1 - t0).count(), "-", "-",
                      "-");
        else
          std::printf("%-10s %-21s no schedule: %s\n", net, st.name, f1.describe().c_str());
        std::fflush(stdout);
        continue;
      }
      // The exhaustive solver with this run's cap.
      auto ex = makeSolver("exhaustive", cap)->solve(*model, given, so, f2);
      auto t2 = std::chrono::steady_clock::now();
      SolveFailure f3, f4;
      auto rnd = makeSolver("random")->solve(*model, given, so, f3);
      // KAPLA without spatially pipelined segments (temporal segments only): what they add.
      SolverOptions temporalOnly = so;
      temporalOnly.spatial = false;
      auto kt = makeSolver("kapla")->solve(*model, given, temporalOnly, f4);
      if (!k || !ex) {
        std::printf("%-10s %-21s no schedule: %s%s\n", net, st.name, f1.describe().c_str(), f2.describe().c_str());
        continue;
      }
      double ks = std::chrono::duration<double>(t1 - t0).count(), es = std::chrono::duration<double>(t2 - t1).count();
      double over = (k->result.energyPj / ex->result.energyPj - 1) * 100;
      sumOverhead[si] += over;
      worst[si] = std::max(worst[si], over);
      ++rows[si];
      const size_t layers = model->networks[0].layers.size();
      std::string note = "exhaustive proved optimal in " + std::to_string(ex->stats.provedLayers) + "/" +
                         std::to_string(layers) + " layers, capped in " + std::to_string(ex->stats.cappedLayers);
      std::string random = rnd ? std::to_string(rnd->result.energyPj / 1e9).substr(0, 10) : "none found";
      std::printf("%-10s %-21s %12.3f %12.3f %12.3f %8.2f%% %9.3f %10.2f %7.0fx %12s  %s\n", net, st.name,
                  kt ? kt->result.energyPj / 1e9 : 0.0, k->result.energyPj / 1e9, ex->result.energyPj / 1e9, over, ks, es, es / ks, random.c_str(),
                  note.c_str());
      std::fflush(stdout);
    }
  }
  for (size_t si = 0; si < 3; ++si)
    if (rows[si])
      std::printf("%-21s average overhead %.2f%%, worst %.2f%% over %d networks\n", settings[si].name,
                  sumOverhead[si] / rows[si], worst[si], rows[si]);
  std::printf("(exhaustive: branch and bound, at most %lld candidates per layer; overhead = KAPLA / exhaustive - 1; "
              "negative: KAPLA's segment choice beat the yardstick's)\n",
              static_cast<long long>(cap));
  return 0;
}
