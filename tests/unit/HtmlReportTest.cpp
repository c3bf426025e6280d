// OUT/report.html's page on its own (driver/HtmlReport.h): every user string
// escaped wherever it lands, the table's sort keys the exact numbers, the
// bytes a function of the data. Layer names from DFL are identifiers, so the
// hostile names here are what another front end (or a future syntax) could
// hand the page; tests/lit/report renders real compiles in Chromium.
#include "driver/HtmlReport.h"

#include <gtest/gtest.h>

#include <string>

using namespace dfl;
using namespace dfl::driver;

namespace {

const std::string kHostile = "<script>alert(\"x\")</script>&'";
const std::string kEscaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;'";

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

/// A page where every string the user could name is `name`.
HtmlReport reportNamed(const std::string &name) {
  HtmlReport r;
  r.title = name + " on " + name;
  r.subtitle = "made for " + name;
  r.facts = {{name, name}};
  r.story = "energy mostly in: " + name;
  r.evaluation.network = r.evaluation.hardware = name;
  r.evaluation.rowKind = name;
  r.evaluation.energyPj = 30000;
  r.evaluation.latencyCycles = 30;
  r.evaluation.parts = {{name, 30000}};
  EvaluationRow a{name, 10000.0, 10.0, {{name, 10000}}, 0.5};
  EvaluationRow b{name + "2", 20000.0, 20.0, {{name, 20000}}, 0.25};
  r.evaluation.rows = {a, b};
  r.boundBy = {name, "compute"};
  r.bounds = {{true, 8000, 5, name, 0.25, 1.0}, {}};   // the second row's layer not complete: dashes
  r.segments = {{{name, name + "2"}, name, 1, 30000, 30}};
  r.loops = "layer " + name + ": conv";
  return r;
}

TEST(HtmlReport, EveryUserStringIsEscaped) {
  const std::string page = reportHtml(reportNamed(kHostile));
  EXPECT_EQ(count(page, "alert(\"x\")"), 0u) << page;
  EXPECT_EQ(count(page, "<script"), 1u);   // the page's own
  EXPECT_EQ(count(page, "</script>"), 1u);
  // Where each string lands: title, heading, facts, components, rows and
  // their data-v, the bound, segments (text and tooltip), loops, story.
  EXPECT_NE(page.find("<title>" + kEscaped + " on " + kEscaped + " - dflc report</title>"), std::string::npos);
  EXPECT_NE(page.find("<h1>" + kEscaped + " on " + kEscaped + "</h1>"), std::string::npos);
  EXPECT_NE(page.find("<tr><th>" + kEscaped + "</th><td>" + kEscaped + "</td></tr>"), std::string::npos);
  EXPECT_NE(page.find("<td data-v=\"" + kEscaped + "2\">" + kEscaped + "2</td>"), std::string::npos);
  EXPECT_NE(page.find("title=\"" + kEscaped + ", " + kEscaped + "2\">" + kEscaped + " .. " + kEscaped + "2</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<pre class=\"loops\">layer " + kEscaped + ": conv</pre>"), std::string::npos);
  EXPECT_NE(page.find("<pre class=\"story\">energy mostly in: " + kEscaped + "</pre>"), std::string::npos);
  // Well-formed enough for a browser: every element opened is closed.
  EXPECT_EQ(count(page, "<tr"), count(page, "</tr>"));
  EXPECT_EQ(count(page, "<section "), count(page, "</section>"));
}

TEST(HtmlReport, CellsCarryTheExactNumbersToSortBy) {
  HtmlReport r = reportNamed("l");
  r.evaluation.rows[1].energyPj.reset();   // a row without a figure sorts last, shows "-"
  r.evaluation.rows[1].parts.clear();
  const std::string page = reportHtml(r);
  // 10000 pJ shown in nJ (the largest figure, 30000 pJ, picks the unit), sorted by pJ.
  EXPECT_NE(page.find("<td class=\"n\" data-v=\"10000.000\">10.000</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td class=\"n\" data-v=\"\">-</td>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"n\" data-v=\"0.500000\">50.0</td>"), std::string::npos);   // utilization
  EXPECT_NE(page.find("<td class=\"n\" data-v=\"20.000\">20</td>"), std::string::npos);       // latency
  EXPECT_NE(page.find("<th data-key=\"energy\" data-type=\"num\">energy [nJ]</th>"), std::string::npos);
  EXPECT_NE(page.find("<tr class=\"row\" data-i=\"1\">"), std::string::npos);
  // The first row's bound: 8000 pJ in nJ, 25 % and 100 % above it, 5 cycles, what binds.
  EXPECT_NE(page.find("<td class=\"n\" data-v=\"8000.000\">8.000</td><td class=\"n\" data-v=\"0.250000\">25.0</td>"
                      "<td class=\"n\" data-v=\"5.000\">5</td><td class=\"n\" data-v=\"1.000000\">100.0</td>"
                      "<td data-v=\"l\">l</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<th data-key=\"energy-bound\" data-type=\"num\">energy bound [nJ]</th>"), std::string::npos);
}

TEST(HtmlReport, TheSameDataGiveTheSameBytesAndNothingIsFetched) {
  HtmlReport r = reportNamed("l");
  r.plots = {{"plots/a.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>\n"}};
  const std::string page = reportHtml(r);
  EXPECT_EQ(page, reportHtml(r));
  EXPECT_NE(page.find("<figure class=\"plot\" data-path=\"plots/a.svg\">\n<svg"), std::string::npos);
  EXPECT_EQ(count(page, "src="), 0u);
  EXPECT_EQ(count(page, "url("), 0u);
  EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src 'none';"), std::string::npos);
  r.plots.clear();
  EXPECT_NE(reportHtml(r).find("No plots"), std::string::npos);
}

} // namespace
