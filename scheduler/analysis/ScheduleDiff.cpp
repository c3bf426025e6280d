#include "scheduler/analysis/ScheduleDiff.h"

#include "model/ScheduleWriter.h"
#include "scheduler/analysis/Evaluation.h"
#include "support/Format.h"

#include <algorithm>
#include <sstream>

namespace dfl {
namespace {

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
  os << evaluationDiffText(evaluationOf(model, a, ra), evaluationOf(model, b, rb));
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
