// The compile's plots (docs/cli.md, "Plots"): SVG charts drawn from the
// target's evaluation (model/Evaluation.h), the numbers report.json holds, so
// a chart and the report never disagree. After: none without per-row energy,
// else one OutputFile per plot, its path relative to OUT/ and its text a
// standalone SVG (support/Svg.h).
#pragma once

#include "driver/OutputWriter.h"
#include "model/Evaluation.h"

#include <string>
#include <vector>

namespace dfl::driver {

/// energy_by_layer.svg (stacked bars: each row's components, e.g. MAC, each
/// memory level, NoC, bus, static), energy_by_level.svg (the totals by
/// component) and, where every row has one, utilization.svg (PE utilization per layer).
std::vector<OutputFile> reportPlots(const Evaluation &evaluation);

/// One whole schedule's totals, for the trade-off plot.
struct TradeoffPoint {
  double energyPj = 0, latencyCycles = 0;
};

/// plots/tradeoff.svg (with --pareto): every whole schedule the solves
/// evaluated as a point (energy against latency), the energy-latency `front`
/// joined by a line, the `chosen` schedule ringed. `title` names the inputs.
OutputFile tradeoffPlot(const std::vector<TradeoffPoint> &evaluated, const std::vector<TradeoffPoint> &front,
                        TradeoffPoint chosen, const std::string &title);

} // namespace dfl::driver
