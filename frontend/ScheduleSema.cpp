// Schedule analysis: names (network, hardware, layers, levels), segments, and
// the well-formedness of each tensor/stack/update directive (KAPLA §III-B).
// Whether the directives form a *valid* dataflow is the scheduler's question.
#include "frontend/SemaContext.h"

#include <algorithm>
#include <set>

namespace dfl::sema {
namespace {

std::vector<std::string> dimNames(const std::vector<Dim> &dims) {
  std::vector<std::string> out;
  for (Dim d : dims)
    out.push_back(dimName(d));
  return out;
}

/// The largest size a tensor may have along `d` in `layer`: for Xi/Yi the padded
/// input, or the whole window span if larger (ceil-mode pooling overhangs).
int64_t tensorBound(const Layer &layer, Dim d) {
  int64_t b = at(layer.bounds, d);
  if (isInputWindow(d)) {
    auto [out, win] = windowSources(d);
    const WindowAxis &a = layer.window.along(d);
    int64_t span = windowSpan(at(layer.bounds, out), at(layer.bounds, win), a);
    b = std::max(b + a.padBegin + a.padEnd, span);
  }
  return b;
}

std::vector<std::pair<Dim, int64_t>> steps(const std::vector<ast::Step> &in, const Layer *layer,
                                           DiagnosticsEngine &diags, const char *what) {
  std::vector<std::pair<Dim, int64_t>> out;
  std::map<std::string, SourceRange> seen;
  for (const ast::Step &s : in) {
    auto d = parseDim(s.dim.name);
    if (!d) {
      if (layer)
        diags.report(s.dim.range, diag::err_dim_not_in_layer)
            << s.dim.name << layer->name << layer->kindName() << joinList(allDimNames(), ", ");
      else
        diags.report(s.dim.range, diag::err_unknown_dimension)
            << s.dim.name << std::string("a ") + what << "one of " + joinList(allDimNames(), ", ");
      continue;
    }
    if (auto [it, inserted] = seen.emplace(s.dim.name, s.dim.range); !inserted) {
      diags.report(s.dim.range, diag::err_duplicate_dimension).note(it->second, diag::note_previous_use) << s.dim.name;
      continue;
    }
    if (s.amount.value < 1) {
      diags.report(s.amount.range, diag::err_nonpositive_amount)
          << std::string("the ") + (std::string(what) == "stack" ? "shift" : "step") + " of " + s.dim.name
          << s.amount.value;
      continue;
    }
    out.emplace_back(*d, s.amount.value);
  }
  return out;
}

/// The tensor role a tensor or layout directive names, if the layer has it (E0601).
std::optional<TensorRole> directiveRole(const ast::Directive &d, const Layer *layer, DiagnosticsEngine &diags) {
  auto role = parseRole(d.role.name);
  std::vector<std::string> roles;
  if (layer)
    for (TensorRole r : layer->roles())
      roles.push_back(roleName(r));
  else
    roles = {"ifm", "wgt", "ofm"};
  if (!role || std::find(roles.begin(), roles.end(), d.role.name) == roles.end()) {
    if (layer)
      diags.report(d.role.range, diag::err_unknown_tensor_role)
          << layer->name << layer->kindName() << d.role.name << joinList(roles, ", ", " and ");
    else
      diags.report(d.role.range, diag::err_unknown_name) << "tensor role" << d.role.name
                                                         << Suggestion{d.role.range, d.role.name, roles};
    return std::nullopt;
  }
  return role;
}

/// The sizes a tensor or layout directive gives per dim of its role, in the
/// order written; each dim checked (E0602, E0603's duplicate, E0604, E0607).
std::vector<std::pair<Dim, int64_t>> roleSizes(const ast::Directive &d, TensorRole role, const Layer *layer,
                                               DiagnosticsEngine &diags) {
  std::vector<std::pair<Dim, int64_t>> out;
  const std::vector<Dim> &allowed = roleDims(role);
  std::map<std::string, SourceRange> seen;
  for (const ast::DimSize &ds : d.shape) {
    auto dim = parseDim(ds.dim.name);
    if (!dim || std::find(allowed.begin(), allowed.end(), *dim) == allowed.end()) {
      diags.report(ds.dim.range, diag::err_dim_not_in_tensor)
          << ds.dim.name << d.role.name << (layer ? " of layer '" + layer->name + "'" : std::string())
          << joinList(dimNames(allowed), ", ");
      continue;
    }
    if (auto [it, inserted] = seen.emplace(ds.dim.name, ds.dim.range); !inserted) {
      diags.report(ds.dim.range, diag::err_duplicate_dimension).note(it->second, diag::note_previous_use)
          << ds.dim.name;
      continue;
    }
    if (ds.size.value < 1) {
      diags.report(ds.size.range, diag::err_nonpositive_amount) << "the size of " + ds.dim.name << ds.size.value;
      continue;
    }
    if (layer) {
      int64_t bound = tensorBound(*layer, *dim);   // N: the batch, times a matmul's heads
      if (ds.size.value > bound) {
        // Xi/Yi may exceed the layer's input by its padding: say so when it does.
        std::string limit = std::to_string(bound) + (bound > at(layer->bounds, *dim) ? " with padding" : "");
        diags.report(ds.size.range, diag::err_size_exceeds_layer)
            << ds.dim.name << d.role.name << ds.size.value << layer->name << limit;
        continue;
      }
    }
    out.emplace_back(*dim, ds.size.value);
  }
  return out;
}

/// `layer x on V`: V a vector unit of the hardware that can run the layer
/// (docs/directives.md §7, "Vector units"), or a diagnostic; the layer then
/// stays on the MAC array for the rest of the check.
void placeOnVector(const ast::Ident &unit, const Layer &layer, const Hardware &hw, LayerScheduleModel &lsm,
                   DiagnosticsEngine &diags) {
  const int u = hw.findVector(unit.name);
  if (u < 0) {
    std::vector<std::string> units;
    for (const VectorUnit &v : hw.vectors)
      units.push_back(v.name);
    auto closest = closestName(unit.name, units);
    auto d = diags.report(unit.range, diag::err_unknown_name);
    d << "vector unit" << unit.name
      << (closest       ? "; did you mean '" + *closest + "'?"
          : units.empty() ? "; hardware '" + hw.name + "' has no vector unit"
                          : "; hardware '" + hw.name + "' has " + joinList(units, ", ", " and "));
    if (closest)
      d.fixit(unit.range, *closest);
    return;
  }
  const VectorUnit &v = hw.vectors[static_cast<size_t>(u)];
  if (std::string why = layer.vectorRefusal(); !why.empty()) {
    diags.report(unit.range, diag::err_vector_layer).note(v.nameRange, diag::note_vector_declared, v.name)
        << layer.name << layer.kindName() << v.name << why;
    return;
  }
  if (v.level < 0 || !v.truncated)
    return;   // its level was refused (E0520)
  lsm.unit = u;
  lsm.unitRange = unit.range;
}

} // namespace

int scheduledLayer(const Network &net, const ast::Ident &id, DiagnosticsEngine &diags) {
  int idx = net.findLayer(id.name);
  if (idx < 0) {
    std::vector<std::string> layers;
    for (const Layer &l : net.layers)
      layers.push_back(l.name);
    auto closest = closestName(id.name, layers);
    std::string hint = closest ? "; did you mean '" + *closest + "'?" : "";
    auto alias = net.names.find(id.name);
    if (alias != net.names.end())
      hint = alias->second.isInput ? "; it is an input of network '" + net.name + "', not a layer"
                                   : "; it is an activation fused into layer '" +
                                         net.layers[alias->second.index].name + "'";
    // A backward layer's name without --train (TrainingGraph.h names them L__dgrad, L__wgrad).
    size_t sep = id.name.rfind("__");
    bool training = std::any_of(net.layers.begin(), net.layers.end(),
                                [](const Layer &l) { return l.name.find("__") != std::string::npos; });
    if (sep != std::string::npos && !training && net.findLayer(id.name.substr(0, sep)) >= 0 &&
        (id.name.substr(sep) == "__dgrad" || id.name.substr(sep) == "__wgrad"))
      hint = "; backward layers exist only with --train";
    auto d = diags.report(id.range, diag::err_unknown_name);
    d << "layer" << id.name << hint;
    if (closest && hint.starts_with("; did you mean"))
      d.fixit(id.range, *closest);
  }
  return idx;
}

void checkLayouts(std::vector<LayoutDirective> &layouts, const Hardware &hw, int level, DiagnosticsEngine &diags) {
  const std::string top = hw.levels.empty() ? "" : hw.levels.back().name;
  const int64_t channels = hw.memoryChannels.empty() ? 4 : static_cast<int64_t>(hw.memoryChannels.size());
  std::erase_if(layouts, [&](const LayoutDirective &l) {
    std::string what = std::string(roleName(l.role));
    if (level < 0) {
      diags.report(l.range, diag::err_layout_level) << what << top << "fixed by the hardware";
      return true;
    }
    if (level + 1 != static_cast<int>(hw.levels.size())) {
      diags.report(l.range, diag::err_layout_level)
          << what << top << "given at level '" + hw.levels[static_cast<size_t>(level)].name + "'";
      return true;
    }
    int64_t parts = 1;
    for (const auto &[dim, n] : l.parts)
      parts *= n;
    if (parts != channels) {
      diags.report(l.range, diag::err_layout_parts)
          << what << parts << top << channels
          << (hw.memoryChannels.empty() ? " (the four corners of the node mesh)" : " (noc channels)");
      return true;
    }
    return false;
  });
}

LevelDirectives analyzeDirectives(const std::vector<ast::Directive> &directives, const Layer *layer,
                                  DiagnosticsEngine &diags) {
  LevelDirectives out;
  std::map<TensorRole, SourceRange> rolesSeen, layoutsSeen;
  for (const ast::Directive &d : directives) {
    switch (d.kind) {
    case ast::Directive::Kind::Tensor: {
      auto role = directiveRole(d, layer, diags);
      if (!role)
        break;
      if (auto [it, inserted] = rolesSeen.emplace(*role, d.role.range); !inserted) {
        diags.report(d.role.range, diag::err_duplicate_schedule).note(it->second, diag::note_previous_use)
            << "tensor" << d.role.name;
        break;
      }
      TensorDirective t;
      t.role = *role;
      t.range = d.range;
      for (const auto &[dim, size] : roleSizes(d, *role, layer, diags))
        at(t.sizes, dim) = size;
      if (d.shr) {
        if (d.shr->value < 1)
          diags.report(d.shr->range, diag::err_nonpositive_amount) << "the sharing factor" << d.shr->value;
        else
          t.shr = d.shr->value;
      }
      out.tensors.push_back(t);
      break;
    }
    case ast::Directive::Kind::Stack: {
      StackDirective s;
      s.range = d.range;
      s.shifts = steps(d.steps, layer, diags, "stack");
      if (d.repl) {
        if (d.repl->value < 1)
          diags.report(d.repl->range, diag::err_nonpositive_amount) << "the replication count" << d.repl->value;
        else
          s.repl = d.repl->value;
      }
      out.stacks.push_back(s);
      break;
    }
    case ast::Directive::Kind::Update: {
      UpdateDirective u;
      u.range = d.range;
      u.steps = steps(d.steps, layer, diags, "update");
      out.updates.push_back(u);
      break;
    }
    case ast::Directive::Kind::Layout: {
      auto role = directiveRole(d, layer, diags);
      if (!role)
        break;
      if (auto [it, inserted] = layoutsSeen.emplace(*role, d.role.range); !inserted) {
        diags.report(d.role.range, diag::err_duplicate_schedule).note(it->second, diag::note_previous_use)
            << "layout of" << d.role.name;
        break;
      }
      out.layouts.push_back({*role, roleSizes(d, *role, layer, diags), d.range});
      break;
    }
    }
  }
  if (!directives.empty())
    out.range = {directives.front().range.begin, directives.back().range.end};
  return out;
}

Schedule analyzeSchedule(const ast::ScheduleDecl &decl, const Model &model, DiagnosticsEngine &diags) {
  Schedule s;
  s.range = decl.range;
  auto find = [](const auto &vec, const std::string &name) {
    for (size_t i = 0; i < vec.size(); ++i)
      if (vec[i].name == name)
        return static_cast<int>(i);
    return -1;
  };
  auto names = [](const auto &vec) {
    std::vector<std::string> out;
    for (const auto &x : vec)
      out.push_back(x.name);
    return out;
  };
  s.network = find(model.networks, decl.network.name);
  s.hardware = find(model.hardware, decl.hardware.name);
  if (s.network < 0)
    diags.report(decl.network.range, diag::err_unknown_name)
        << "network" << decl.network.name << Suggestion{decl.network.range, decl.network.name, names(model.networks)};
  if (s.hardware < 0)
    diags.report(decl.hardware.range, diag::err_unknown_name)
        << "hardware" << decl.hardware.name << Suggestion{decl.hardware.range, decl.hardware.name, names(model.hardware)};
  if (s.network < 0 || s.hardware < 0)
    return s;
  const Network &net = model.networks[s.network];
  const Hardware &hw = model.hardware[s.hardware];

  auto layerIndex = [&](const ast::Ident &id) { return scheduledLayer(net, id, diags); };

  std::map<int, SourceRange> inSegment, scheduled;
  for (const ast::ScheduleItem &item : decl.items) {
    if (auto *seg = std::get_if<ast::SegmentDecl>(&item)) {
      Segment out;
      out.pipelined = seg->pipelined;
      out.range = seg->range;
      if (seg->splitDim) {
        // Which pieces fit the network is the analysis' to say (E0827 there too).
        out.splitRange = {seg->splitDim->range.begin, seg->instances.range.end};
        std::optional<Dim> d = parseDim(seg->splitDim->name);
        if (!d || (*d != Dim::Xo && *d != Dim::Yo))
          diags.report(seg->splitDim->range, diag::err_instance_split)
              << std::to_string(seg->instances.value) << seg->splitDim->name
              << "instances are pieces of the output's rows (Yo) or columns (Xo)";
        else if (seg->instances.value < 2)
          diags.report(seg->instances.range, diag::err_instance_split)
              << std::to_string(seg->instances.value) << seg->splitDim->name << "a split needs 2 instances or more";
        else
          out.splitDim = *d, out.instances = seg->instances.value;
      }
      for (const ast::Ident &id : seg->layers) {
        int idx = layerIndex(id);
        if (idx < 0)
          continue;
        if (auto [it, inserted] = inSegment.emplace(idx, id.range); !inserted) {
          diags.report(id.range, diag::err_segment_twice).note(it->second, diag::note_previous_use) << id.name;
          continue;
        }
        out.layers.push_back(idx);
      }
      s.segments.push_back(out);
      continue;
    }
    if (!std::holds_alternative<ast::LayerSchedule>(item)) {
      // The generic items of a schedule on a DSA: a DSA keyword, or a misspelt one of ours.
      const ast::Ident kind = std::visit(
          [](const auto &i) {
            if constexpr (std::is_same_v<std::decay_t<decltype(i)>, ast::Property>)
              return i.key;
            else if constexpr (std::is_same_v<std::decay_t<decltype(i)>, ast::SegmentDecl>)
              return ast::Ident{"segment", i.range};
            else if constexpr (std::is_same_v<std::decay_t<decltype(i)>, ast::LayerSchedule>)
              return i.layer;
            else
              return i.kind;
          },
          item);
      static const std::vector<std::string> dsaItems = {"batch_per_iteration", "subgraph", "order", "instance"};
      if (std::find(dsaItems.begin(), dsaItems.end(), kind.name) != dsaItems.end())
        diags.report(kind.range, diag::err_dsa_schedule_item)
            << "'" + kind.name + "' belongs to schedules on a cluster/core DSA; hardware '" + hw.name +
                   "' is a memory hierarchy, whose schedules take segment and layer items";
      else
        diags.report(kind.range, diag::err_dsa_schedule_item)
            << "unknown schedule item '" + kind.name + "'" + didYouMean(kind.name, {"segment", "layer"}) +
                   " (a schedule on a memory hierarchy takes segment and layer items)";
      continue;
    }
    const auto &ls = std::get<ast::LayerSchedule>(item);
    int idx = layerIndex(ls.layer);
    if (idx < 0)
      continue;
    if (auto [it, inserted] = scheduled.emplace(idx, ls.layer.range); !inserted) {
      diags.report(ls.layer.range, diag::err_duplicate_schedule).note(it->second, diag::note_previous_use)
          << "layer" << ls.layer.name;
      continue;
    }
    LayerScheduleModel lsm;
    lsm.layer = idx;
    lsm.range = ls.range;
    if (ls.unit)
      placeOnVector(*ls.unit, net.layers[static_cast<size_t>(idx)], hw, lsm, diags);
    std::map<int, SourceRange> levelsSeen;
    for (const ast::LevelSchedule &lv : ls.levels) {
      int li = hw.findLevel(lv.level.name);
      if (li < 0) {
        auto closest = closestName(lv.level.name, names(hw.levels));
        auto d = diags.report(lv.level.range, diag::err_unknown_name);
        d << "level" << lv.level.name
          << (closest ? "; did you mean '" + *closest + "'?" : std::string()) + " (hardware '" + hw.name + "' has " +
                 joinList(names(hw.levels), ", ", " and ") + ")";
        if (closest)
          d.fixit(lv.level.range, *closest);
        continue;
      }
      if (lsm.unit >= 0 && li < hw.vectors[static_cast<size_t>(lsm.unit)].level) {
        const VectorUnit &v = hw.vectors[static_cast<size_t>(lsm.unit)];
        diags.report(lv.level.range, diag::err_vector_directive_level)
                .note(v.nameRange, diag::note_vector_declared, v.name)
            << net.layers[static_cast<size_t>(idx)].name << v.name << hw.levels[static_cast<size_t>(v.level)].name
            << lv.level.name;
        continue;
      }
      if (auto [it, inserted] = levelsSeen.emplace(li, lv.level.range); !inserted) {
        diags.report(lv.level.range, diag::err_duplicate_schedule).note(it->second, diag::note_previous_use)
            << "level" << lv.level.name;
        continue;
      }
      LevelDirectives d = analyzeDirectives(lv.directives, &net.layers[idx], diags);
      checkLayouts(d.layouts, hw, li, diags);
      d.level = li;
      d.range = lv.range;
      lsm.levels.push_back(std::move(d));
    }
    s.layers.push_back(std::move(lsm));
  }
  return s;
}

} // namespace dfl::sema
