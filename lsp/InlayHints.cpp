#include "lsp/InlayHints.h"

#include "lsp/Compilation.h"
#include "lsp/Hover.h"
#include "lsp/Positions.h"

namespace dfl::lsp {
namespace {

/// Calls fn(block, layer index) for each `layer NAME { ... }` block the root
/// file writes in the declaration of `schedule` that names a layer of its network.
template <class Fn>
void forEachLayerBlock(const Compilation &c, const Schedule &schedule, size_t layers, Fn fn) {
  if (!c.rootAst)
    return;
  for (const ast::TopDecl &decl : c.rootAst->decls) {
    auto *sd = std::get_if<ast::ScheduleDecl>(&decl);
    if (!sd || !(sd->range == schedule.range))
      continue;
    for (const ast::ScheduleItem &item : sd->items) {
      auto *ls = std::get_if<ast::LayerSchedule>(&item);
      int li = ls ? c.model.networks[schedule.network].findLayer(ls->layer.name) : -1;
      if (li >= 0 && static_cast<size_t>(li) < layers)
        fn(*ls, li);
    }
  }
}

} // namespace

std::vector<InlayHint> inlayHints(const Compilation &c, Range range) {
  std::vector<InlayHint> out;
  if (!c.rootAst || !c.analyzed)
    return out;
  const Model &m = c.model;
  auto inRange = [&](Position p) { return p.line >= range.start.line && p.line <= range.end.line; };
  for (const CheckedSchedule &cs : c.checked) {
    const Schedule &s = m.schedules[cs.schedule];
    if (s.range.begin.file != c.root)
      continue;
    const Hardware &hw = m.hardware[s.hardware];
    forEachLayerBlock(c, s, cs.result.layers.size(), [&](const ast::LayerSchedule &ls, int li) {
      for (const ast::LevelSchedule &lv : ls.levels) {
        int level = hw.findLevel(lv.level.name);
        const LevelResult *r = nullptr;
        for (const LevelResult &x : cs.result.layers[li].levels)
          if (x.level == level && x.known)
            r = &x;
        if (!r)
          continue;
        // Occupancy after the level's name; each update's trip count after it.
        Position at = toLspPosition(c.sm, lv.level.range.end);
        if (hw.levels[level].capacityBytes && inRange(at))
          out.push_back({at, percent(double(r->occupancyBytes), double(*hw.levels[level].capacityBytes)) + " full",
                         true});
        size_t update = 0;
        for (const ast::Directive &d : lv.directives) {
          if (d.kind != ast::Directive::Kind::Update)
            continue;
          Position end = toLspPosition(c.sm, d.range.end);
          if (update < r->trips.size() && inRange(end))
            out.push_back({end, "× " + std::to_string(r->trips[update]), true});
          ++update;
        }
      }
    });
  }
  return out;
}

} // namespace dfl::lsp
