// GraphTurbo §3.3-3.5 and §4.3-4.4: sub-graphs split into instances, the
// instances ordered (BFS, and Algorithm 3's DFS), bound to cores with buffer
// scopes (Algorithm 4), their outputs concatenated and moved (copy and
// redistribution ops), LB reused with longest-liveness spilling, and the
// latency with or without across-layer instruction overlap. The baselines
// (layer by layer through DDR, TVM-like; fusion without instances, AStitch-like)
// are plans of the same kind, costed by the same model (docs/graphturbo.md).
#pragma once

#include "model/DsaSchedule.h"
#include "scheduler/graph/SubGraphs.h"

#include <string>
#include <vector>

namespace dfl::graph {

using Scope = DsaScope;
inline const char *scopeName(Scope s) { return dsaScopeName(s); }
/// The data movement op §3.5 puts on an edge between instances: none, a
/// copy (GB to LB: the producer's output is declared in GB) or a
/// redistribution between cores (the bindings differ).
enum class Move { None, Copy, Redistribute };

/// One instance of a sub-graph: the i-th of f pieces of its exit's output.
struct Instance {
  int subGraph = 0, index = 0;
  Box outBox;
  int64_t outBytes = 0;
  Footprint fp;
  std::vector<int> producers, consumers;   // instances; redundant edges removed (§3.3)
  std::vector<Move> moves;                 // per producer (§3.5)
  std::vector<int64_t> binding;            // cores per output dimension (Algorithm 4)
  Scope declared = Scope::LB;              // where its output is declared (Algorithm 4)
  Scope scope = Scope::LB;                 // where it lives: declared, then §4.3's spills (evaluate)
  int64_t cores() const;
};

/// Per-layer cycles and traffic of one instance, for the latency model.
struct TaskCost {
  double matrix = 0, vector = 0;     // compute cycles
  double gbBytes = 0, ddrBytes = 0;  // activation traffic
  double weightGbBytes = 0, weightDdrBytes = 0;
};

struct PlanCost {
  double cycles = 0;
  double computeCycles = 0;   // Σ compute, for utilisation
  double ddrBytes = 0, gbBytes = 0;
  int64_t tensors[3] = {0, 0, 0};   // per Scope: the paper's Table 3
  int spills = 0;                   // tensors §4.3 moved out of LB
  int64_t peakLbBytes = 0;          // live activation bytes at the fullest step, before spilling
  std::vector<double> perInstance;  // per position in the order: the instance's cycles (they add to `cycles`)
};

struct Plan {
  std::string approach;             // "graphturbo", "astitch", "tvm"
  std::vector<SubGraph> subGraphs;  // in execution order of their exits
  /// The sub-graphs' names where a written schedule gave them (empty: `sgK`).
  std::vector<std::string> subGraphNames;
  std::string subGraphName(size_t k) const {
    return k < subGraphNames.size() ? subGraphNames[k] : "sg" + std::to_string(k);
  }
  std::vector<Instance> instances;
  std::vector<int> order;           // instance ids, in execution order
  std::string orderKind;            // "bfs", "dfs" or "topological"
  int64_t peakLbBfs = 0, peakLbDfs = 0;
  int concatOps = 0, copyOps = 0, redistributionOps = 0;
  bool overlap = false;             // §4.4 across-layer instruction scheduling
  Scope spillTo = Scope::GB;        // where §4.3 spills first
  PlanCost cost;                    // of one iteration
  int64_t clusterBatch = 1;         // samples a cluster runs at once
  int64_t iterations = 1;           // loops over its share of the batch (§5.1)
  double totalCycles() const { return cost.cycles * static_cast<double>(iterations); }
};

/// The instances of `sgs` (each split by its best split; one instance if it
/// has none) with their dependences: producer instance p feeds consumer c
/// only if c reads part of p's output (the others are the redundant edges).
std::vector<Instance> splitInstances(const GraphView &g, const std::vector<SubGraph> &sgs);
/// Breadth-first order: Kahn's algorithm, first-in first-out.
std::vector<int> orderBfs(const std::vector<Instance> &inst);
/// Algorithm 3: the last ready instance without producers left goes next.
std::vector<int> orderDfs(const std::vector<Instance> &inst);
/// The live activation bytes at the fullest step of `order` (an instance's
/// working set plus the outputs still waiting for their consumers).
int64_t peakLiveBytes(const std::vector<Instance> &inst, const std::vector<int> &order);
/// The cores a binding uses: the product of its factors.
int64_t coresOf(const std::vector<int64_t> &binding);
/// A plain binding (Algorithm 4): cores 8, 4, 2, 1 (powers of two from the
/// cluster's cores down) from the outermost dimension in, dividing each extent.
std::vector<int64_t> plainBinding(const Box &b, int64_t cores);
/// Algorithm 4: every instance's binding and declared scope, in reverse order.
void bindCores(const GraphView &g, Plan &plan);
/// §3.5: the concat, copy and redistribution ops the bindings and scopes imply.
void connect(const GraphView &g, Plan &plan);
/// Algorithm 4, then §3.5.
void bindAndConnect(const GraphView &g, Plan &plan);
/// The better of BFS and DFS (§3.3) for `plan`'s instances, each bound by
/// `bind` and evaluated: the lower peak LB use; where both overflow the LB,
/// the lower latency after spilling. Sets both orders' peaks.
Plan betterOrder(const GraphView &g, Plan plan, void (*bind)(const GraphView &, Plan &));
/// §4.3 and §4.4: allocation with longest-liveness spilling and the latency
/// (every output starting from its declared scope).
PlanCost evaluate(const GraphView &g, Plan &plan);

/// GraphTurbo, end to end: Algorithm 2, instances, the better of BFS and DFS
/// by peak LB use, bindings and scopes, cost with overlap.
Plan scheduleGraphTurbo(const GraphView &g);
/// Layer by layer, every output through DDR, no overlap (TVM-like).
Plan scheduleLayerByLayer(const GraphView &g);
/// Fusion of memory-intensive layers into their producer without instances,
/// outputs in LB where they fit, spilled to DDR (AStitch-like).
Plan scheduleFusionOnly(const GraphView &g);

} // namespace dfl::graph
