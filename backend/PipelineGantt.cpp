// The Gantt chart of the pipeline simulation (backend/PipelineGantt.h).
#include "backend/PipelineGantt.h"

#include "support/Format.h"
#include "support/Svg.h"

#include <algorithm>
#include <cmath>

namespace dfl::sim {
namespace {

using svg::escape;
using svg::num;

constexpr double kLabel = 170, kPlot = 760, kRow = 26, kBar = 16, kTitle = 46, kAxis = 34, kGap = 22;
} // namespace

std::string pipelineSvg(const PipelineResult &r) {
  std::string body;
  double y = 0;
  for (const SegmentRun &s : r.segments) {
    if (!s.skipped.empty() || !s.error.empty())
      continue;
    double span = std::max({s.cycles, s.analyticalCycles, 1.0});
    auto x = [&](double t) { return kLabel + t / span * kPlot; };
    std::string title = "segment " + std::to_string(s.index) + ": simulated " + formatFixed(s.cycles, 0) +
                        " cycles, analytical " + formatFixed(s.analyticalCycles, 0) + " (fill " +
                        formatFixed(s.fillCycles, 0) + ", drain " + formatFixed(s.drainCycles, 0) + ")" +
                        (s.ok() ? "" : ", " + std::to_string(s.violationCount()) + " violations");
    body += "<text x=\"10\" y=\"" + num(y + 20) + "\" font-weight=\"bold\">" + escape(title) + "</text>\n";
    body += "<text x=\"10\" y=\"" + num(y + 38) +
            "\" font-size=\"11\" fill=\"#555\">bars: steps computing; gaps: waiting on a counter (stalls); dashed: the analytical latency</text>\n";
    double top = y + kTitle;
    for (size_t i = 0; i < s.regions.size(); ++i) {
      const RegionRun &g = s.regions[i];
      double rowY = top + static_cast<double>(i) * kRow;
      const char *colour = svg::colour(i);
      body += "<text x=\"" + num(kLabel - 8) + "\" y=\"" + num(rowY + kBar - 3) + "\" text-anchor=\"end\">" +
              escape(g.layer) + "</text>\n";
      body += "<rect x=\"" + num(kLabel) + "\" y=\"" + num(rowY) + "\" width=\"" + num(kPlot) + "\" height=\"" +
              num(kBar) + "\" fill=\"#f2f2f2\"/>\n";
      for (auto [from, to] : g.busy)
        body += "<rect x=\"" + num(x(from)) + "\" y=\"" + num(rowY) + "\" width=\"" +
                num(std::max(0.5, x(to) - x(from))) + "\" height=\"" + num(kBar) + "\" fill=\"" + colour +
                "\"><title>" + escape(g.layer) + ": " + formatFixed(from, 0) + " - " + formatFixed(to, 0) +
                "</title></rect>\n";
      body += "<text x=\"" + num(kLabel + kPlot + 6) + "\" y=\"" + num(rowY + kBar - 3) +
              "\" font-size=\"11\" fill=\"#555\">" + std::to_string(g.steps) + " steps, stalled " +
              formatFixed(g.stallCycles, 0) + "</text>\n";
    }
    double axisY = top + static_cast<double>(s.regions.size()) * kRow + 4;
    body += "<line x1=\"" + num(kLabel) + "\" y1=\"" + num(axisY) + "\" x2=\"" + num(kLabel + kPlot) + "\" y2=\"" +
            num(axisY) + "\" stroke=\"#333\"/>\n";
    double step = svg::tickStep(span);
    for (size_t i = 0, n = svg::tickCount(span, step, 1e-9); i < n; ++i) {
      const double t = static_cast<double>(i) * step;
      body += "<line x1=\"" + num(x(t)) + "\" y1=\"" + num(axisY) + "\" x2=\"" + num(x(t)) + "\" y2=\"" +
              num(axisY + 5) + "\" stroke=\"#333\"/><text x=\"" + num(x(t)) + "\" y=\"" + num(axisY + 18) +
              "\" font-size=\"11\" text-anchor=\"middle\">" + formatFixed(t, 0) + "</text>\n";
    }
    body += "<text x=\"" + num(kLabel + kPlot) + "\" y=\"" + num(axisY + 30) +
            "\" font-size=\"11\" text-anchor=\"end\">cycles</text>\n";
    body += "<line x1=\"" + num(x(s.analyticalCycles)) + "\" y1=\"" + num(top - 4) + "\" x2=\"" +
            num(x(s.analyticalCycles)) + "\" y2=\"" + num(axisY) +
            "\" stroke=\"#c00\" stroke-dasharray=\"4 3\"><title>analytical latency</title></line>\n";
    y = axisY + kAxis + kGap;
  }
  if (y == 0) {
    body = "<text x=\"10\" y=\"20\">no pipelined segment was simulated</text>\n";
    y = 30;
  }
  return svg::document(kLabel + kPlot + 150, y, body);
}

} // namespace dfl::sim
