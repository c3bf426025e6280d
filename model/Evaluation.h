// One target's costs of one schedule, as plain data (docs/design.md, "One
// evaluator"): what the report's summary line, the plots, `dflc diff` and the
// sweeps read, whatever the target. Each target's cost model fills it:
//
//   memory hierarchy  evaluate(Model, Schedule, ScheduleResult)   scheduler/analysis/Evaluation.h
//   cluster/core DSA  evaluate(Network, DsaHardware, Plan)        scheduler/graph/GraphTurbo.h
//   computational mem evaluate(Network, CmHardware, CmMapping)    scheduler/placement/CmPlacementReport.h
//                     (its latency from the chip's run: cm::withLatency)
//
// A figure a target's model does not give is absent (nullopt), never 0: the
// DSA model has no energy, the CM placement no latency until the chip runs.
#pragma once

#include "model/Network.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

/// Energy of one component: "MAC", a memory level, "NoC", "bus", "static"
/// (memory hierarchy); "MxV", "interconnect" (computational memory).
struct EnergyPart {
  std::string name;
  double pj = 0;
};

/// One row: a layer (memory hierarchy), a partition (computational memory).
struct EvaluationRow {
  std::string name;
  std::optional<double> energyPj, latencyCycles;   // absent: not modelled, or the layer is not complete
  std::vector<EnergyPart> parts;                   // add up to energyPj
  std::optional<double> utilization;               // PEs in use over all PEs
};

struct Evaluation {
  std::string network, hardware;
  int64_t batch = 1;
  double frequencyHz = 1e9;
  std::optional<double> energyPj, latencyCycles;   // the whole batch
  std::vector<EnergyPart> parts;                   // add up to energyPj
  std::vector<EvaluationRow> rows;                 // in network order
  std::string rowKind = "layer";                   // what a row is: "layer", "partition"
};

/// What every target fills alike: the network's and the template's names,
/// the batch, the clock and what a row is.
template <class HardwareT>
Evaluation evaluationHeader(const Network &net, const HardwareT &hw, std::string rowKind) {
  Evaluation e;
  e.network = net.name;
  e.hardware = hw.name;
  e.batch = net.batch;
  e.frequencyHz = hw.frequencyHz;
  e.rowKind = std::move(rowKind);
  return e;
}

/// One energy unit per table, chosen from its largest figure so the numbers stay readable.
struct EnergyUnit {
  const char *name;
  double pj;
};
EnergyUnit energyUnitFor(double largestPj);

/// "energy 9.786 nJ, latency 18 cycles (0.000 ms at 1000 MHz)"; a figure
/// the target does not model reads "not modelled".
std::string evaluationSummary(const Evaluation &e);

/// Per row and in total, A's and B's energy and latency and their ratio,
/// then (where both have them) the total energy by component with B-A
/// (`dflc diff`, docs/cli.md).
std::string evaluationDiffText(const Evaluation &a, const Evaluation &b);

} // namespace dfl
