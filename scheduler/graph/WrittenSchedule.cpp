#include "scheduler/graph/WrittenSchedule.h"

#include "model/DflSyntax.h"
#include "support/Check.h"
#include "support/Format.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace dfl::graph {
namespace {

Issue issue(diag::ID id, SourceRange at, std::vector<std::string> args) { return {id, at, std::move(args), {}}; }

/// The sub-graphs `s` writes, in the order of their exits (what splitInstances
/// needs: producers first); `names[k]` is the k-th one's name.
std::optional<std::vector<SubGraph>> writtenSubGraphs(const GraphView &g, const DsaSchedule &s,
                                                      std::vector<std::string> &names, std::vector<int> &specOf,
                                                      std::vector<Issue> &issues) {
  std::vector<int> idx(s.subGraphs.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) {
    return s.subGraphs[static_cast<size_t>(a)].layers.back() < s.subGraphs[static_cast<size_t>(b)].layers.back();
  });
  std::vector<SubGraph> out;
  bool ok = true;
  for (int k : idx) {
    const DsaSubGraphSpec &spec = s.subGraphs[static_cast<size_t>(k)];
    SubGraph sg{spec.layers, splitInfo(g, spec.layers)};
    sg.split.best.reset();
    if (spec.splitDim) {
      const size_t d = static_cast<size_t>(*spec.splitDim);
      const Box whole = g.outputBox(sg.exit());
      DFLC_CHECK(d < whole.lo.size()) << "a split along dimension " << d << " of an output of " << whole.lo.size();
      const int64_t extent = whole.hi[d] - whole.lo[d];
      if (extent % spec.factor != 0) {
        issues.push_back(issue(diag::err_dsa_split, spec.splitRange,
                               {spec.name,
                                std::string("along ") + kDsaTensorDims[d] + " into " + std::to_string(spec.factor),
                                "its output '" + g.net().layers[static_cast<size_t>(sg.exit())].name + "' has " +
                                    std::to_string(extent) + " along " + kDsaTensorDims[d] +
                                    (d == 0 ? " (the samples per iteration)" : "") + ", which " +
                                    std::to_string(spec.factor) + " does not divide"}));
        ok = false;
        continue;
      }
      Split best{0, spec.factor, *spec.splitDim};
      for (const Split &t : sg.split.info)   // n_d where Algorithm 1 lists the split
        if (t.dim == best.dim && t.factor == best.factor)
          best.ops = t.ops;
      sg.split.best = best;
    }
    names.push_back(spec.name);
    specOf.push_back(k);
    out.push_back(std::move(sg));
  }
  if (!ok)
    return std::nullopt;
  return out;
}

std::string instanceName(const std::vector<std::string> &names, const Instance &in) {
  return syntax::instanceRef(names[static_cast<size_t>(in.subGraph)], in.index, false);
}

/// The order listed in `s`, or nullopt after E1209.
std::optional<std::vector<int>> listedOrder(const DsaSchedule &s, const Plan &p, const std::vector<int> &planOf,
                                            const std::vector<int> &firstOf, const std::vector<std::string> &names,
                                            std::vector<Issue> &issues) {
  std::vector<int> order;
  std::vector<char> ran(p.instances.size(), 0);
  for (size_t k = 0; k < s.listed.size(); ++k) {
    const auto &[spec, index] = s.listed[k];
    const int id = firstOf[static_cast<size_t>(planOf[static_cast<size_t>(spec)])] + static_cast<int>(index);
    const Instance &in = p.instances[static_cast<size_t>(id)];
    if (ran[static_cast<size_t>(id)]) {
      issues.push_back(issue(diag::err_dsa_order, s.listedRanges[k], {"runs " + instanceName(names, in) + " twice"}));
      return std::nullopt;
    }
    for (int j : in.producers)
      if (!ran[static_cast<size_t>(j)]) {
        issues.push_back(issue(diag::err_dsa_order, s.listedRanges[k],
                               {"runs " + instanceName(names, in) + " before " +
                                instanceName(names, p.instances[static_cast<size_t>(j)]) +
                                ", which produces part of what it reads"}));
        return std::nullopt;
      }
    ran[static_cast<size_t>(id)] = 1;
    order.push_back(id);
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < p.instances.size(); ++i)
    if (!ran[i])
      missing.push_back(instanceName(names, p.instances[i]));
  if (!missing.empty()) {
    std::vector<std::string> shown(missing.begin(), missing.begin() + std::min<size_t>(missing.size(), 5));
    issues.push_back(issue(diag::err_dsa_order, s.orderRange,
                           {"leaves out " + std::to_string(missing.size()) + " of the " +
                            std::to_string(p.instances.size()) + " instances: " + joinList(shown, ", ", " and ") +
                            (missing.size() > shown.size() ? ", …" : "") + "; it runs each instance once"}));
    return std::nullopt;
  }
  return order;
}

/// The instance items that apply to an instance: its own and its sub-graph's `[*]`.
struct Applying {
  const DsaInstanceSpec *own = nullptr, *all = nullptr;
};

/// Written bindings and scopes (plain binding and LB where not written);
/// false after E1210.
bool writtenBindings(const GraphView &g, const DsaSchedule &s, Plan &p, const std::vector<int> &planOf,
                     const std::vector<std::string> &names, std::vector<Applying> &applying,
                     std::vector<Issue> &issues) {
  std::map<std::pair<int, int64_t>, const DsaInstanceSpec *> specs;   // (plan sub-graph, index or -1)
  for (const DsaInstanceSpec &spec : s.instances)
    specs[{planOf[static_cast<size_t>(spec.subGraph)], spec.index.value_or(-1)}] = &spec;
  const int64_t cores = g.hw().coresPerCluster;
  std::set<const DsaInstanceSpec *> reported;
  applying.assign(p.instances.size(), {});
  for (size_t i = 0; i < p.instances.size(); ++i) {
    Instance &in = p.instances[i];
    Applying &a = applying[i];
    if (auto it = specs.find({in.subGraph, in.index}); it != specs.end())
      a.own = it->second;
    if (auto it = specs.find({in.subGraph, -1}); it != specs.end())
      a.all = it->second;
    const DsaInstanceSpec *bindBy = a.own && !a.own->binding.empty() ? a.own
                                    : a.all && !a.all->binding.empty() ? a.all
                                                                       : nullptr;
    const DsaInstanceSpec *scopeBy = a.own && a.own->scope ? a.own : a.all && a.all->scope ? a.all : nullptr;
    in.binding = bindBy ? bindBy->binding : plainBinding(in.outBox, cores);
    DFLC_CHECK(in.binding.size() == in.outBox.lo.size())
        << "a binding of " << in.binding.size() << " dimensions for an output of " << in.outBox.lo.size();
    in.declared = in.scope = scopeBy ? *scopeBy->scope : in.consumers.empty() ? Scope::DDR : Scope::LB;
    auto report = [&](const DsaInstanceSpec *by, SourceRange at, const char *what, const std::string &why) {
      if (reported.insert(by).second)
        issues.push_back(issue(diag::err_dsa_binding, at, {what, "instance " + instanceName(names, in), why}));
    };
    if (bindBy) {
      std::string why;
      for (size_t d = 0; d < in.binding.size() && why.empty(); ++d) {
        const int64_t extent = in.outBox.hi[d] - in.outBox.lo[d];
        if (extent % in.binding[d] != 0)
          why = std::to_string(in.binding[d]) + " cores along " + kDsaTensorDims[d] + " do not divide its output's " +
                std::to_string(extent) + " along " + kDsaTensorDims[d];
      }
      if (why.empty() && coresOf(in.binding) > cores)
        why = "it takes " + std::to_string(coresOf(in.binding)) + " cores; a cluster of '" + g.hw().name + "' has " +
              std::to_string(cores);
      if (!why.empty())
        report(bindBy, bindBy->bindRange, "the binding", why);
    }
    if (scopeBy && in.consumers.empty() && in.declared != Scope::DDR)
      report(scopeBy, scopeBy->scopeRange, "the scope",
             "no instance reads its output (it is the network's), so it is written to DDR");
  }
  return reported.empty();
}

/// W1212 for every `scope LB` written whose instances spilled.
void lbSpills(const GraphView &g, const Plan &p, const std::vector<Applying> &applying,
              const std::vector<std::string> &names, std::vector<Issue> &issues) {
  struct Count {
    int64_t covered = 0, spilled = 0;
    std::set<std::string> to;
    std::string what;
  };
  std::map<const DsaInstanceSpec *, Count> counts;
  std::vector<const DsaInstanceSpec *> inOrder;
  for (size_t i = 0; i < p.instances.size(); ++i) {
    const Applying &a = applying[i];
    const DsaInstanceSpec *by = a.own && a.own->scope ? a.own : a.all && a.all->scope ? a.all : nullptr;
    if (!by || *by->scope != Scope::LB)
      continue;
    Count &c = counts[by];
    if (c.covered++ == 0) {
      inOrder.push_back(by);
      c.what = syntax::instanceRef(names[static_cast<size_t>(p.instances[i].subGraph)], by->index, !by->index);
    }
    if (p.instances[i].scope != Scope::LB) {
      ++c.spilled;
      c.to.insert(scopeName(p.instances[i].scope));
    }
  }
  for (const DsaInstanceSpec *by : inOrder) {
    const Count &c = counts[by];
    if (c.spilled == 0)
      continue;
    std::vector<std::string> to(c.to.begin(), c.to.end());
    issues.push_back(issue(diag::warn_dsa_lb_spill, by->scopeRange,
                           {"the output of " + c.what,
                            c.covered == 1 ? std::string("it spills")
                                           : std::to_string(c.spilled) + " of its " + std::to_string(c.covered) +
                                                 " instances' outputs spill",
                            joinList(to, ", ", " and "), formatBytes(static_cast<double>(g.hw().clusterLbBytes()))}));
  }
}

} // namespace

std::optional<Plan> planFromSchedule(const GraphView &g, const DsaSchedule &s, std::vector<Issue> &issues) {
  Plan p;
  p.approach = "graphturbo";
  p.overlap = true;
  p.spillTo = Scope::GB;
  std::vector<std::string> names;
  std::vector<int> specOf;   // plan sub-graph -> written sub-graph
  if (s.subGraphs.empty()) {
    SubGraphSet set(g);
    set.group();
    p.subGraphs = set.subGraphs();
    for (size_t k = 0; k < p.subGraphs.size(); ++k)
      names.push_back(p.subGraphName(k));
  } else {
    auto sgs = writtenSubGraphs(g, s, names, specOf, issues);
    if (!sgs)
      return std::nullopt;
    p.subGraphs = std::move(*sgs);
    p.subGraphNames = names;
  }
  std::vector<int> planOf(specOf.size());
  for (size_t k = 0; k < specOf.size(); ++k)
    planOf[static_cast<size_t>(specOf[k])] = static_cast<int>(k);
  p.instances = splitInstances(g, p.subGraphs);
  std::vector<int> firstOf(p.subGraphs.size(), -1);
  for (size_t i = p.instances.size(); i-- > 0;)
    firstOf[static_cast<size_t>(p.instances[i].subGraph)] = static_cast<int>(i);
  std::vector<Applying> applying(p.instances.size());
  const bool written = !s.instances.empty();
  if (written && !writtenBindings(g, s, p, planOf, names, applying, issues))
    return std::nullopt;
  void (*bind)(const GraphView &, Plan &) = written ? connect : bindAndConnect;
  if (s.order == DsaSchedule::Order::Unset) {
    p = betterOrder(g, std::move(p), bind);
  } else {
    p.peakLbBfs = peakLiveBytes(p.instances, orderBfs(p.instances));
    p.peakLbDfs = peakLiveBytes(p.instances, orderDfs(p.instances));
    if (s.order == DsaSchedule::Order::Listed) {
      auto order = listedOrder(s, p, planOf, firstOf, names, issues);
      if (!order)
        return std::nullopt;
      p.order = std::move(*order);
      p.orderKind = "listed";
    } else {
      p.order = s.order == DsaSchedule::Order::Bfs ? orderBfs(p.instances) : orderDfs(p.instances);
      p.orderKind = s.order == DsaSchedule::Order::Bfs ? "bfs" : "dfs";
    }
    bind(g, p);
    evaluate(g, p);
  }
  if (written)
    lbSpills(g, p, applying, names, issues);
  return p;
}

DsaSchedule scheduleOf(const Plan &p) {
  DsaSchedule s;
  s.batchPerIteration = p.clusterBatch;
  for (size_t k = 0; k < p.subGraphs.size(); ++k) {
    const SubGraph &sg = p.subGraphs[k];
    DsaSubGraphSpec spec;
    spec.name = p.subGraphName(k);
    spec.layers = sg.layers;
    if (sg.split.best) {
      spec.splitDim = sg.split.best->dim;
      spec.factor = sg.split.best->factor;
    }
    s.subGraphs.push_back(std::move(spec));
  }
  s.order = p.orderKind == "bfs" ? DsaSchedule::Order::Bfs
            : p.orderKind == "dfs" ? DsaSchedule::Order::Dfs
                                   : DsaSchedule::Order::Listed;
  if (s.order == DsaSchedule::Order::Listed)
    for (int i : p.order)
      s.listed.emplace_back(p.instances[static_cast<size_t>(i)].subGraph, p.instances[static_cast<size_t>(i)].index);
  // Per sub-graph: the most common (binding, scope) for [*] (the first such
  // instance's on a tie), the others one by one.
  using Key = std::pair<std::vector<int64_t>, Scope>;
  for (size_t k = 0; k < p.subGraphs.size(); ++k) {
    std::vector<const Instance *> of;
    for (const Instance &in : p.instances)
      if (in.subGraph == static_cast<int>(k))
        of.push_back(&in);
    std::map<Key, int> count;
    for (const Instance *in : of)
      ++count[{in->binding, in->declared}];
    Key common{of.front()->binding, of.front()->declared};
    for (const Instance *in : of)
      if (count[{in->binding, in->declared}] > count[common])
        common = {in->binding, in->declared};
    auto spec = [&](std::optional<int64_t> index, const Key &key, std::optional<Scope> scope) {
      DsaInstanceSpec sp;
      sp.subGraph = static_cast<int>(k);
      sp.index = index;
      sp.binding = key.first;
      sp.scope = scope;
      s.instances.push_back(std::move(sp));
    };
    spec(std::nullopt, common, common.second == Scope::LB ? std::nullopt : std::optional(common.second));
    for (const Instance *in : of)
      if (Key{in->binding, in->declared} != common)
        spec(in->index, {in->binding, in->declared},
             in->declared == common.second ? std::nullopt : std::optional(in->declared));
  }
  return s;
}

} // namespace dfl::graph
