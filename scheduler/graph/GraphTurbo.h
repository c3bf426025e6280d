// Scheduling a network on a cluster/core DSA (docs/graphturbo.md): GraphTurbo
// and its two baselines, side by side in one cost model, and their report
// (report.json and the summary `dflc NET DSA_HW -o OUT` prints).
#pragma once

#include "model/DsaSchedule.h"
#include "model/Evaluation.h"
#include "scheduler/analysis/Analysis.h"
#include "scheduler/graph/InstanceSchedule.h"
#include "support/ChromeTrace.h"

#include <optional>
#include <vector>

#include <string>

namespace dfl::graph {

struct DsaComparison {
  Plan graphTurbo, fusionOnly, layerByLayer;   // GraphTurbo, AStitch-like, TVM-like
  double seconds[3] = {0, 0, 0};               // scheduling wall time of each, in that order
  int64_t batch = 1, clusterBatch = 1;
};

/// Runs the three schedulers on `net`, its batch split across the clusters;
/// each with the samples a cluster runs at once that suit it best (§5.1: a
/// power of two up to the cluster's share, looping over the share).
DsaComparison scheduleOnDsa(const Network &net, const DsaHardware &hw);
/// The comparison for a schedule written in DFL (`dflc check`): GraphTurbo's
/// plan rebuilt from `written` (planFromSchedule, its samples per iteration
/// or else the cluster's whole share), the baselines as scheduleOnDsa's;
/// nullopt if the schedule is not valid (the reasons in `issues`).
std::optional<DsaComparison> checkOnDsa(const Network &net, const DsaHardware &hw, const DsaSchedule &written,
                                        std::vector<Issue> &issues);
/// Samples per second: the batch over the time a cluster takes for its share.
double throughput(const Plan &p, const Network &net, const DsaHardware &hw);

/// The DSA target's side of the one evaluator (model/Evaluation.h): the
/// plan's latency over the whole batch. GraphTurbo's model has no energy and
/// costs instances, not layers: no energy, no rows.
Evaluation evaluationOf(const Network &net, const DsaHardware &hw, const Plan &p);

/// GraphTurbo's plan in time (OUT/trace.json, docs/graphturbo.md "Trace"):
/// a track per cluster with work, every instance of every iteration an
/// event, back to back in the plan's order, as the latency model adds them.
void planTrace(const Network &net, const DsaHardware &hw, const DsaComparison &c, ChromeTrace &trace);

/// `scheduleFile` (if not empty): where the schedule was written, relative to the report.
std::string dsaReportJson(const Network &net, const DsaHardware &hw, const DsaComparison &c,
                          const std::string &scheduleFile = "");
/// The summary: sub-graphs, instances, order, scopes, latency and speedups.
std::string dsaReportText(const Network &net, const DsaHardware &hw, const DsaComparison &c);

/// `dflc diff` of two DSA schedules of one network on one hardware:
/// GraphTurbo's latency of each (evaluationDiffText) and their sub-graphs.
std::string dsaDiffText(const Network &net, const DsaHardware &hw, const DsaComparison &a, const std::string &labelA,
                        const DsaComparison &b, const std::string &labelB);

} // namespace dfl::graph
