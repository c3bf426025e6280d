// GraphTurbo plans from schedules written in DFL, and back (docs/graphturbo.md,
// "The schedule in DFL"). A written schedule gives what determines a plan —
// samples per iteration, sub-graphs with their splits, the order, bindings
// and scopes — and the plan is rebuilt from it with the same functions the
// scheduler runs (splitInstances, connect, evaluate), so `dflc check` of the
// schedule `dflc compile` wrote gives the compile's numbers by construction.
#pragma once

#include "model/DsaSchedule.h"
#include "scheduler/analysis/Analysis.h"
#include "scheduler/graph/InstanceSchedule.h"

#include <optional>
#include <vector>

namespace dfl::graph {

/// The plan `s` describes on `g` (whose cluster batch is the samples per
/// iteration). Where `s` is silent, GraphTurbo's rules: no sub-graphs,
/// Algorithm 2's with Eq. (1)'s splits; no order, the better of BFS and DFS;
/// no instance items, Algorithm 4 — else an instance without a binding gets
/// the plain one and without a scope LB (DDR if it has no consumers).
/// nullopt if the schedule is not valid (E1208-E1210 in `issues`); an LB
/// scope written that spills is W1212.
std::optional<Plan> planFromSchedule(const GraphView &g, const DsaSchedule &s, std::vector<Issue> &issues);

/// The schedule that says `p`, for OUT/schedule.dfl: its samples per
/// iteration, every sub-graph (`sgK`, K its place) with its split, the order
/// (`bfs`, `dfs` or listed), and per sub-graph its instances' most common
/// binding and scope as `[*]` and the others one by one.
DsaSchedule scheduleOf(const Plan &p);

} // namespace dfl::graph
