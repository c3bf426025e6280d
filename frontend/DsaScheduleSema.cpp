// Schedules on a cluster/core DSA (docs/language.md, "Schedules on a
// cluster/core DSA"): the items' names and forms, every layer in exactly one
// sub-graph with one exit, instance indices within their sub-graph's split.
// Whether a split divides its tensor, an order is topological and a binding
// fits its box and the cores needs the instances: the scheduler checks those
// (scheduler/graph/WrittenSchedule.h).
#include "frontend/SemaContext.h"
#include "model/DflSyntax.h"

#include <set>

namespace dfl::sema {
namespace {

const std::vector<std::string> kItems = {"subgraph", "order", "instance"};

std::optional<int> tensorDim(const std::string &name) {
  for (size_t d = 0; d < std::size(kDsaTensorDims); ++d)
    if (name == kDsaTensorDims[d])
      return static_cast<int>(d);
  return std::nullopt;
}

std::string tensorDimList() {
  std::vector<std::string> dims(std::begin(kDsaTensorDims), std::end(kDsaTensorDims));
  return joinList(dims, ", ", " and ");
}

class DsaScheduleAnalysis {
public:
  DsaScheduleAnalysis(const ast::ScheduleDecl &decl, const Model &model, int hardware, DiagnosticsEngine &diags)
      : decl_(decl), model_(model), diags_(diags) {
    s_.hardware = hardware;
    s_.range = decl.range;
  }

  DsaSchedule run() {
    for (size_t i = 0; i < model_.networks.size(); ++i)
      if (model_.networks[i].name == decl_.network.name)
        s_.network = static_cast<int>(i);
    if (s_.network < 0) {
      std::vector<std::string> names;
      for (const Network &n : model_.networks)
        names.push_back(n.name);
      diags_.report(decl_.network.range, diag::err_unknown_name)
          << "network" << decl_.network.name << Suggestion{decl_.network.range, decl_.network.name, names};
      return s_;
    }
    net_ = &model_.networks[static_cast<size_t>(s_.network)];
    const DsaHardware &hw = model_.dsaHardware[static_cast<size_t>(s_.hardware)];
    PropertyTable props("a schedule on a cluster/core DSA", {"batch_per_iteration"}, diags_);
    // Sub-graphs first: the order and the instances name them, wherever written.
    for (const ast::ScheduleItem &item : decl_.items) {
      if (auto *p = std::get_if<ast::Property>(&item)) {
        if (props.accept(*p))
          batchPerIteration(*p, hw);
      } else if (auto *g = std::get_if<ast::SubGraphDecl>(&item)) {
        if (kind(g->kind, "subgraph"))
          subGraph(*g);
      } else if (std::holds_alternative<ast::SegmentDecl>(item) || std::holds_alternative<ast::LayerSchedule>(item)) {
        const SourceRange r = std::visit([](const auto &i) { return i.range; }, item);
        diags_.report(r, diag::err_dsa_schedule_item)
            << "this item belongs to schedules on a memory hierarchy; hardware '" + hw.name +
                   "' is a cluster/core DSA, whose schedules take batch_per_iteration, subgraph, order and instance "
                   "items";
      }
    }
    partition();
    for (const ast::ScheduleItem &item : decl_.items) {
      if (auto *o = std::get_if<ast::OrderDecl>(&item)) {
        if (kind(o->kind, "order"))
          order(*o);
      } else if (auto *in = std::get_if<ast::InstanceDecl>(&item)) {
        if (kind(in->kind, "instance"))
          instance(*in);
      }
    }
    return s_;
  }

private:
  /// Whether an item's keyword is `expected`; E1205 with a suggestion if not.
  bool kind(const ast::Ident &k, const std::string &expected) {
    if (k.name == expected)
      return true;
    diags_.report(k.range, diag::err_dsa_schedule_item)
        << "unknown schedule item '" + k.name + "'" + didYouMean(k.name, kItems) +
               " (a schedule on a cluster/core DSA takes batch_per_iteration, subgraph, order and instance)";
    return false;
  }

  void batchPerIteration(const ast::Property &p, const DsaHardware &hw) {
    const int64_t clusters = std::max<int64_t>(hw.clusters, 1);   // 0 after an error in the hardware
    const int64_t share = (net_->batch + clusters - 1) / clusters;
    auto b = wholeNumber(p, diags_, false, share,
                         ", the samples each of the " + std::to_string(hw.clusters) +
                             " clusters runs of the batch of " + std::to_string(net_->batch));
    if (!b)
      return;
    s_.batchPerIteration = *b;
    s_.batchRange = p.range;
  }

  void subGraph(const ast::SubGraphDecl &g) {
    if (!subGraphNames_.define(g.name, "sub-graph", diags_))
      return;
    DsaSubGraphSpec sg;
    sg.name = g.name.name;
    sg.range = g.range;
    sg.nameRange = g.name.range;
    const int self = static_cast<int>(s_.subGraphs.size());
    for (const ast::Ident &id : g.layers) {
      const int l = scheduledLayer(*net_, id, diags_);
      if (l < 0)
        continue;
      if (auto [it, inserted] = owner_.emplace(l, std::pair{self, id.range}); !inserted) {
        const std::string other = s_.subGraphs.size() > static_cast<size_t>(it->second.first)
                                      ? s_.subGraphs[static_cast<size_t>(it->second.first)].name
                                      : sg.name;
        diags_.report(id.range, diag::err_dsa_partition).note(it->second.second, diag::note_previous_use)
            << id.name << "in sub-graph '" + other + "' already; every layer is in exactly one";
        continue;
      }
      sg.layers.push_back(l);
    }
    std::sort(sg.layers.begin(), sg.layers.end());   // the network's order: the exit last
    if (!sg.layers.empty())
      checkOneExit(sg, g);
    for (const ast::GraphDirective &d : g.directives) {
      if (d.kind.name != "split") {
        diags_.report(d.kind.range, diag::err_dsa_schedule_item)
            << "a sub-graph's block takes `split DIM by F;`" +
                   std::string(d.kind.name == "bind" || d.kind.name == "scope"
                                   ? "; '" + d.kind.name + "' belongs in an `instance SG[I] { … }` block"
                                   : "; '" + d.kind.name + "' is no directive");
        continue;
      }
      const bool form = d.args.size() == 1 && d.args[0].second && d.args[0].second->name == "by" && d.args[0].amount;
      if (!form) {
        diags_.report(d.range, diag::err_dsa_schedule_item)
            << "expected `split DIM by F;` (DIM one of " + tensorDimList() + ", F the number of instances)";
        continue;
      }
      const ast::GraphArg &a = d.args[0];
      if (sg.splitDim) {
        diags_.report(d.range, diag::err_duplicate_schedule).note(sg.splitRange, diag::note_previous_use)
            << "the split of sub-graph" << sg.name;
        continue;
      }
      auto dim = tensorDim(a.first.name);
      if (!dim) {
        diags_.report(a.first.range, diag::err_dsa_split)
            << sg.name << "along '" + a.first.name + "'" << "a tensor's dimensions are " + tensorDimList();
        continue;
      }
      if (a.amount->value < 1) {
        diags_.report(a.amount->range, diag::err_nonpositive_amount) << "the number of instances" << a.amount->value;
        continue;
      }
      sg.splitDim = *dim;
      sg.factor = a.amount->value;
      sg.splitRange = d.range;
    }
    s_.subGraphs.push_back(std::move(sg));
  }

  /// Every layer but the last is read only inside the sub-graph, and is read.
  void checkOneExit(const DsaSubGraphSpec &sg, const ast::SubGraphDecl &g) {
    std::set<int> inside(sg.layers.begin(), sg.layers.end());
    std::vector<std::vector<int>> consumers(net_->layers.size());
    for (size_t l = 0; l < net_->layers.size(); ++l)
      for (const TensorRef &r : net_->layers[l].operands)
        if (!r.isInput)
          consumers[static_cast<size_t>(r.index)].push_back(static_cast<int>(l));
    for (size_t k = 0; k + 1 < sg.layers.size(); ++k) {
      const int l = sg.layers[k];
      const std::string name = net_->layers[static_cast<size_t>(l)].name;
      std::string why;
      if (consumers[static_cast<size_t>(l)].empty())
        why = "'" + name + "' is an output of network '" + net_->name + "'";
      for (int c : consumers[static_cast<size_t>(l)])
        if (why.empty() && !inside.count(c))
          why = "'" + name + "' is read by '" + net_->layers[static_cast<size_t>(c)].name + "', outside it";
      if (!why.empty()) {
        diags_.report(g.name.range, diag::err_dsa_exit)
            << sg.name
            << why + ", besides its last layer '" + net_->layers[static_cast<size_t>(sg.layers.back())].name + "'";
        return;
      }
    }
  }

  /// Once any sub-graph is written, every layer is in one.
  void partition() {
    if (s_.subGraphs.empty())
      return;
    std::vector<std::string> missing;
    for (size_t l = 0; l < net_->layers.size(); ++l)
      if (!owner_.count(static_cast<int>(l)))
        missing.push_back(net_->layers[l].name);
    if (missing.empty())
      return;
    std::string more;
    if (missing.size() > 1) {
      std::vector<std::string> shown(missing.begin() + 1, missing.begin() + std::min<size_t>(missing.size(), 6));
      more = " (" + std::to_string(missing.size() - 1) + " more: " + joinList(shown, ", ", " and ") +
             (missing.size() > 6 ? ", …" : "") + ")";
    }
    diags_.report(decl_.network.range, diag::err_dsa_partition)
        << missing[0] << "in no sub-graph; once a schedule writes sub-graphs, every layer is in exactly one" + more;
  }

  /// The sub-graph an instance reference names and its index, or nullopt after an error.
  std::optional<std::pair<int, int64_t>> resolve(const ast::InstanceRef &r) {
    int sg = -1;
    std::vector<std::string> names;
    for (size_t i = 0; i < s_.subGraphs.size(); ++i) {
      names.push_back(s_.subGraphs[i].name);
      if (s_.subGraphs[i].name == r.subGraph.name)
        sg = static_cast<int>(i);
    }
    if (sg < 0) {
      diags_.report(r.subGraph.range, diag::err_unknown_name)
          << "sub-graph" << r.subGraph.name
          << Suggestion{r.subGraph.range, r.subGraph.name, names,
                        names.empty() ? "; the schedule writes no sub-graphs (`subgraph NAME = L1, L2;`)" : ""};
      return std::nullopt;
    }
    if (!r.index)
      return std::pair{sg, int64_t(-1)};
    const int64_t f = s_.subGraphs[static_cast<size_t>(sg)].factor;
    if (r.index->value >= f) {
      diags_.report(r.index->range, diag::err_dsa_instance_index)
          << r.subGraph.name << (f == 1 ? "1 instance (index 0)" : std::to_string(f) + " instances (0 to " +
                                                                      std::to_string(f - 1) + ")")
          << r.index->value;
      return std::nullopt;
    }
    return std::pair{sg, r.index->value};
  }

  void order(const ast::OrderDecl &o) {
    if (s_.order != DsaSchedule::Order::Unset || orderSeen_) {
      diags_.report(o.range, diag::err_dsa_order).note(s_.orderRange, diag::note_previous_use)
          << "is given twice";
      return;
    }
    orderSeen_ = true;
    s_.orderRange = o.range;
    if (o.instances.size() == 1 && !o.instances[0].index && !o.instances[0].all) {
      const std::string &w = o.instances[0].subGraph.name;
      if (w == "bfs" || w == "dfs") {
        s_.order = w == "bfs" ? DsaSchedule::Order::Bfs : DsaSchedule::Order::Dfs;
        return;
      }
    }
    bool ok = true;
    std::vector<std::pair<int, int64_t>> listed;
    for (const ast::InstanceRef &r : o.instances) {
      if (!r.index) {
        diags_.report(r.range, diag::err_dsa_order)
            << "is `bfs`, `dfs` or a list of instances `SG[I], …`; '" +
                   syntax::instanceRef(r.subGraph.name, std::nullopt, r.all) + "' is none of these";
        ok = false;
        continue;
      }
      auto ref = resolve(r);
      ok &= ref.has_value();
      if (ref) {
        listed.push_back(*ref);
        s_.listedRanges.push_back(r.range);
      }
    }
    if (ok) {
      s_.order = DsaSchedule::Order::Listed;
      s_.listed = std::move(listed);
    }
  }

  void instance(const ast::InstanceDecl &in) {
    if (!in.instance.index && !in.instance.all) {
      diags_.report(in.instance.range, diag::err_dsa_schedule_item)
          << "expected `instance SG[I]` or `instance SG[*]` (every instance of SG)";
      return;
    }
    auto ref = resolve(in.instance);
    if (!ref)
      return;
    const std::string text = syntax::instanceRef(in.instance.subGraph.name,
                                                 in.instance.index ? std::optional(in.instance.index->value)
                                                                   : std::nullopt,
                                                 in.instance.all);
    if (auto [it, inserted] = instanceSeen_.emplace(*ref, in.instance.range); !inserted) {
      diags_.report(in.instance.range, diag::err_duplicate_schedule).note(it->second, diag::note_previous_use)
          << "instance" << text;
      return;
    }
    DsaInstanceSpec spec;
    spec.subGraph = ref->first;
    if (ref->second >= 0)
      spec.index = ref->second;
    spec.range = in.range;
    for (const ast::GraphDirective &d : in.directives) {
      if (d.kind.name == "bind")
        bind(d, spec);
      else if (d.kind.name == "scope")
        scope(d, spec);
      else
        diags_.report(d.kind.range, diag::err_dsa_schedule_item)
            << "an instance's block takes `bind DIM N, …;` and `scope LB|GB|DDR;`" +
                   std::string(d.kind.name == "split" ? "; 'split' belongs in the sub-graph's block"
                                                      : "; '" + d.kind.name + "' is no directive");
    }
    s_.instances.push_back(std::move(spec));
  }

  void bind(const ast::GraphDirective &d, DsaInstanceSpec &spec) {
    if (!spec.binding.empty()) {
      diags_.report(d.range, diag::err_duplicate_schedule).note(spec.bindRange, diag::note_previous_use)
          << "the binding of instance" << syntax::instanceRef(s_.subGraphs[static_cast<size_t>(spec.subGraph)].name,
                                                              spec.index, !spec.index);
      return;
    }
    std::vector<int64_t> binding(std::size(kDsaTensorDims), 1);
    std::set<int> seen;
    for (const ast::GraphArg &a : d.args) {
      auto dim = tensorDim(a.first.name);
      if (a.second || !a.amount || !dim || !seen.insert(*dim).second) {
        diags_.report(a.range, diag::err_dsa_schedule_item)
            << "expected `bind DIM N, …;` with each of " + tensorDimList() + " at most once and N its cores" +
                   (dim || a.second ? "" : "; '" + a.first.name + "' is no dimension");
        return;
      }
      if (a.amount->value < 1) {
        diags_.report(a.amount->range, diag::err_nonpositive_amount) << "the cores along " + a.first.name
                                                                     << a.amount->value;
        return;
      }
      binding[static_cast<size_t>(*dim)] = a.amount->value;
    }
    if (d.args.empty()) {
      diags_.report(d.range, diag::err_dsa_schedule_item) << "expected `bind DIM N, …;` (`bind N 1;`: one core)";
      return;
    }
    spec.binding = std::move(binding);
    spec.bindRange = d.range;
  }

  void scope(const ast::GraphDirective &d, DsaInstanceSpec &spec) {
    static const std::vector<std::string> scopes = {"LB", "GB", "DDR"};
    const bool form = d.args.size() == 1 && !d.args[0].second && !d.args[0].amount;
    const auto it = form ? std::find(scopes.begin(), scopes.end(), d.args[0].first.name) : scopes.end();
    if (it == scopes.end()) {
      diags_.report(d.range, diag::err_dsa_schedule_item)
          << "expected `scope LB;`, `scope GB;` or `scope DDR;`" +
                 (form ? didYouMean(d.args[0].first.name, scopes) : std::string());
      return;
    }
    if (spec.scope) {
      diags_.report(d.range, diag::err_duplicate_schedule).note(spec.scopeRange, diag::note_previous_use)
          << "the scope of instance" << syntax::instanceRef(s_.subGraphs[static_cast<size_t>(spec.subGraph)].name,
                                                            spec.index, !spec.index);
      return;
    }
    spec.scope = static_cast<DsaScope>(it - scopes.begin());
    spec.scopeRange = d.range;
  }

  const ast::ScheduleDecl &decl_;
  const Model &model_;
  DiagnosticsEngine &diags_;
  const Network *net_ = nullptr;
  DsaSchedule s_;
  Scope subGraphNames_;
  std::map<int, std::pair<int, SourceRange>> owner_;   // layer -> (sub-graph, where written)
  std::map<std::pair<int, int64_t>, SourceRange> instanceSeen_;
  bool orderSeen_ = false;
};

} // namespace

DsaSchedule analyzeDsaSchedule(const ast::ScheduleDecl &decl, const Model &model, int hardware,
                               DiagnosticsEngine &diags) {
  return DsaScheduleAnalysis(decl, model, hardware, diags).run();
}

} // namespace dfl::sema
