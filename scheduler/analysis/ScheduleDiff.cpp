#include "scheduler/analysis/ScheduleDiff.h"

#include "model/ScheduleWriter.h"
#include "scheduler/analysis/Report.h"
#include "support/Format.h"

#include <algorithm>
#include <sstream>

namespace dfl {
namespace {

std::string ratio(double a, double b) { return a > 0 ? formatFixed(b / a, 3) : "-"; }

const LayerScheduleModel *layerOf(const Schedule &s, int layer) {
  for (const LayerScheduleModel &l : s.layers)
    if (l.layer == layer)
      return &l;
  return nullptr;
}

const LevelDirectives *levelOf(const LayerScheduleModel *l, int level) {
  if (l)
    for (const LevelDirectives &d : l->levels)
      if (d.level == level)
        return &d;
  return nullptr;
}

/// A level block's directives, one a line (none if not written).
std::vector<std::string> lines(const LevelDirectives *d) { return d ? printDirectives(*d) : std::vector<std::string>{}; }

std::string segments(const Network &net, const Schedule &s) {
  std::string out;
  for (const Segment &seg : s.segments)
    out += (out.empty() ? "" : " | ") + printSegment(net, seg);
  return out.empty() ? "(every layer alone)" : out;
}

} // namespace

std::string scheduleDiffText(const Model &model, const Schedule &a, const ScheduleResult &ra, const std::string &labelA,
                             const Schedule &b, const ScheduleResult &rb, const std::string &labelB) {
  const Network &net = networkOf(model, a);
  const Hardware &hw = hardwareOf(model, a);
  std::ostringstream os;
  os << "diff of two schedules for " << net.name << " on " << hw.name << "\n  A: " << labelA << "\n  B: " << labelB
     << "\n\n";
  size_t nameW = 9;   // "component"
  for (const Layer &l : net.layers)
    nameW = std::max(nameW, l.name.size());
  EnergyUnit unit = energyUnitFor(std::max(ra.energyPj, rb.energyPj));
  auto e = [&](double pj) { return formatFixed(pj / unit.pj, 3); };
  const std::string u = std::string("[") + unit.name + "]";
  auto row = [&](const std::string &name, const std::vector<std::string> &cells) {
    os << padRight(name, nameW);
    for (size_t i = 0; i < cells.size(); ++i)
      os << "  " << padLeft(cells[i], i % 3 == 2 ? 6 : 12);
    os << "\n";
  };
  row("layer", {"energy A", "energy B", "B/A", "cycles A", "cycles B", "B/A"});
  row("", {u, u, "", "", "", ""});
  auto known = [](const LayerResult &lr) { return lr.complete && lr.valid && !lr.levels.empty(); };
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const LayerResult &la = ra.layers[i], &lb = rb.layers[i];
    if (!known(la) || !known(lb)) {
      row(net.layers[i].name, {known(la) ? e(la.energyPj) : "incomplete", known(lb) ? e(lb.energyPj) : "incomplete"});
      continue;
    }
    row(net.layers[i].name, {e(la.energyPj), e(lb.energyPj), ratio(la.energyPj, lb.energyPj),
                             formatFixed(la.latencyCycles, 0), formatFixed(lb.latencyCycles, 0),
                             ratio(la.latencyCycles, lb.latencyCycles)});
  }
  const bool totals = ra.complete && ra.valid && rb.complete && rb.valid;
  if (totals) {
    row("total", {e(ra.energyPj), e(rb.energyPj), ratio(ra.energyPj, rb.energyPj), formatFixed(ra.latencyCycles, 0),
                  formatFixed(rb.latencyCycles, 0), ratio(ra.latencyCycles, rb.latencyCycles)});
    // The total by component: where the difference is.
    os << "\n" << padRight("component", nameW) << "  " << padLeft("A " + u, 12) << "  " << padLeft("B " + u, 12) << "  "
       << padLeft("B-A " + u, 12) << "\n";
    auto component = [&](const std::string &name, double x, double y) {
      os << padRight(name, nameW) << "  " << padLeft(e(x), 12) << "  " << padLeft(e(y), 12) << "  "
         << padLeft(e(y - x), 12) << "\n";
    };
    component("MAC", ra.energyMacPj, rb.energyMacPj);
    for (size_t l = 0; l < hw.levels.size(); ++l)
      component(hw.levels[l].name, ra.energyLevelPj[l], rb.energyLevelPj[l]);
    component("NoC", ra.energyNocPj, rb.energyNocPj);
    component("bus", ra.energyBusPj, rb.energyBusPj);
    component("static", ra.energyStaticPj, rb.energyStaticPj);
  }
  os << "\nsegments\n  A: " << segments(net, a) << "\n  B: " << segments(net, b) << "\n";
  // Directives, level by level: the lines only one side writes.
  os << "\ndirectives that differ (-: A's lines, +: B's)\n";
  bool any = false;
  for (size_t i = 0; i < net.layers.size(); ++i)
    for (size_t l = hw.levels.size(); l-- > 0;) {
      std::vector<std::string> x = lines(levelOf(layerOf(a, static_cast<int>(i)), static_cast<int>(l)));
      std::vector<std::string> y = lines(levelOf(layerOf(b, static_cast<int>(i)), static_cast<int>(l)));
      if (x == y)
        continue;
      any = true;
      os << "  " << net.layers[i].name << " " << hw.levels[l].name << "\n";
      // Only the order differs (a loop order): the lines that moved.
      const bool reordered = std::is_permutation(x.begin(), x.end(), y.begin(), y.end());
      for (size_t k = 0; k < x.size(); ++k)
        if (reordered ? x[k] != y[k] : std::find(y.begin(), y.end(), x[k]) == y.end())
          os << "    - " << x[k] << "\n";
      for (size_t k = 0; k < y.size(); ++k)
        if (reordered ? x[k] != y[k] : std::find(x.begin(), x.end(), y[k]) == x.end())
          os << "    + " << y[k] << "\n";
    }
  if (!any)
    os << "  (none)\n";
  return os.str();
}

} // namespace dfl
