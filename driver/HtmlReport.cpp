// OUT/report.html (driver/HtmlReport.h). The sections: summary, layers,
// segments, plots, loop nests (the longest last). The table's cells carry their exact
// number in data-v, so the sort compares numbers, not the text shown.
#include "driver/HtmlReport.h"

#include "scheduler/analysis/Evaluation.h"
#include "scheduler/analysis/Floors.h"
#include "scheduler/analysis/LoopNestView.h"
#include "scheduler/analysis/Report.h"
#include "support/Format.h"
#include "support/Svg.h"

#include <algorithm>

namespace dfl::driver {
namespace {

using svg::escape;   // & < > " : enough for text and double-quoted attributes

// No network, no external file: only what the page itself holds runs or shows.
constexpr const char *kPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

constexpr const char *kStyle = R"(body{font-family:sans-serif;font-size:14px;margin:0 auto;max-width:1200px;padding:0 16px 32px;color:#222}
h1{font-size:22px;margin:20px 0 2px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
.sub{color:#555;margin:0 0 8px}nav a{margin-right:12px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ccc;padding:3px 8px}
th{background:#eef2f7;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer;user-select:none}table.sortable th:hover{background:#dde5f0}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
tbody tr:nth-child(even){background:#f8f9fb}tfoot td{font-weight:bold}
pre{background:#f6f6f6;border:1px solid #ddd;padding:8px;overflow-x:auto;font-size:12px}
figure{margin:12px 0;overflow-x:auto}figcaption{color:#555;font-size:12px}
)";

// Sorts a table.sortable by the clicked header (Enter or Space on a focused
// one): numbers as numbers (data-type="num"), text as text; a cell without a
// number last either way; ties in network order (data-i). A second click on
// the same header reverses.
constexpr const char *kScript = R"((function () {
  'use strict';
  function value(row, col, numeric) {
    var v = row.cells[col].getAttribute('data-v');
    return numeric ? (v === null || v === '' ? NaN : Number(v)) : (v === null ? '' : v);
  }
  function sortBy(table, th, col) {
    var numeric = th.getAttribute('data-type') === 'num';
    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a, col, numeric), y = value(b, col, numeric);
      if (numeric && (isNaN(x) || isNaN(y))) {
        if (isNaN(x) !== isNaN(y)) return isNaN(x) ? 1 : -1;
      } else if (x !== y) {
        return numeric ? dir * (x - y) : dir * (x < y ? -1 : 1);
      }
      return Number(a.getAttribute('data-i')) - Number(b.getAttribute('data-i'));
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.tabIndex = 0;
      th.addEventListener('click', function () { sortBy(table, th, col); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(table, th, col); }
      });
    });
  });
})();
)";

/// A header cell of a sortable table: `key` names the column for tests and scripts.
std::string th(const std::string &key, const std::string &label, bool numeric) {
  return "<th data-key=\"" + escape(key) + "\" data-type=\"" + (numeric ? "num" : "text") + "\">" + escape(label) +
         "</th>";
}

/// A number cell: `shown` as text, `exact` (or nothing, if absent) to sort by.
std::string numCell(const std::string &shown, const std::string &exact) {
  return "<td class=\"n\" data-v=\"" + exact + "\">" + escape(shown) + "</td>";
}

std::string textCell(const std::string &s) { return "<td data-v=\"" + escape(s) + "\">" + escape(s) + "</td>"; }

std::string section(const char *id, const char *heading, const std::string &body) {
  return std::string("<section id=\"") + id + "\">\n<h2>" + heading + "</h2>\n" + body + "</section>\n";
}

std::string summary(const HtmlReport &r, const EnergyUnit &unit) {
  std::string out = "<table class=\"facts\">\n";
  for (const auto &[name, value] : r.facts)
    out += "<tr><th>" + escape(name) + "</th><td>" + escape(value) + "</td></tr>\n";
  out += "</table>\n";
  const Evaluation &e = r.evaluation;
  if (!e.parts.empty()) {
    out += "<h3>Energy by component</h3>\n<table class=\"components\">\n<thead><tr><th>component</th><th>energy [" +
           std::string(unit.name) + "]</th><th>share [%]</th></tr></thead>\n<tbody>\n";
    const double total = e.energyPj.value_or(0);
    for (const EnergyPart &p : e.parts)
      out += "<tr><td>" + escape(p.name) + "</td>" + numCell(formatFixed(p.pj / unit.pj, 3), formatFixed(p.pj, 3)) +
             numCell(formatFixed(total > 0 ? 100 * p.pj / total : 0, 1), "") + "</tr>\n";
    out += "</tbody>\n</table>\n";
  }
  if (!r.story.empty())
    out += "<pre class=\"story\">" + escape(r.story) + "</pre>\n";
  return out;
}

/// A row's bound, its gaps (in %) and what binds it; dashes where none.
std::string boundCells(const HtmlBound &b, const EnergyUnit &unit) {
  if (!b.present)
    return numCell("-", "") + numCell("-", "") + numCell("-", "") + numCell("-", "") + textCell("");
  auto gap = [](const std::optional<double> &g) {
    return g ? numCell(formatFixed(100 * *g, 1), formatFixed(*g, 6)) : numCell("-", "");
  };
  return numCell(formatFixed(b.energyPj / unit.pj, 3), formatFixed(b.energyPj, 3)) + gap(b.energyGap) +
         numCell(formatFixed(b.cycles, 0), formatFixed(b.cycles, 3)) + gap(b.cyclesGap) + textCell(b.binding);
}

std::string layerTable(const HtmlReport &r, const EnergyUnit &unit) {
  const Evaluation &e = r.evaluation;
  std::vector<std::string> parts;   // the components, as the first row with any names them
  for (const EvaluationRow &row : e.rows)
    if (parts.empty())
      for (const EnergyPart &p : row.parts)
        parts.push_back(p.name);
  const std::string u = std::string(" [") + unit.name + "]";
  std::string out = "<p>One row per " + escape(e.rowKind) + ", in network order; click a header to sort by it (again to reverse).</p>\n"
                    "<table id=\"layer-table\" class=\"sortable\">\n<thead><tr>" +
                    th("index", "#", true) + th("name", e.rowKind, false) + th("energy", "energy" + u, true);
  for (size_t c = 0; c < parts.size(); ++c)
    out += th("part-" + std::to_string(c), parts[c] + u, true);
  out += th("latency", "latency [cycles]", true) + th("bound", "bound by", false) + th("utilization", "PE util [%]", true) +
         th("energy-bound", "energy bound" + u, true) + th("energy-gap", "energy gap [%]", true) +
         th("latency-bound", "latency bound [cycles]", true) + th("latency-gap", "latency gap [%]", true) +
         th("binding", "bound binds", false) + "</tr></thead>\n<tbody>\n";
  auto energy = [&](const std::optional<double> &pj) {
    return pj ? numCell(formatFixed(*pj / unit.pj, 3), formatFixed(*pj, 3)) : numCell("-", "");
  };
  for (size_t i = 0; i < e.rows.size(); ++i) {
    const EvaluationRow &row = e.rows[i];
    const std::string index = std::to_string(i);
    out += "<tr class=\"row\" data-i=\"" + index + "\">" + numCell(index, index) + textCell(row.name) + energy(row.energyPj);
    for (size_t c = 0; c < parts.size(); ++c)
      out += energy(c < row.parts.size() ? std::optional<double>(row.parts[c].pj) : std::nullopt);
    out += (row.latencyCycles ? numCell(formatFixed(*row.latencyCycles, 0), formatFixed(*row.latencyCycles, 3))
                              : numCell("-", "")) +
           textCell(i < r.boundBy.size() ? r.boundBy[i] : "") +
           (row.utilization ? numCell(formatFixed(100 * *row.utilization, 1), formatFixed(*row.utilization, 6))
                            : numCell("-", "")) +
           boundCells(i < r.bounds.size() ? r.bounds[i] : HtmlBound{}, unit) + "</tr>\n";
  }
  out += "</tbody>\n";
  if (e.energyPj) {   // the totals stay under the table whatever its order
    out += "<tfoot><tr><td></td><td>total</td>" + energy(e.energyPj);
    for (size_t c = 0; c < parts.size(); ++c)
      out += energy(c < e.parts.size() ? std::optional<double>(e.parts[c].pj) : std::nullopt);
    out += (e.latencyCycles ? numCell(formatFixed(*e.latencyCycles, 0), formatFixed(*e.latencyCycles, 3))
                            : numCell("-", "")) +
           "<td></td><td></td>" + boundCells(r.totalBound, unit) + "</tr></tfoot>\n";
  }
  return out + "</table>\n";
}

std::string segmentTable(const HtmlReport &r, const EnergyUnit &unit) {
  if (r.segments.empty())
    return "<p>No segments.</p>\n";
  std::string out = "<p>In execution order; a segment of one layer runs alone, through DRAM.</p>\n"
                    "<table id=\"segment-table\">\n<thead><tr><th>#</th><th>kind</th><th>layers</th><th>count</th>"
                    "<th>chunks</th><th>energy [" + std::string(unit.name) + "]</th><th>latency [cycles]</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < r.segments.size(); ++i) {
    const HtmlSegment &s = r.segments[i];
    std::string names = s.layers.empty() ? "" : s.layers.front();
    if (s.layers.size() > 1)
      names += " .. " + s.layers.back();
    out += "<tr class=\"segment\"><td class=\"n\">" + std::to_string(i) + "</td><td>" + escape(s.kind) +
           "</td><td title=\"" + escape(joinList(s.layers, ", ", ", ")) + "\">" + escape(names) + "</td><td class=\"n\">" +
           std::to_string(s.layers.size()) + "</td><td class=\"n\">" + std::to_string(s.chunks) + "</td>" +
           numCell(formatFixed(s.energyPj / unit.pj, 3), formatFixed(s.energyPj, 3)) +
           numCell(formatFixed(s.latencyCycles, 0), formatFixed(s.latencyCycles, 3)) + "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string plots(const HtmlReport &r) {
  if (r.plots.empty())
    return "<p>No plots (<code>--no-plots</code>).</p>\n";
  std::string out;
  for (const OutputFile &p : r.plots)   // dflc's own SVG (support/Svg.h): no prolog, no script
    out += "<figure class=\"plot\" data-path=\"" + escape(p.path) + "\">\n" + p.text + "<figcaption>OUT/" +
           escape(p.path) + "</figcaption>\n</figure>\n";
  return out;
}

} // namespace

HtmlReport htmlReportOf(const Model &model, const Solution &solution, const DriverOptions &o,
                        const std::vector<std::string> &imports, std::vector<OutputFile> plotFiles) {
  const Schedule &s = solution.schedule;
  const ScheduleResult &res = solution.result;
  const Network &net = networkOf(model, s);
  const Hardware &hw = hardwareOf(model, s);
  HtmlReport r;
  r.title = net.name + " on " + hw.name;
  r.subtitle = std::string("Compiled by dflc ") + kVersion + "; the numbers are OUT/report.json's.";
  r.evaluation = evaluationOf(model, s, res);
  const Evaluation &e = r.evaluation;
  const SolverStats &st = solution.stats;
  r.facts = {{"network", net.name + " (" + std::to_string(net.layers.size()) + " layers, batch " + std::to_string(net.batch) + ")"},
             {"hardware", hw.name + " (" + formatTrimmed(hw.frequencyHz / 1e6, 3) + " MHz)"},
             {"schedule", std::string(res.valid ? "valid" : "INVALID") + (res.complete ? ", complete" : ", incomplete") +
                              ", " + std::to_string(res.segments.size()) + " segments"},
             {"energy", e.energyPj ? formatEnergy(*e.energyPj) : "not modelled"},
             {"latency", formatFixed(res.latencyCycles, 0) + " cycles (" +
                             formatFixed(res.latencyCycles / hw.frequencyHz * 1e3, 3) + " ms)"},
             {"solver", o.solver + ", objective " + o.objective + (o.pipelining ? "" : ", layer by layer") + "; " +
                            std::to_string(st.candidates) + " candidates evaluated (" + std::to_string(st.rejected) +
                            " invalid)" + (st.limit != SolveLimit::None ? "; stopped at its " + std::string(solveLimitName(st.limit)) + " limit" : "")},
             {"inputs", joinList(imports, ", ", ", ")}};
  r.story = scheduleStoryText(net, res);
  for (const LayerResult &lr : res.layers)
    r.boundBy.push_back(!lr.complete || !lr.valid ? ""
                        : lr.bindingLevel < 0   ? (lr.unit >= 0   // the vector unit that ran it
                                                       ? "compute on " + hw.vectors[static_cast<size_t>(lr.unit)].name
                                                       : std::string("compute"))
                                                : hw.levels[static_cast<size_t>(lr.bindingLevel)].name);
  // The bounds and gaps report.json gives (docs/directives.md §14).
  const ScheduleFloors floors = scheduleFloors(net, hw, res);
  auto bound = [&](const LayerFloor &f, double energyPj, double cycles, const std::string &binding) {
    return HtmlBound{true, f.energyPj, f.latencyCycles, binding, gapAbove(energyPj, f.energyPj),
                     gapAbove(cycles, f.latencyCycles)};
  };
  for (const LayerResult &lr : res.layers) {
    const LayerFloor &f = floors.layers[static_cast<size_t>(lr.layer)];
    r.bounds.push_back(!lr.complete || !lr.valid ? HtmlBound{}
                                                 : bound(f, lr.energyPj, lr.latencyCycles, bindingName(hw, f.binding)));
  }
  if (res.complete && res.valid)
    r.totalBound = bound(floors.total, res.energyPj, res.latencyCycles, "");
  for (const SegmentResult &seg : res.segments) {
    HtmlSegment h{{}, segmentKindText(seg), seg.chunks, seg.energyPj, seg.latencyCycles};
    for (int l : seg.layers)
      h.layers.push_back(net.layers[static_cast<size_t>(l)].name);
    r.segments.push_back(std::move(h));
  }
  r.loops = scheduleLoopsText(model, s, res);
  r.plots = std::move(plotFiles);
  return r;
}

std::string reportHtml(const HtmlReport &r) {
  const Evaluation &e = r.evaluation;
  double largest = e.energyPj.value_or(0);   // one unit for every table, as the text report's
  for (const EvaluationRow &row : e.rows)
    largest = std::max(largest, row.energyPj.value_or(0));
  const EnergyUnit unit = energyUnitFor(largest);
  return std::string("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n") +
         "<meta http-equiv=\"Content-Security-Policy\" content=\"" + kPolicy + "\">\n" +
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" + escape(r.title) +
         " - dflc report</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n<h1>" + escape(r.title) + "</h1>\n" +
         "<p class=\"sub\">" + escape(r.subtitle) + "</p>\n" +
         "<nav><a href=\"#summary\">Summary</a><a href=\"#layers\">Layers</a><a href=\"#segments\">Segments</a>"
         "<a href=\"#plots\">Plots</a><a href=\"#loops\">Loop nests</a></nav>\n" +
         section("summary", "Summary", summary(r, unit)) + section("layers", "Layers", layerTable(r, unit)) +
         section("segments", "Segments", segmentTable(r, unit)) + section("plots", "Plots", plots(r)) +
         // the longest last: a layer's nest is a dozen lines
         section("loops", "Loop nests", "<pre class=\"loops\">" + escape(r.loops) + "</pre>\n") + "<script>\n" +
         kScript + "</script>\n</body>\n</html>\n";
}

} // namespace dfl::driver
