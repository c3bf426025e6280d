#include "lsp/Completion.h"

#include "lsp/Compilation.h"
#include "lsp/Positions.h"

#include <algorithm>
#include <set>

namespace dfl::lsp {

CompletionList complete(const Compilation *c, Position pos) {
  CompletionList out;
  std::set<std::string> seen;
  auto add = [&](const std::string &label, CompletionItemKind kind, const std::string &detail) {
    if (seen.insert(label).second)
      out.items.push_back({label, detail, kind});
  };
  // Where the cursor is: inside a schedule, and inside one of its level blocks.
  const ast::ScheduleDecl *sched = nullptr;
  const ast::LayerSchedule *layerSched = nullptr;
  const ast::LevelSchedule *levelSched = nullptr;
  if (c && c->rootAst) {
    size_t off = offsetAt(c->sm.text(c->root), pos);
    for (const ast::TopDecl &decl : c->rootAst->decls)
      if (auto *s = std::get_if<ast::ScheduleDecl>(&decl); s && contains(s->range, c->root, off)) {
        sched = s;
        for (const ast::ScheduleItem &item : s->items)
          if (auto *ls = std::get_if<ast::LayerSchedule>(&item); ls && contains(ls->range, c->root, off)) {
            layerSched = ls;
            for (const ast::LevelSchedule &lv : ls->levels)
              if (contains(lv.range, c->root, off))
                levelSched = &lv;
          }
      }
  }
  const Model *m = c && c->analyzed ? &c->model : nullptr;
  const Network *net = m && sched ? findNetwork(*m, sched->network.name) : nullptr;
  const Hardware *hw = m && sched ? findHardware(*m, sched->hardware.name) : nullptr;
  if (levelSched) {
    for (const char *k : {"tensor", "stack", "update", "layout", "repl", "shr", "ifm", "wgt", "ofm"})
      add(k, CompletionItemKind::Keyword, "directive");
    int li = net ? net->findLayer(layerSched->layer.name) : -1;
    // Inside `tensor ROLE [...]`: only that tensor's dimensions.
    std::optional<TensorRole> role;
    size_t off = offsetAt(c->sm.text(c->root), pos);
    for (const ast::Directive &d : levelSched->directives)
      if (d.kind == ast::Directive::Kind::Tensor && contains(d.range, c->root, off))
        role = parseRole(d.role.name);
    // The dimensions of this layer's loop nest that are not trivial (every one if the layer is unknown).
    std::vector<std::string> dims = allDimNames();
    if (li >= 0) {
      dims.clear();
      for (Dim d : net->layers[li].loopDims())
        if ((d == Dim::N ? net->batch > 1 : at(net->layers[li].bounds, d) > 1) &&
            (!role || std::find(roleDims(*role).begin(), roleDims(*role).end(), d) != roleDims(*role).end()))
          dims.push_back(dimName(d));
    }
    for (const std::string &d : dims)
      add(d, CompletionItemKind::Field, "dimension");
    return out;
  }
  if (sched) {
    for (const char *k : {"segment", "pipelined", "layer"})
      add(k, CompletionItemKind::Keyword, "keyword");
    if (hw && layerSched)
      for (const Level &l : hw->levels)
        add(l.name, CompletionItemKind::Module, "level of " + hw->name);
    if (hw && !hw->vectors.empty()) {   // `layer x on V`
      add("on", CompletionItemKind::Keyword, "keyword");
      for (const VectorUnit &v : hw->vectors)
        add(v.name, CompletionItemKind::Module,
            "vector unit of " + hw->name + ": " + std::to_string(v.opsPerCycle) + " ops/cycle per unit" +
                (v.level >= 0 ? " of " + hw->levels[static_cast<size_t>(v.level)].name : std::string()));
    }
    if (net)
      for (const Layer &l : net->layers)
        add(l.name, CompletionItemKind::Function, std::string(l.kindName()) + " layer of " + net->name);
    return out;
  }
  for (const char *k : {"import", "network", "hardware", "schedule", "for", "on", "batch", "input", "level", "mac",
                        "noc", "pipeline", "word", "vector", "intrinsic"})
    add(k, CompletionItemKind::Keyword, "keyword");
  if (m)
    for (const Network &n : m->networks) {
      for (const Input &in : n.inputs)
        add(in.name, CompletionItemKind::Variable, "input of " + n.name);
      for (const Layer &l : n.layers)
        add(l.name, CompletionItemKind::Function, std::string(l.kindName()) + " layer of " + n.name);
    }
  return out;
}

} // namespace dfl::lsp
