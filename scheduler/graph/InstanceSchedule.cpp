#include "scheduler/graph/InstanceSchedule.h"

#include "model/Geometry.h"
#include "support/Check.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace dfl::graph {

int64_t coresOf(const std::vector<int64_t> &binding) {
  int64_t c = 1;
  for (int64_t b : binding)
    c *= b;
  return std::max<int64_t>(1, c);
}

int64_t Instance::cores() const { return coresOf(binding); }

// ---- §3.3: instances and their order -------------------------------------------

std::vector<Instance> splitInstances(const GraphView &g, const std::vector<SubGraph> &sgs) {
  std::vector<Instance> inst;
  std::map<int, std::pair<int, int>> instancesOfExit;   // exit layer -> [first, last) instance
  for (size_t s = 0; s < sgs.size(); ++s) {
    const SubGraph &sg = sgs[s];
    const Box whole = g.outputBox(sg.exit());
    const int64_t f = sg.split.best ? sg.split.best->factor : 1;
    const size_t d = sg.split.best ? static_cast<size_t>(sg.split.best->dim) : 0;
    const int first = static_cast<int>(inst.size());
    for (int64_t i = 0; i < f; ++i) {
      Instance in;
      in.subGraph = static_cast<int>(s);
      in.index = static_cast<int>(i);
      in.outBox = f > 1 ? piece(whole, d, f, i) : whole;
      in.fp = propagate(g, sg.layers, in.outBox);
      in.outBytes = g.bytes(in.outBox);
      const int self = static_cast<int>(inst.size());
      for (const auto &[src, need] : in.fp.external) {
        if (src < 0)
          continue;
        auto [lo, hi] = instancesOfExit.at(src);
        for (int p = lo; p < hi; ++p)
          if (need.intersects(inst[static_cast<size_t>(p)].outBox)) {   // otherwise redundant
            in.producers.push_back(p);
            inst[static_cast<size_t>(p)].consumers.push_back(self);
          }
      }
      in.moves.assign(in.producers.size(), Move::None);
      inst.push_back(std::move(in));
    }
    instancesOfExit[sg.exit()] = {first, static_cast<int>(inst.size())};
  }
  return inst;
}

std::vector<int> orderBfs(const std::vector<Instance> &inst) {
  std::vector<size_t> indeg(inst.size());
  std::deque<int> queue;
  for (size_t i = 0; i < inst.size(); ++i)
    if ((indeg[i] = inst[i].producers.size()) == 0)
      queue.push_back(static_cast<int>(i));
  std::vector<int> order;
  while (!queue.empty()) {
    int i = queue.front();
    queue.pop_front();
    order.push_back(i);
    for (int c : inst[static_cast<size_t>(i)].consumers)
      if (--indeg[static_cast<size_t>(c)] == 0)
        queue.push_back(c);
  }
  DFLC_CHECK(order.size() == inst.size()) << "the instance graph has a cycle";
  return order;
}

std::vector<int> orderDfs(const std::vector<Instance> &inst) {
  std::vector<size_t> indeg(inst.size());
  for (size_t i = 0; i < inst.size(); ++i)
    indeg[i] = inst[i].producers.size();
  std::vector<int> bfs = orderBfs(inst);   // line 1: G visited in any order; BFS as in Fig. 7
  std::deque<int> visit(bfs.begin(), bfs.end());
  std::vector<int> ready, order;
  std::vector<char> inVisit(inst.size(), 1);
  while (!visit.empty() || !ready.empty()) {
    for (auto it = visit.begin(); it != visit.end();) {   // lines 3-4
      if (indeg[static_cast<size_t>(*it)] == 0) {
        ready.push_back(*it);
        inVisit[static_cast<size_t>(*it)] = 0;
        it = visit.erase(it);
      } else {
        ++it;
      }
    }
    while (!ready.empty()) {   // lines 5-14
      auto p = std::find_if(ready.rbegin(), ready.rend(), [&](int i) { return indeg[static_cast<size_t>(i)] == 0; });
      if (p == ready.rend())
        break;   // what is ready waits for producers still in visit
      int sgi = *p;
      ready.erase(std::next(p).base());
      order.push_back(sgi);
      for (int c : inst[static_cast<size_t>(sgi)].consumers) {
        --indeg[static_cast<size_t>(c)];
        if (inVisit[static_cast<size_t>(c)]) {
          inVisit[static_cast<size_t>(c)] = 0;
          visit.erase(std::find(visit.begin(), visit.end(), c));
          ready.push_back(c);
        }
      }
    }
  }
  DFLC_CHECK(order.size() == inst.size()) << "Algorithm 3 lost an instance";
  return order;
}

namespace {

std::vector<int> positions(const std::vector<int> &order) {
  std::vector<int> pos(order.size());
  for (size_t k = 0; k < order.size(); ++k)
    pos[static_cast<size_t>(order[k])] = static_cast<int>(k);
  return pos;
}

int lastUse(const Instance &in, const std::vector<int> &pos) {
  int last = -1;
  for (int c : in.consumers)
    last = std::max(last, pos[static_cast<size_t>(c)]);
  return last;
}

} // namespace

int64_t peakLiveBytes(const std::vector<Instance> &inst, const std::vector<int> &order) {
  const std::vector<int> pos = positions(order);
  std::vector<int> last(inst.size());
  for (size_t i = 0; i < inst.size(); ++i)
    last[i] = lastUse(inst[i], pos);
  int64_t peak = 0;
  std::set<int> live;   // produced, consumers pending
  for (size_t k = 0; k < order.size(); ++k) {
    const Instance &in = inst[static_cast<size_t>(order[k])];
    int64_t bytes = in.fp.peakBytes;
    for (int j : live)
      if (std::find(in.producers.begin(), in.producers.end(), j) == in.producers.end())
        bytes += inst[static_cast<size_t>(j)].outBytes;
    peak = std::max(peak, bytes);
    for (auto it = live.begin(); it != live.end();)
      it = last[static_cast<size_t>(*it)] <= static_cast<int>(k) ? live.erase(it) : std::next(it);
    if (last[static_cast<size_t>(order[k])] > static_cast<int>(k))
      live.insert(order[k]);
  }
  return peak;
}

// ---- §3.4-3.5: core binding, buffer scopes, data movement ops ------------------

std::vector<int64_t> plainBinding(const Box &b, int64_t cores) {
  std::vector<int64_t> bind(b.lo.size(), 1);
  int64_t left = cores;
  for (size_t d = 0; d < b.lo.size() && left > 1; ++d) {
    int64_t p = 1;
    while (p * 2 <= left)
      p *= 2;
    for (; p > 1; p /= 2)
      if ((b.hi[d] - b.lo[d]) % p == 0)
        break;
    bind[d] = p;
    left /= p;
  }
  return bind;
}

namespace {

/// infer_binding: the binding of producer instance j's output that consumer
/// instance i's binding implies — each bound dimension of i's output mapped to
/// the dimension of j's output it cuts — or nullopt if one cuts none (every
/// core would need all of it) or the factor does not divide.
class BindingInference {
public:
  BindingInference(const GraphView &g, const Plan &plan) : g_(g), plan_(plan) {}

  std::optional<std::vector<int64_t>> operator()(int i, int j, const std::vector<int64_t> &bind) {
    const Instance &ci = plan_.instances[static_cast<size_t>(i)], &pj = plan_.instances[static_cast<size_t>(j)];
    auto key = std::make_tuple(ci.subGraph, pj.subGraph, bind);
    if (auto it = cache_.find(key); it != cache_.end())
      return it->second;
    const SubGraph &sg = plan_.subGraphs[static_cast<size_t>(ci.subGraph)];
    const int src = plan_.subGraphs[static_cast<size_t>(pj.subGraph)].exit();
    const Box &need = ci.fp.external.at(src);
    std::optional<std::vector<int64_t>> out = std::vector<int64_t>(pj.outBox.lo.size(), 1);
    for (size_t k = 0; k < bind.size() && out; ++k) {
      if (bind[k] <= 1)
        continue;
      Footprint part = propagate(g_, sg.layers, piece(ci.outBox, k, bind[k], 0));
      const Box cut = part.external.count(src) ? part.external.at(src) : Box{};
      if (cut.empty())
        continue;   // the cores' pieces along k need none of it
      std::optional<size_t> m;
      for (size_t d = 0; d < need.lo.size() && !m; ++d)
        if (cut.hi[d] - cut.lo[d] < need.hi[d] - need.lo[d])
          m = d;
      if (!m || (pj.outBox.hi[*m] - pj.outBox.lo[*m]) % ((*out)[*m] * bind[k]) != 0)
        out.reset();
      else
        (*out)[*m] *= bind[k];
    }
    cache_.emplace(key, out);
    return out;
  }

private:
  const GraphView &g_;
  const Plan &plan_;
  std::map<std::tuple<int, int, std::vector<int64_t>>, std::optional<std::vector<int64_t>>> cache_;
};

} // namespace

void bindCores(const GraphView &g, Plan &plan) {
  auto &inst = plan.instances;
  const int64_t cores = g.hw().coresPerCluster;
  BindingInference infer(g, plan);
  std::vector<std::optional<std::vector<int64_t>>> bind(inst.size());
  std::vector<Scope> scope(inst.size(), Scope::LB);
  for (auto it = plan.order.rbegin(); it != plan.order.rend(); ++it) {   // Algorithm 4, reverse order
    const int i = *it;
    const size_t ui = static_cast<size_t>(i);
    const std::vector<int64_t> plain = plainBinding(inst[ui].outBox, cores);
    if (!bind[ui] || scope[ui] != Scope::LB) {   // lines 4-14
      bind[ui] = plain;
      for (int j : inst[ui].producers) {
        auto inferred = infer(i, j, *bind[ui]);
        if (!inferred)
          continue;
        auto &bj = bind[static_cast<size_t>(j)];
        if (!bj)
          bj = inferred;
        else if (*bj != *inferred)
          scope[static_cast<size_t>(j)] = Scope::GB;
      }
    } else if (coresOf(plain) > coresOf(*bind[ui])) {   // line 16: the binding using more cores
      bind[ui] = plain;
    }
  }
  for (size_t i = 0; i < inst.size(); ++i) {
    inst[i].binding = *bind[i];
    inst[i].declared = inst[i].scope = inst[i].consumers.empty() ? Scope::DDR : scope[i];   // a network output goes to DDR
  }
}

void connect(const GraphView &g, Plan &plan) {
  auto &inst = plan.instances;
  BindingInference infer(g, plan);
  plan.concatOps = plan.copyOps = plan.redistributionOps = 0;
  for (size_t i = 0; i < inst.size(); ++i) {
    std::map<int, int> perSubGraph;
    for (size_t k = 0; k < inst[i].producers.size(); ++k) {
      const int j = inst[i].producers[k];
      ++perSubGraph[inst[static_cast<size_t>(j)].subGraph];
      auto needed = infer(static_cast<int>(i), j, inst[i].binding);
      Move &m = inst[i].moves[k];
      if (inst[static_cast<size_t>(j)].declared != Scope::LB)
        m = Move::Copy;
      else if (!needed || *needed != inst[static_cast<size_t>(j)].binding)
        m = Move::Redistribute;
      plan.copyOps += m == Move::Copy;
      plan.redistributionOps += m == Move::Redistribute;
    }
    for (const auto &[sg, n] : perSubGraph)
      plan.concatOps += n > 1;
  }
}

void bindAndConnect(const GraphView &g, Plan &plan) {
  bindCores(g, plan);
  connect(g, plan);
}

// ---- §4.3-4.4: allocation, spilling, latency -----------------------------------

namespace {

/// §4.4: an instance's latency from its layers' tasks, serial or with the
/// units and both DMA paths overlapped; adds the traffic and compute to `cost`.
double instanceCycles(std::map<int, TaskCost> &task, int first, bool overlap, double gbRate, double ddrRate,
                    PlanCost &cost) {
  double mat = 0, vec = 0, gb = 0, ddr = 0, serial = 0;
  for (const auto &[l, t] : task) {
    const double w = t.weightGbBytes / gbRate + t.weightDdrBytes / ddrRate;
    mat += t.matrix;
    vec += t.vector;
    gb += (t.gbBytes + t.weightGbBytes) / gbRate;
    ddr += (t.ddrBytes + t.weightDdrBytes) / ddrRate;
    serial += w + std::max(t.matrix + t.vector, t.gbBytes / gbRate + t.ddrBytes / ddrRate);
    cost.ddrBytes += t.ddrBytes + t.weightDdrBytes;
    cost.gbBytes += t.gbBytes + t.weightGbBytes;
    cost.computeCycles += t.matrix + t.vector;
  }
  // With overlap the units and both DMA paths run at once; only the first
  // layer's weights must arrive before any unit starts (their bytes are in
  // the DMA totals already).
  const TaskCost &t0 = task[first];
  const double prologue = t0.weightGbBytes / gbRate + t0.weightDdrBytes / ddrRate;
  return overlap ? std::max({mat + prologue, vec + prologue, gb, ddr}) : serial;
}

} // namespace

PlanCost evaluate(const GraphView &g, Plan &plan) {
  const DsaHardware &hw = g.hw();
  auto &inst = plan.instances;
  const std::vector<int> pos = positions(plan.order);
  const double gbRate = hw.gbBytesPerCycle, ddrRate = g.ddrBytesPerCycle();
  const int64_t lbCap = hw.clusterLbBytes();
  PlanCost cost;
  std::vector<int> last(inst.size());
  for (size_t i = 0; i < inst.size(); ++i) {
    last[i] = lastUse(inst[i], pos);
    inst[i].scope = inst[i].declared;
  }
  std::set<int> live;           // outputs still waiting for consumers
  std::vector<char> sgWeightsStaged(plan.subGraphs.size(), 0);
  auto residentBytes = [&](Scope s, const std::vector<int> &except) {
    int64_t b = 0;
    for (int j : live)
      if (inst[static_cast<size_t>(j)].scope == s && std::find(except.begin(), except.end(), j) == except.end())
        b += inst[static_cast<size_t>(j)].outBytes;
    return b;
  };
  for (size_t k = 0; k < plan.order.size(); ++k) {
    Instance &in = inst[static_cast<size_t>(plan.order[k])];
    const SubGraph &sg = plan.subGraphs[static_cast<size_t>(in.subGraph)];
    std::map<int, TaskCost> task;   // by layer
    const int first = sg.layers.front();
    // Weights: DDR -> GB once per sub-graph when they fit half the GB, GB -> LB per instance.
    int64_t sgWeights = 0;
    for (int l : sg.layers)
      sgWeights += static_cast<int64_t>(g.net().layers[static_cast<size_t>(l)].wgtSize) * hw.wordBytes();
    const bool staged = weightsStaged(g, sg.layers);
    const int64_t gbCap = hw.gbBytes - (staged ? sgWeights : 0);
    for (const auto &[l, b] : in.fp.weights) {
      task[l].weightGbBytes += static_cast<double>(g.bytes(b));
      if (!staged || !sgWeightsStaged[static_cast<size_t>(in.subGraph)])
        task[l].weightDdrBytes += static_cast<double>(g.bytes(b));
    }
    sgWeightsStaged[static_cast<size_t>(in.subGraph)] = 1;
    // §4.3: make room in LB for the working set, spilling the longest-lived first.
    const int64_t working = in.fp.peakBytes;
    cost.peakLbBytes = std::max(cost.peakLbBytes, working + residentBytes(Scope::LB, in.producers));
    auto spillLongest = [&](Scope from, Scope to) {
      int victim = -1;
      for (int j : live)
        if (inst[static_cast<size_t>(j)].scope == from &&
            std::find(in.producers.begin(), in.producers.end(), j) == in.producers.end() &&
            (victim < 0 || last[static_cast<size_t>(j)] - pos[static_cast<size_t>(j)] >
                               last[static_cast<size_t>(victim)] - pos[static_cast<size_t>(victim)]))
          victim = j;
      if (victim < 0)
        return false;
      Instance &v = inst[static_cast<size_t>(victim)];
      v.scope = to;
      (to == Scope::GB ? task[first].gbBytes : task[first].ddrBytes) += static_cast<double>(v.outBytes);
      ++cost.spills;
      return true;
    };
    auto gbOverflow = [&](int64_t extra) {
      while (residentBytes(Scope::GB, {}) + extra > gbCap && spillLongest(Scope::GB, Scope::DDR)) {
      }
      return residentBytes(Scope::GB, {}) + extra > gbCap;
    };
    while (working + residentBytes(Scope::LB, in.producers) > lbCap) {
      Scope to = plan.spillTo;
      if (to == Scope::GB && gbOverflow(0))
        to = Scope::DDR;
      if (!spillLongest(Scope::LB, to))
        break;
    }
    const bool fitsLb = working + residentBytes(Scope::LB, in.producers) <= lbCap;
    // Inputs: from LB (moved between cores if the bindings differ), GB or DDR.
    for (const auto &[src, need] : in.fp.external) {
      int reader = sg.layers.back();   // the first layer reading it pays for the transfer
      for (auto l = sg.layers.rbegin(); l != sg.layers.rend(); ++l)
        for (const Access &a : g.net().layers[static_cast<size_t>(*l)].nest.accesses)
          if (readsSource(g.net(), a, g.net().layers[static_cast<size_t>(*l)].nest.output) && g.source(a) == src)
            reader = *l;
      if (src < 0) {
        task[reader].ddrBytes += static_cast<double>(g.bytes(need));
        continue;
      }
      for (size_t p = 0; p < in.producers.size(); ++p) {
        const Instance &pi = inst[static_cast<size_t>(in.producers[p])];
        if (plan.subGraphs[static_cast<size_t>(pi.subGraph)].exit() != src)
          continue;
        const double bytes = static_cast<double>(g.bytes(need.intersect(pi.outBox)));
        if (pi.scope == Scope::DDR)
          task[reader].ddrBytes += bytes;
        else if (pi.scope == Scope::GB)
          task[reader].gbBytes += bytes;
        else if (in.moves[p] == Move::Redistribute)
          task[reader].gbBytes += 2 * bytes;   // through the GB, out and back
      }
    }
    // Compute: the matrix or vector units of the bound cores; fused activations on the vector units.
    const double cores = static_cast<double>(in.cores());
    for (const auto &[l, it] : in.fp.iteration) {
      const double points = static_cast<double>(it.volume()) * g.density(l);
      (g.onMatrixUnit(l) ? task[l].matrix : task[l].vector) +=
          points / (hw.rate(g.onMatrixUnit(l) ? DsaUnitKind::Matrix : DsaUnitKind::Vector) * cores);
      const double acts = static_cast<double>(g.net().layers[static_cast<size_t>(l)].activations.size());
      task[l].vector += acts * static_cast<double>(in.fp.output.at(l).volume()) / (hw.rate(DsaUnitKind::Vector) * cores);
    }
    // Intermediates: in LB when the working set fits, else GB (or DDR), out and back.
    for (size_t p = 0; p + 1 < sg.layers.size(); ++p) {
      const int l = sg.layers[p];
      const int64_t bytes = g.bytes(in.fp.output.at(l));
      if (bytes == 0)
        continue;   // this piece needs none of it
      if (fitsLb) {
        ++cost.tensors[static_cast<int>(Scope::LB)];
        continue;
      }
      const bool toGb = plan.spillTo == Scope::GB && !gbOverflow(bytes);
      (toGb ? task[l].gbBytes : task[l].ddrBytes) += 2.0 * static_cast<double>(bytes);
      ++cost.tensors[static_cast<int>(toGb ? Scope::GB : Scope::DDR)];
    }
    // The output: where Algorithm 4 declared it, unless it does not fit there.
    const int exit = sg.layers.back();
    if (in.scope == Scope::LB && (!fitsLb || in.outBytes > lbCap))
      in.scope = plan.spillTo;
    if (in.scope == Scope::GB && gbOverflow(in.outBytes))
      in.scope = Scope::DDR;
    if (in.scope == Scope::GB)
      task[exit].gbBytes += static_cast<double>(in.outBytes);
    else if (in.scope == Scope::DDR)
      task[exit].ddrBytes += static_cast<double>(in.outBytes);
    cost.perInstance.push_back(instanceCycles(task, first, plan.overlap, gbRate, ddrRate, cost));
    cost.cycles += cost.perInstance.back();
    // Bookkeeping of what is live.
    for (auto it = live.begin(); it != live.end();)
      it = last[static_cast<size_t>(*it)] <= static_cast<int>(k) ? live.erase(it) : std::next(it);
    if (last[static_cast<size_t>(plan.order[k])] > static_cast<int>(k))
      live.insert(plan.order[k]);
  }
  for (const Instance &in : inst)
    ++cost.tensors[static_cast<int>(in.scope)];
  plan.cost = cost;
  return cost;
}

// ---- the three schedulers -------------------------------------------------------

namespace {

Plan planOf(const GraphView &g, std::string approach, std::vector<SubGraph> sgs) {
  Plan p;
  p.approach = std::move(approach);
  p.subGraphs = std::move(sgs);
  p.instances = splitInstances(g, p.subGraphs);
  return p;
}

/// One sub-graph per group of layers, unsplit, its peak from its footprint.
std::vector<SubGraph> unsplit(const GraphView &g, const std::vector<std::vector<int>> &groups) {
  std::vector<SubGraph> out;
  for (const auto &layers : groups) {   // in order of their exits, as Algorithm 2's
    SubGraph sg{layers, {}};
    sg.split.peakBytes = propagate(g, layers, g.outputBox(layers.back())).peakBytes;
    out.push_back(std::move(sg));
  }
  std::sort(out.begin(), out.end(), [](const SubGraph &a, const SubGraph &b) { return a.exit() < b.exit(); });
  return out;
}

void bindPlainly(const GraphView &g, Plan &p, Scope scope) {
  for (Instance &in : p.instances) {
    in.binding = plainBinding(in.outBox, g.hw().coresPerCluster);
    in.declared = in.scope = in.consumers.empty() ? Scope::DDR : scope;
  }
}

} // namespace

Plan betterOrder(const GraphView &g, Plan p, void (*bind)(const GraphView &, Plan &)) {
  std::vector<int> bfs = orderBfs(p.instances), dfs = orderDfs(p.instances);
  p.peakLbBfs = peakLiveBytes(p.instances, bfs);
  p.peakLbDfs = peakLiveBytes(p.instances, dfs);
  Plan other = p;
  p.order = bfs;
  p.orderKind = "bfs";
  other.order = dfs;
  other.orderKind = "dfs";
  for (Plan *q : {&p, &other}) {
    bind(g, *q);
    evaluate(g, *q);
  }
  const int64_t lb = g.hw().clusterLbBytes();
  const bool dfsFits = p.peakLbDfs <= lb, bfsFits = p.peakLbBfs <= lb;
  if (dfsFits != bfsFits ? dfsFits : (dfsFits ? p.peakLbDfs < p.peakLbBfs : other.cost.cycles < p.cost.cycles))
    return other;
  return p;
}

Plan scheduleGraphTurbo(const GraphView &g) {
  SubGraphSet set(g);
  set.group();
  Plan p = planOf(g, "graphturbo", set.subGraphs());
  p.overlap = true;
  p.spillTo = Scope::GB;
  return betterOrder(g, std::move(p), bindAndConnect);
}

namespace {

/// A baseline: the groups unsplit, in topological order, bound plainly, their
/// outputs declared in `outputs` and spilled to DDR, no overlap.
Plan baseline(const GraphView &g, std::string approach, const std::vector<std::vector<int>> &groups, Scope outputs) {
  Plan p = planOf(g, std::move(approach), unsplit(g, groups));
  p.order = orderBfs(p.instances);
  p.orderKind = "topological";
  p.spillTo = Scope::DDR;
  bindPlainly(g, p, outputs);
  evaluate(g, p);
  return p;
}

} // namespace

Plan scheduleLayerByLayer(const GraphView &g) {
  std::vector<std::vector<int>> groups;
  for (int l = 0; l < g.layers(); ++l)
    groups.push_back({l});
  return baseline(g, "tvm", groups, Scope::DDR);
}

Plan scheduleFusionOnly(const GraphView &g) {
  // AStitch stitches memory-intensive operators (vector units) to the
  // kernel of their producer when it is their only producer and they its only consumer.
  std::vector<std::vector<int>> groups;
  std::vector<int> groupOf(static_cast<size_t>(g.layers()), -1);
  for (int l = 0; l < g.layers(); ++l) {
    const auto &prods = g.producers(l);
    if (!g.onMatrixUnit(l) && prods.size() == 1 && g.consumers(prods[0]).size() == 1 &&
        groups[static_cast<size_t>(groupOf[static_cast<size_t>(prods[0])])].back() == prods[0]) {
      groupOf[static_cast<size_t>(l)] = groupOf[static_cast<size_t>(prods[0])];
      groups[static_cast<size_t>(groupOf[static_cast<size_t>(l)])].push_back(l);
      continue;
    }
    groupOf[static_cast<size_t>(l)] = static_cast<int>(groups.size());
    groups.push_back({l});
  }
  return baseline(g, "astitch", groups, Scope::LB);
}

} // namespace dfl::graph
