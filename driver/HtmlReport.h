// OUT/report.html (docs/cli.md, "The report page"): one self-contained page a
// compile writes beside report.json, to open offline or send to someone: the
// summary, the per-layer table (sortable by a click on a header), the
// segments, the plots, inline, and the loop nests (`dflc show --loops`'s text).
// Drawn from the data report.json is written from, so page and report never
// disagree. No request leaves the page: inline CSS, inline SVG, one inline
// script (the sort), and a Content-Security-Policy that forbids loading
// anything. Every user string is escaped; the bytes depend only on the inputs.
#pragma once

#include "driver/DriverOptions.h"
#include "driver/OutputWriter.h"
#include "model/Evaluation.h"
#include "scheduler/kapla/Solver.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dfl::driver {

/// One segment as the page lists it: its layers, in order, and its costs.
struct HtmlSegment {
  std::vector<std::string> layers;
  std::string kind;   // segmentKindText
  int chunks = 1;
  double energyPj = 0, latencyCycles = 0;
};

/// A layer's lower bound as the page shows it (docs/directives.md §14).
struct HtmlBound {
  bool present = false;                         // false: none shown (a layer not complete and valid)
  double energyPj = 0, cycles = 0;
  std::string binding;                          // "compute" or a level's name; the run's: empty
  std::optional<double> energyGap, cyclesGap;   // chosen / bound - 1
};

/// What the page shows, as plain data (the unit tests build one by hand).
struct HtmlReport {
  std::string title;                                        // "resnet20 on eyeriss_multinode"
  std::string subtitle;                                     // how it was made
  std::vector<std::pair<std::string, std::string>> facts;   // the summary's rows: name, value
  std::string story;                                        // scheduleStoryText
  Evaluation evaluation;                                    // the components and the per-layer rows
  std::vector<std::string> boundBy;                         // per row: "compute", a level's name or ""
  std::vector<HtmlBound> bounds;                            // per row: report.json's bound and gap
  HtmlBound totalBound;                                     // the run's (totals.bound and totals.gap)
  std::vector<HtmlSegment> segments;                        // in execution order
  std::string loops;                                        // scheduleLoopsText
  std::vector<OutputFile> plots;                            // standalone SVG documents, inlined as they are
};

/// The page's summary, table, segments and loops from a compile's solution;
/// `imports` are the inputs as schedule.dfl imports them (relative to OUT).
HtmlReport htmlReportOf(const Model &model, const Solution &solution, const DriverOptions &options,
                        const std::vector<std::string> &imports, std::vector<OutputFile> plots);

/// The whole page.
std::string reportHtml(const HtmlReport &report);

} // namespace dfl::driver
