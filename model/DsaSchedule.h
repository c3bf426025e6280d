// A schedule of one network on a cluster/core DSA, as written in DFL
// (docs/language.md, "Schedules on a cluster/core DSA"): what determines a
// GraphTurbo plan — the samples per iteration, the sub-graphs with their
// split, the instance order and, per instance, its core binding and the scope
// of its output. Everything else (boxes, edges, data movement, spills,
// latency) follows from these and the model (docs/graphturbo.md). Any item
// may be left out; the scheduler fills it in by GraphTurbo's rules.
#pragma once

#include "support/SourceManager.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

/// Where an instance's output is declared (GraphTurbo §3.4): a core's local
/// buffer, the cluster's global buffer, or DDR.
enum class DsaScope { LB, GB, DDR };

/// The dimensions of every activation tensor, outermost first: a split's or
/// a binding's dimension is an index into this list.
inline constexpr const char *kDsaTensorDims[] = {"N", "C", "X", "Y"};

struct DsaSubGraphSpec {
  std::string name;
  std::vector<int> layers;          // indices into Network::layers, ascending (the exit last)
  std::optional<int> splitDim;      // none: one instance
  int64_t factor = 1;               // instances along splitDim
  SourceRange range, nameRange, splitRange;
};

/// `instance SG[I] { bind …; scope …; }`: one instance, or all of a sub-graph's.
struct DsaInstanceSpec {
  int subGraph = -1;                // index into DsaSchedule::subGraphs
  std::optional<int64_t> index;     // none: every instance (`[*]`)
  std::vector<int64_t> binding;     // cores per tensor dimension; empty: not given
  std::optional<DsaScope> scope;
  SourceRange range, bindRange, scopeRange;
};

struct DsaSchedule {
  int network = -1, hardware = -1;  // indices into Model::networks, Model::dsaHardware
  int64_t batchPerIteration = 0;    // 0: not given
  SourceRange batchRange;
  std::vector<DsaSubGraphSpec> subGraphs;   // empty: Algorithm 2 groups the layers
  enum class Order { Unset, Bfs, Dfs, Listed };
  Order order = Order::Unset;
  /// Order::Listed: (sub-graph, instance) in execution order, with their ranges.
  std::vector<std::pair<int, int64_t>> listed;
  std::vector<SourceRange> listedRanges;
  SourceRange orderRange;
  std::vector<DsaInstanceSpec> instances;
  SourceRange range;
};

inline const char *dsaScopeName(DsaScope s) { return s == DsaScope::LB ? "LB" : s == DsaScope::GB ? "GB" : "DDR"; }

} // namespace dfl
