#include "lsp/SymbolIndex.h"

#include "lsp/Compilation.h"
#include "lsp/Positions.h"

#include "model/DflSyntax.h"

#include <set>
#include <tuple>

namespace dfl::lsp {

void indexFile(const ast::File &file, std::vector<Occurrence> &out) {
  using K = Occurrence::Kind;
  auto add = [&](K kind, const ast::Ident &id, bool def, const std::string &scope, const std::string &layer = "",
                 SourceRange sched = {}) {
    out.push_back({kind, id.range, def, scope, kind == K::Network || kind == K::Hardware ? "" : id.name, layer, sched});
    if (kind == K::Network || kind == K::Hardware)
      out.back().scope = id.name;
  };
  for (const ast::TopDecl &decl : file.decls) {
    if (auto *n = std::get_if<ast::NetworkDecl>(&decl)) {
      add(K::Network, n->name, true, "");
      for (const ast::NetworkItem &item : n->items) {
        if (auto *in = std::get_if<ast::InputDecl>(&item))
          add(K::Tensor, in->name, true, n->name.name);
        if (auto *l = std::get_if<ast::LayerDecl>(&item)) {
          add(K::Tensor, l->name, true, n->name.name);
          for (const ast::Ident &op : l->operands)
            add(K::Tensor, op, false, n->name.name);
        }
      }
    } else if (auto *h = std::get_if<ast::HardwareDecl>(&decl)) {
      add(K::Hardware, h->name, true, "");
      for (const ast::HardwareItem &item : h->items)
        if (auto *b = std::get_if<ast::HardwareBlock>(&item); b && b->kind.name == "level" && b->name)
          add(K::Level, *b->name, true, h->name.name);
    } else if (auto *s = std::get_if<ast::ScheduleDecl>(&decl)) {
      add(K::Network, s->network, false, "", "", s->range);
      add(K::Hardware, s->hardware, false, "", "", s->range);
      for (const ast::ScheduleItem &item : s->items) {
        if (auto *seg = std::get_if<ast::SegmentDecl>(&item))
          for (const ast::Ident &l : seg->layers)
            add(K::Tensor, l, false, s->network.name, "", s->range);
        if (auto *sg = std::get_if<ast::SubGraphDecl>(&item))   // a schedule on a DSA
          for (const ast::Ident &l : sg->layers)
            add(K::Tensor, l, false, s->network.name, "", s->range);
        if (auto *ls = std::get_if<ast::LayerSchedule>(&item)) {
          add(K::Tensor, ls->layer, false, s->network.name, "", s->range);
          for (const ast::LevelSchedule &lv : ls->levels)
            add(K::Level, lv.level, false, s->hardware.name, ls->layer.name, s->range);
        }
      }
    }
  }
}

const Occurrence *occurrenceAt(const Compilation &c, Position pos) {
  size_t off = offsetAt(c.sm.text(c.root), pos);
  for (const Occurrence &o : c.index)
    if (contains(o.range, c.root, off))
      return &o;
  return nullptr;
}

std::vector<Location> findOccurrences(const Compilation &c, Position pos,
                                      const std::vector<std::shared_ptr<const Compilation>> &others,
                                      const std::function<bool(const Occurrence &)> &want) {
  std::vector<Location> out;
  const Occurrence *o = occurrenceAt(c, pos);
  if (!o)
    return out;
  std::string key = o->key();
  std::set<std::tuple<std::string, int, int, int, int>> seen;
  auto collect = [&](const Compilation &comp) {
    for (const Occurrence &x : comp.index) {
      if (x.key() != key || !want(x))
        continue;
      Location loc = toLocation(comp.sm, x.range);
      auto id = std::make_tuple(loc.uri, loc.range.start.line, loc.range.start.character, loc.range.end.line,
                                loc.range.end.character);
      if (seen.insert(id).second)
        out.push_back(loc);
    }
  };
  collect(c);
  for (const auto &other : others)
    if (other.get() != &c)
      collect(*other);
  return out;
}

std::vector<DocumentSymbol> documentSymbols(const Compilation &c) {
  std::vector<DocumentSymbol> out;
  if (!c.rootAst)
    return out;
  const SourceManager &sm = c.sm;
  auto symbol = [&](const std::string &name, const std::string &detail, SymbolKind kind, SourceRange range,
                    SourceRange selection) {
    return DocumentSymbol{name, detail, kind, toLspRange(sm, range), toLspRange(sm, selection), {}};
  };
  for (const ast::TopDecl &decl : c.rootAst->decls) {
    if (auto *n = std::get_if<ast::NetworkDecl>(&decl)) {
      DocumentSymbol s = symbol(n->name.name, "network", SymbolKind::Module, n->range, n->name.range);
      for (const ast::NetworkItem &item : n->items) {
        if (auto *in = std::get_if<ast::InputDecl>(&item))
          s.children.push_back(symbol(in->name.name, "input", SymbolKind::Variable, in->range, in->name.range));
        if (auto *l = std::get_if<ast::LayerDecl>(&item))
          s.children.push_back(symbol(l->name.name, l->op.name, SymbolKind::Function, l->range, l->name.range));
      }
      out.push_back(std::move(s));
    } else if (auto *h = std::get_if<ast::HardwareDecl>(&decl)) {
      DocumentSymbol s = symbol(h->name.name, "hardware", SymbolKind::Class, h->range, h->name.range);
      for (const ast::HardwareItem &item : h->items)
        if (auto *b = std::get_if<ast::HardwareBlock>(&item))
          s.children.push_back(symbol(b->name ? b->name->name : b->kind.name, b->name ? b->kind.name : "",
                                      SymbolKind::Field, b->range, b->name ? b->name->range : b->kind.range));
      out.push_back(std::move(s));
    } else if (auto *sd = std::get_if<ast::ScheduleDecl>(&decl)) {
      DocumentSymbol s = symbol(syntax::scheduleHeader(sd->network.name, sd->hardware.name), "schedule",
                                SymbolKind::Namespace, sd->range, sd->network.range);
      for (const ast::ScheduleItem &item : sd->items)
        if (auto *ls = std::get_if<ast::LayerSchedule>(&item)) {
          DocumentSymbol l = symbol(ls->layer.name, "layer", SymbolKind::Function, ls->range, ls->layer.range);
          for (const ast::LevelSchedule &lv : ls->levels)
            l.children.push_back(symbol(lv.level.name, "level", SymbolKind::Field, lv.range, lv.level.range));
          s.children.push_back(std::move(l));
        }
      out.push_back(std::move(s));
    } else if (auto *i = std::get_if<ast::IntrinsicDecl>(&decl)) {
      out.push_back(symbol(i->name.name, "intrinsic", SymbolKind::Struct, i->range, i->name.range));
    }
  }
  return out;
}

} // namespace dfl::lsp
