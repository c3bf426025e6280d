#include "scheduler/graph/GraphTurbo.h"

#include "scheduler/graph/WrittenSchedule.h"

#include "support/Check.h"
#include "support/FiniteJson.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <sstream>

namespace dfl::graph {

namespace {

/// The samples a cluster may run at once: 1, 2, 4, … and its whole share (§5.1).
std::vector<int64_t> batchesToTry(int64_t share) {
  std::vector<int64_t> batches;
  for (int64_t b = 1; b < share; b *= 2)
    batches.push_back(b);
  batches.push_back(share);
  return batches;
}

/// `schedule` at every batch to try, the fastest kept; its wall time in `seconds`.
Plan fastest(const Network &net, const DsaHardware &hw, int64_t share, double &seconds,
             Plan (*schedule)(const GraphView &)) {
  auto t0 = std::chrono::steady_clock::now();
  std::optional<Plan> out;
  for (int64_t b : batchesToTry(share)) {
    GraphView g(net, hw, b);
    Plan p = schedule(g);
    p.clusterBatch = b;
    p.iterations = (share + b - 1) / b;
    if (!out || p.totalCycles() < out->totalCycles())
      out = std::move(p);
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return std::move(*out);
}

DsaComparison withBaselines(const Network &net, const DsaHardware &hw) {
  DsaComparison c;
  c.batch = net.batch;
  c.clusterBatch = GraphView(net, hw).clusterBatch();
  c.fusionOnly = fastest(net, hw, c.clusterBatch, c.seconds[1], scheduleFusionOnly);
  c.layerByLayer = fastest(net, hw, c.clusterBatch, c.seconds[2], scheduleLayerByLayer);
  return c;
}

} // namespace

DsaComparison scheduleOnDsa(const Network &net, const DsaHardware &hw) {
  DsaComparison c = withBaselines(net, hw);
  c.graphTurbo = fastest(net, hw, c.clusterBatch, c.seconds[0], scheduleGraphTurbo);
  return c;
}

std::optional<DsaComparison> checkOnDsa(const Network &net, const DsaHardware &hw, const DsaSchedule &written,
                                        std::vector<Issue> &issues) {
  DsaComparison c = withBaselines(net, hw);
  auto t0 = std::chrono::steady_clock::now();
  const int64_t b = written.batchPerIteration > 0 ? written.batchPerIteration : c.clusterBatch;
  GraphView g(net, hw, b);
  auto plan = planFromSchedule(g, written, issues);
  if (!plan)
    return std::nullopt;
  c.graphTurbo = std::move(*plan);
  c.graphTurbo.clusterBatch = b;
  c.graphTurbo.iterations = (c.clusterBatch + b - 1) / b;
  c.seconds[0] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

double throughput(const Plan &p, const Network &net, const DsaHardware &hw) {
  return p.totalCycles() > 0 ? static_cast<double>(net.batch) * hw.frequencyHz / p.totalCycles() : 0;
}

Evaluation evaluationOf(const Network &net, const DsaHardware &hw, const Plan &p) {
  Evaluation e = evaluationHeader(net, hw, "sub-graph");
  e.latencyCycles = p.totalCycles();
  return e;
}

namespace {

std::string bindingText(const std::vector<int64_t> &b) {
  std::string s;
  for (int64_t f : b)
    s += (s.empty() ? "" : "x") + std::to_string(f);
  return s;
}

// No wall time here: report.json holds the inputs' results alone, the same
// bytes on any machine and load (docs/limits.md, "Determinism").
nlohmann::ordered_json costJson(const Plan &p, const Network &net, const DsaHardware &hw) {
  const PlanCost &c = p.cost;
  return {{"batch_per_iteration", p.clusterBatch},
          {"iterations", p.iterations},
          {"latency_cycles", p.totalCycles()},
          {"latency_ms", p.totalCycles() / hw.frequencyHz * 1e3},
          {"throughput_per_s", throughput(p, net, hw)},
          {"compute_cycles", c.computeCycles},
          {"ddr_bytes", c.ddrBytes},
          {"gb_bytes", c.gbBytes},
          {"tensors", {{"DDR", c.tensors[2]}, {"GB", c.tensors[1]}, {"LB", c.tensors[0]}}},
          {"spills", c.spills},
          {"peak_lb_bytes", c.peakLbBytes},
          {"sub_graphs", p.subGraphs.size()},
          {"instances", p.instances.size()}};
}

} // namespace

std::string dsaReportJson(const Network &net, const DsaHardware &hw, const DsaComparison &c,
                          const std::string &scheduleFile) {
  const Plan &gt = c.graphTurbo;
  nlohmann::ordered_json sgs = nlohmann::ordered_json::array();
  for (const SubGraph &sg : gt.subGraphs) {
    nlohmann::ordered_json layers = nlohmann::ordered_json::array(), info = nlohmann::ordered_json::array();
    for (int l : sg.layers)
      layers.push_back(net.layers[static_cast<size_t>(l)].name);
    for (const Split &s : sg.split.info)
      info.push_back({{"dim", s.dim}, {"ops", s.ops}, {"factor", s.factor}});
    nlohmann::ordered_json best;
    if (sg.split.best)
      best = {{"dim", sg.split.best->dim}, {"ops", sg.split.best->ops}, {"factor", sg.split.best->factor}};
    sgs.push_back({{"name", gt.subGraphName(sgs.size())},
                   {"exit", net.layers[static_cast<size_t>(sg.exit())].name},
                   {"layers", layers},
                   {"peak_bytes", sg.split.peakBytes},
                   {"split_info", info},
                   {"best_split", best},
                   {"recomputation_rejected_dims", sg.split.rejectedByRecomputation}});
  }
  nlohmann::ordered_json order = nlohmann::ordered_json::array();
  for (int i : gt.order) {
    const Instance &in = gt.instances[static_cast<size_t>(i)];
    nlohmann::ordered_json from = nlohmann::ordered_json::array();
    for (size_t k = 0; k < in.producers.size(); ++k) {
      const Instance &p = gt.instances[static_cast<size_t>(in.producers[k])];
      from.push_back({{"sub_graph", p.subGraph},
                      {"instance", p.index},
                      {"move", in.moves[k] == Move::Copy ? "copy" : in.moves[k] == Move::Redistribute ? "redistribute" : "none"}});
    }
    order.push_back({{"sub_graph", in.subGraph},
                     {"instance", in.index},
                     {"output_box", {in.outBox.lo, in.outBox.hi}},
                     {"binding", in.binding},
                     {"scope", scopeName(in.scope)},
                     {"producers", from}});
  }
  nlohmann::ordered_json out = {
      {"network", net.name},
      {"hardware", hw.name},
      {"batch", c.batch},
      {"batch_per_cluster", c.clusterBatch},
      {"clusters", hw.clusters},
      {"cores_per_cluster", hw.coresPerCluster},
      {"graphturbo",
       {{"cost", costJson(gt, net, hw)},
        {"order", gt.orderKind},
        {"peak_lb_bytes_bfs", gt.peakLbBfs},
        {"peak_lb_bytes_dfs", gt.peakLbDfs},
        {"concat_ops", gt.concatOps},
        {"copy_ops", gt.copyOps},
        {"redistribution_ops", gt.redistributionOps},
        {"sub_graphs", sgs},
        {"instances", order}}},
      {"astitch_like", {{"cost", costJson(c.fusionOnly, net, hw)}}},
      {"tvm_like", {{"cost", costJson(c.layerByLayer, net, hw)}}},
      {"speedup",
       {{"over_tvm_like", c.layerByLayer.totalCycles() / gt.totalCycles()},
        {"over_astitch_like", c.fusionOnly.totalCycles() / gt.totalCycles()}}},
  };
  if (!scheduleFile.empty())
    out["schedule"] = scheduleFile;
  return dumpReport(out);
}

void planTrace(const Network &net, const DsaHardware &hw, const DsaComparison &c, ChromeTrace &trace) {
  const Plan &gt = c.graphTurbo;
  // Every cluster with a share of the batch runs the same plan (§5.1).
  const int64_t active = std::min(hw.clusters, (c.batch + c.clusterBatch - 1) / c.clusterBatch);
  DFLC_CHECK(gt.cost.perInstance.size() == gt.order.size()) << "planTrace() of a plan not evaluated";
  std::vector<int64_t> instancesOf(gt.subGraphs.size(), 0);   // per sub-graph
  for (const Instance &in : gt.instances)
    ++instancesOf[static_cast<size_t>(in.subGraph)];
  for (int64_t k = 0; k < active; ++k) {
    const int track = trace.track("graphturbo: " + net.name + " on " + hw.name, "cluster " + std::to_string(k));
    double now = 0;
    for (int64_t it = 0; it < gt.iterations; ++it)
      for (size_t pos = 0; pos < gt.order.size(); ++pos) {
        const Instance &in = gt.instances[static_cast<size_t>(gt.order[pos])];
        const double cycles = gt.cost.perInstance[pos];
        if (!trace.full()) {
          nlohmann::ordered_json layers = nlohmann::ordered_json::array();
          for (int l : gt.subGraphs[static_cast<size_t>(in.subGraph)].layers)
            layers.push_back(net.layers[static_cast<size_t>(l)].name);
          trace.complete(track, gt.subGraphName(static_cast<size_t>(in.subGraph)), now, cycles,
                         {{"sub_graph", gt.subGraphName(static_cast<size_t>(in.subGraph))},
                          {"layers", layers},
                          {"instance", in.index},
                          {"instances", instancesOf[static_cast<size_t>(in.subGraph)]},
                          {"iteration", it},
                          {"output_box", {in.outBox.lo, in.outBox.hi}},
                          {"binding", in.binding},
                          {"cores", in.cores()},
                          {"scope", scopeName(in.scope)}});
        }
        now += cycles;
      }
  }
  trace.note("clusters", hw.clusters);
  trace.note("clusters_with_work", active);
  trace.note("latency_cycles", gt.totalCycles());
}

std::string dsaReportText(const Network &net, const DsaHardware &hw, const DsaComparison &c) {
  std::ostringstream os;
  const Plan &gt = c.graphTurbo;
  os << net.name << " on " << hw.name << ": batch " << c.batch << ", " << c.clusterBatch << " per cluster on "
     << hw.clusters << " clusters x " << hw.coresPerCluster << " cores\n";
  os << "graphturbo runs " << gt.clusterBatch << " per iteration, " << gt.iterations << " iteration"
     << (gt.iterations == 1 ? "" : "s") << "\n";
  os << "graphturbo: " << gt.subGraphs.size() << " sub-graphs, " << gt.instances.size() << " instances, order "
     << gt.orderKind << " (peak LB " << formatBytes(static_cast<double>(gt.peakLbBfs)) << " bfs, "
     << formatBytes(static_cast<double>(gt.peakLbDfs)) << " dfs); " << gt.concatOps << " concat, " << gt.copyOps
     << " copy, " << gt.redistributionOps << " redistribution ops; " << gt.cost.spills << " spills\n";
  for (size_t s = 0; s < gt.subGraphs.size(); ++s) {
    const SubGraph &sg = gt.subGraphs[s];
    int first = -1;
    for (size_t i = 0; i < gt.instances.size() && first < 0; ++i)
      if (gt.instances[i].subGraph == static_cast<int>(s))
        first = static_cast<int>(i);
    const Instance &in = gt.instances[static_cast<size_t>(first)];
    os << "  " << gt.subGraphName(s) << " " << net.layers[static_cast<size_t>(sg.layers.front())].name;
    if (sg.layers.size() > 1)
      os << " .. " << net.layers[static_cast<size_t>(sg.exit())].name;
    os << " (" << sg.layers.size() << " layers): ";
    if (sg.split.best)
      os << sg.split.best->factor << " instances along dim " << sg.split.best->dim;
    else
      os << (sg.split.info.empty() ? "1 instance (no split fits LB)" : "1 instance (not split)");
    os << ", binding " << bindingText(in.binding) << ", output in " << scopeName(in.scope) << "\n";
  }
  os << "\n  approach      batch/iter  latency (ms)   throughput/s   speedup  tensors DDR/GB/LB  sub-graphs  time (s)\n";
  auto row = [&](const char *name, const Plan &p, double seconds) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-13s %10lld %13.3f %14.1f %8.2fx %18s %11zu %9.3f\n", name,
                  static_cast<long long>(p.clusterBatch), p.totalCycles() / hw.frequencyHz * 1e3, throughput(p, net, hw),
                  c.layerByLayer.totalCycles() / p.totalCycles(),
                  (std::to_string(p.cost.tensors[2]) + "/" + std::to_string(p.cost.tensors[1]) + "/" +
                   std::to_string(p.cost.tensors[0])).c_str(),
                  p.subGraphs.size(), seconds);
    os << line;
  };
  row("tvm-like", c.layerByLayer, c.seconds[2]);
  row("astitch-like", c.fusionOnly, c.seconds[1]);
  row("graphturbo", gt, c.seconds[0]);
  os << "graphturbo: " << evaluationSummary(evaluationOf(net, hw, gt)) << "\n";
  return os.str();
}

std::string dsaDiffText(const Network &net, const DsaHardware &hw, const DsaComparison &a, const std::string &labelA,
                        const DsaComparison &b, const std::string &labelB) {
  // A plan's sub-graphs, one per exit: "s: a .. c, 2 instances".
  auto subGraphs = [&](const Plan &p) {
    std::string out;
    for (size_t k = 0; k < p.subGraphs.size(); ++k) {
      const SubGraph &sg = p.subGraphs[k];
      size_t instances = 0;
      for (const Instance &in : p.instances)
        instances += in.subGraph == static_cast<int>(k);
      out += (out.empty() ? "" : " | ") + p.subGraphName(k) + ": " + net.layers[static_cast<size_t>(sg.layers.front())].name +
             (sg.layers.size() > 1 ? " .. " + net.layers[static_cast<size_t>(sg.exit())].name : "") + ", " +
             std::to_string(instances) + (instances == 1 ? " instance" : " instances");
    }
    return out;
  };
  std::ostringstream os;
  os << "diff of two DSA schedules for " << net.name << " on " << hw.name << "\n  A: " << labelA << "\n  B: " << labelB
     << "\n\n"
     << evaluationDiffText(evaluationOf(net, hw, a.graphTurbo), evaluationOf(net, hw, b.graphTurbo))
     << "\nsub-graphs\n  A: " << subGraphs(a.graphTurbo) << "\n  B: " << subGraphs(b.graphTurbo) << "\n";
  return os.str();
}

} // namespace dfl::graph
