// How long `dflc check` takes on a complete schedule of every stdlib network:
// the front end (parse, imports, sema) and the directive analysis (validation
// plus cost model), measured side by side in one run. Both run through the
// driver (driver/Compilation.h), exactly as `dflc check` runs them; its stage
// timer gives the times (front end = load + analyze, analysis = check).
//
// Usage: dflc_check_bench SCHEDULE.dfl...   (bench/run_check_bench.sh makes them)
#include "driver/Compilation.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace dfl;

namespace {

struct Timing {
  double frontendMs = 0, analysisMs = 0;
  size_t layers = 0;
  bool valid = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Timing measure(const std::string &path, int reps) {
  std::vector<double> fe, an;
  Timing t;
  for (int i = 0; i < reps; ++i) {
    driver::DriverOptions o;
    o.files = {path};
    driver::Compilation c(o);
    if (!(c.load() && c.analyze()))
      return t;
    c.checkSchedules();   // an invalid schedule is timed too (valid: NO)
    if (c.checked().empty())
      return t;
    fe.push_back(1000 * (c.timer().seconds("load") + c.timer().seconds("analyze")));
    an.push_back(1000 * c.timer().seconds("check"));
    const ScheduleResult &r = c.checked()[0].result;
    t.layers = r.layers.size();
    t.valid = r.valid && r.complete;
  }
  t.frontendMs = median(fe);
  t.analysisMs = median(an);
  return t;
}

} // namespace

int main(int argc, char **argv) {
  // Every argument a schedule's path: an option (--help) gets the usage.
  const bool help = argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h");
  if (argc < 2 || std::any_of(argv + 1, argv + argc, [](const char *a) { return a[0] == '-'; })) {
    std::fprintf(help ? stdout : stderr, "usage: %s SCHEDULE.dfl...\n", argv[0]);
    return help ? 0 : 2;
  }
  const int reps = 21;
  std::printf("%-36s %7s %6s %14s %14s %16s %10s\n", "schedule", "layers", "valid", "front end [ms]",
              "analysis [ms]", "analysis/layer", "an/fe");
  for (int i = 1; i < argc; ++i) {
    Timing t = measure(argv[i], reps);
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    std::printf("%-36s %7zu %6s %14.3f %14.3f %13.1f us %10.2f\n", name.c_str(), t.layers, t.valid ? "yes" : "NO",
                t.frontendMs, t.analysisMs, t.layers ? t.analysisMs * 1000 / static_cast<double>(t.layers) : 0,
                t.frontendMs > 0 ? t.analysisMs / t.frontendMs : 0);
  }
  std::printf("(median of %d runs each; front end = read, parse, resolve imports, sema)\n", reps);
  return 0;
}
