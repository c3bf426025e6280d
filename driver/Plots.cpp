// The compile's plots (driver/Plots.h). Every chart is horizontal bars, one
// row per layer, so ResNet-50's 54 layers stay readable; each bar carries its
// value in a data- attribute (the report's number) and a tooltip.
#include "driver/Plots.h"

#include "support/Format.h"
#include "support/Svg.h"

#include <algorithm>
#include <cmath>

namespace dfl::driver {
namespace {

using svg::escape;
using svg::num;

constexpr double kLabel = 160, kPlot = 600, kValue = 110, kRow = 18, kBar = 13, kTop = 62, kAxis = 44;

std::string text(double x, double y, const std::string &s, const std::string &attrs = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + (attrs.empty() ? "" : " " + attrs) + ">" + escape(s) +
         "</text>\n";
}

std::string rect(double x, double y, double w, double h, const std::string &fill, const std::string &attrs,
                 const std::string &tip) {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
         "\" fill=\"" + fill + "\"" + (attrs.empty() ? "" : " " + attrs) + "><title>" + escape(tip) +
         "</title></rect>\n";
}

/// The title, the subtitle and, when `legend` is not empty, one swatch per name.
std::string header(const std::string &title, const std::string &subtitle, const std::vector<std::string> &legend) {
  std::string out = text(10, 20, title, "font-weight=\"bold\" font-size=\"14\"") +
                    text(10, 37, subtitle, "font-size=\"11\" fill=\"#555\"");
  double x = kLabel;
  for (size_t i = 0; i < legend.size(); ++i) {
    out += "<rect x=\"" + num(x) + "\" y=\"45\" width=\"10\" height=\"10\" fill=\"" + svg::colour(i) + "\"/>\n" +
           text(x + 14, 54, legend[i], "font-size=\"11\"");
    x += 24 + 7 * static_cast<double>(legend[i].size());
  }
  return out;
}

/// Vertical grid lines and the x axis under `rows` rows, ticks every round
/// step up to `max` (in the axis' unit), labelled with `label`.
std::string axis(double max, size_t rows, const std::string &label, double *height) {
  double bottom = kTop + static_cast<double>(rows) * kRow + 4, step = svg::tickStep(max);
  std::string out = "<line x1=\"" + num(kLabel) + "\" y1=\"" + num(bottom) + "\" x2=\"" + num(kLabel + kPlot) +
                    "\" y2=\"" + num(bottom) + "\" stroke=\"#333\"/>\n";
  for (size_t i = 0, n = svg::tickCount(max, step, 0.5); i < n; ++i) {   // max is a whole number of steps
    double t = static_cast<double>(i) * step, x = kLabel + t / max * kPlot;
    out += "<line x1=\"" + num(x) + "\" y1=\"" + num(kTop - 4) + "\" x2=\"" + num(x) + "\" y2=\"" + num(bottom + 5) +
           "\" stroke=\"#ddd\"/>\n" + text(x, bottom + 18, formatTrimmed(t, 3), "font-size=\"11\" text-anchor=\"middle\"");
  }
  out += text(kLabel + kPlot / 2, bottom + 36, label, "font-size=\"12\" text-anchor=\"middle\"");
  *height = bottom + kAxis;
  return out;
}

/// The axis maximum: a whole number of ticks at or above `max`.
double axisMax(double max) {
  if (!(max > 0) || !std::isfinite(max))   // nothing to draw, or nothing to scale by
    return 1;
  double step = svg::tickStep(max);
  return std::ceil(max / step * (1 - 1e-12)) * step;
}

std::string subtitleOf(const Evaluation &e) {
  return e.network + " on " + e.hardware + ", batch " + std::to_string(e.batch) + "; total " + formatEnergy(*e.energyPj) +
         " (numbers from report.json; hover a bar for its value)";
}

std::string energyByLayer(const Evaluation &r) {
  const std::vector<EvaluationRow> &layers = r.rows;
  std::vector<std::string> names;
  for (const EnergyPart &c : layers.at(0).parts)
    names.push_back(c.name);
  double maxPj = 0;
  for (const EvaluationRow &l : layers)
    maxPj = std::max(maxPj, *l.energyPj);
  const auto [unit, scale] = energyUnitFor(maxPj);
  double top = axisMax(maxPj / scale);
  std::string body = header("Energy by layer and component", subtitleOf(r), names);
  for (size_t i = 0; i < layers.size(); ++i) {
    const EvaluationRow &l = layers[i];
    const std::string &name = l.name;
    double y = kTop + static_cast<double>(i) * kRow, x = kLabel;
    body += text(kLabel - 6, y + kBar - 2, name, "text-anchor=\"end\" font-size=\"11\"");
    const std::vector<EnergyPart> &parts = l.parts;
    for (size_t c = 0; c < parts.size(); ++c) {
      double w = std::max(0.0, parts[c].pj / scale / top * kPlot);   // -1e-9 pJ of rounding draws nothing
      body += rect(x, y, w, kBar, svg::colour(c),
                   "data-layer=\"" + escape(name) + "\" data-component=\"" + escape(parts[c].name) + "\" data-pj=\"" +
                       formatFixed(parts[c].pj, 3) + "\"",
                   name + " " + parts[c].name + ": " + formatEnergy(parts[c].pj));
      x += w;
    }
    body += text(x + 4, y + kBar - 2, formatEnergy(*l.energyPj),
                 "font-size=\"10\" fill=\"#555\"");
  }
  double height = 0;
  body = axis(top, layers.size(), std::string("energy (") + unit + ")", &height) + body;  // grid lines under the bars
  return svg::document(kLabel + kPlot + kValue, height, body);
}

std::string energyByLevel(const Evaluation &r) {
  const std::vector<EnergyPart> &parts = r.parts;
  double total = *r.energyPj, maxPj = 0;
  for (const EnergyPart &c : parts)
    maxPj = std::max(maxPj, c.pj);
  const auto [unit, scale] = energyUnitFor(maxPj);
  double top = axisMax(maxPj / scale);
  std::string body = header("Energy by component: MAC, memory levels (innermost first), NoC, bus, static", subtitleOf(r), {});
  for (size_t c = 0; c < parts.size(); ++c) {
    double y = kTop + static_cast<double>(c) * kRow;
    body += text(kLabel - 6, y + kBar - 2, parts[c].name, "text-anchor=\"end\"");
    double w = std::max(0.0, parts[c].pj / scale / top * kPlot);
    body += rect(kLabel, y, w, kBar, svg::colour(c),
                 "data-component=\"" + escape(parts[c].name) + "\" data-pj=\"" + formatFixed(parts[c].pj, 3) + "\"",
                 parts[c].name + ": " + formatEnergy(parts[c].pj));
    body += text(kLabel + w + 4, y + kBar - 2,
                 formatEnergy(parts[c].pj) + " (" + formatFixed(total > 0 ? 100 * parts[c].pj / total : 0, 1) + " %)",
                 "font-size=\"10\" fill=\"#555\"");
  }
  double height = 0;
  body = axis(top, parts.size(), std::string("energy (") + unit + ")", &height) + body;  // grid lines under the bars
  return svg::document(kLabel + kPlot + kValue, height, body);
}

std::string utilization(const Evaluation &r) {
  const std::vector<EvaluationRow> &layers = r.rows;
  std::string body = header("PE utilization per layer", r.network + " on " + r.hardware +
                                                            ": the PEs in use over all PEs (docs/directives.md §8)",
                            {});
  for (size_t i = 0; i < layers.size(); ++i) {
    const EvaluationRow &l = layers[i];
    const std::string &name = l.name;
    double u = *l.utilization, y = kTop + static_cast<double>(i) * kRow, w = u * kPlot;
    body += text(kLabel - 6, y + kBar - 2, name, "text-anchor=\"end\" font-size=\"11\"");
    body += rect(kLabel, y, w, kBar, svg::colour(0),
                 "data-layer=\"" + escape(name) + "\" data-utilization=\"" + formatFixed(u, 6) + "\"",
                 name + ": " + formatFixed(100 * u, 1) + " %");
    body += text(kLabel + w + 4, y + kBar - 2, formatFixed(100 * u, 1) + " %", "font-size=\"10\" fill=\"#555\"");
  }
  double height = 0;
  body = axis(100, layers.size(), "PE utilization (%)", &height) + body;  // grid lines under the bars
  return svg::document(kLabel + kPlot + kValue, height, body);
}

} // namespace

OutputFile tradeoffPlot(const std::vector<TradeoffPoint> &evaluated, const std::vector<TradeoffPoint> &front,
                        TradeoffPoint chosen, const std::string &title) {
  constexpr double kHeight = 360, kLeft = 80;
  double minPj = chosen.energyPj, maxPj = chosen.energyPj, minCycles = chosen.latencyCycles,
         maxCycles = chosen.latencyCycles;
  for (const TradeoffPoint &p : evaluated) {
    minPj = std::min(minPj, p.energyPj), maxPj = std::max(maxPj, p.energyPj);
    minCycles = std::min(minCycles, p.latencyCycles), maxCycles = std::max(maxCycles, p.latencyCycles);
  }
  const EnergyUnit energy = energyUnitFor(maxPj);
  const double scale = energy.pj;   // a copy: lambdas below capture it
  // The schedules a solve evaluates differ by percents: the axes span them, not zero up.
  const svg::Axis ae(minPj / scale, maxPj / scale), al(minCycles, maxCycles);
  const double bottom = kTop + kHeight;
  auto x = [&](double cycles) { return al.at(cycles, kLeft, kLeft + kPlot); };
  auto y = [&](double pj) { return ae.at(pj / scale, bottom, kTop); };
  auto at = [&](const TradeoffPoint &p) { return "cx=\"" + num(x(p.latencyCycles)) + "\" cy=\"" + num(y(p.energyPj)) + "\""; };
  auto values = [&](const TradeoffPoint &p) {
    return "data-pj=\"" + formatFixed(p.energyPj, 3) + "\" data-cycles=\"" + formatFixed(p.latencyCycles, 3) + "\"";
  };
  std::string body = text(10, 20, "Energy-latency trade-off of the schedules the solver evaluated",
                          "font-weight=\"bold\" font-size=\"14\"") +
                     text(10, 37, title + "; grey: evaluated, blue line: the front (none better in both), ring: chosen",
                          "font-size=\"11\" fill=\"#555\"");
  // axes and grid: latency across, energy up, neither from zero
  for (size_t i = 0; i < al.ticks; ++i) {
    const double t = al.tick(i);
    body += "<line x1=\"" + num(x(t)) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(x(t)) + "\" y2=\"" + num(bottom + 5) +
            "\" stroke=\"#ddd\"/>\n" + text(x(t), bottom + 18, formatFixed(t, al.digits), "font-size=\"11\" text-anchor=\"middle\"");
  }
  for (size_t i = 0; i < ae.ticks; ++i) {
    const double e = ae.tick(i);
    body += "<line x1=\"" + num(kLeft - 5) + "\" y1=\"" + num(y(e * scale)) + "\" x2=\"" + num(kLeft + kPlot) + "\" y2=\"" +
            num(y(e * scale)) + "\" stroke=\"#ddd\"/>\n" +
            text(kLeft - 8, y(e * scale) + 4, formatFixed(e, ae.digits), "font-size=\"11\" text-anchor=\"end\"");
  }
  body += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(bottom) + "\" x2=\"" + num(kLeft + kPlot) + "\" y2=\"" + num(bottom) +
          "\" stroke=\"#333\"/>\n<line x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(kLeft) + "\" y2=\"" +
          num(bottom) + "\" stroke=\"#333\"/>\n";
  body += text(kLeft + kPlot / 2, bottom + 36, "latency (cycles)", "text-anchor=\"middle\"");
  body += text(16, kTop + kHeight / 2, std::string("energy (") + energy.name + ")",
               "text-anchor=\"middle\" transform=\"rotate(-90 16 " + num(kTop + kHeight / 2) + ")\"");
  for (const TradeoffPoint &p : evaluated)
    body += "<circle " + at(p) + " r=\"3\" fill=\"#999\" fill-opacity=\"0.6\" class=\"evaluated\" " + values(p) + "/>\n";
  std::string line;
  for (const TradeoffPoint &p : front)
    line += (line.empty() ? "" : " ") + num(x(p.latencyCycles)) + "," + num(y(p.energyPj));
  body += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"" + svg::colour(0) + "\" stroke-width=\"1.5\"/>\n";
  for (const TradeoffPoint &p : front)
    body += "<circle " + at(p) + " r=\"4\" fill=\"" + svg::colour(0) + "\" class=\"front\" " + values(p) + "><title>" +
            formatEnergy(p.energyPj) + ", " + formatFixed(p.latencyCycles, 0) + " cycles</title></circle>\n";
  body += "<circle " + at(chosen) + " r=\"8\" fill=\"none\" stroke=\"" + svg::colour(3) +
          "\" stroke-width=\"2\" class=\"chosen\" " + values(chosen) + "><title>chosen: " + formatEnergy(chosen.energyPj) +
          ", " + formatFixed(chosen.latencyCycles, 0) + " cycles</title></circle>\n";
  return {"plots/tradeoff.svg", svg::document(kLeft + kPlot + 40, bottom + kAxis, body)};
}

std::vector<OutputFile> reportPlots(const Evaluation &e) {
  auto drawn = [](const EvaluationRow &r) { return r.energyPj.has_value(); };
  if (e.rows.empty() || !e.energyPj || !std::all_of(e.rows.begin(), e.rows.end(), drawn))
    return {};   // no numbers to draw (a compile's schedule is always complete and valid)
  std::vector<OutputFile> out = {{"plots/energy_by_layer.svg", energyByLayer(e)},
                                 {"plots/energy_by_level.svg", energyByLevel(e)}};
  if (std::all_of(e.rows.begin(), e.rows.end(), [](const EvaluationRow &r) { return r.utilization.has_value(); }))
    out.push_back({"plots/utilization.svg", utilization(e)});
  return out;
}

} // namespace dfl::driver
