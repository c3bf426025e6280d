#include "frontend/Printer.h"

#include "model/DflSyntax.h"
#include "support/Check.h"

#include <cctype>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace dfl {
namespace {

using namespace ast;

template <class T, class F> std::string join(const std::vector<T> &items, F f) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + f(items[i]);
  return out;
}

/// The written (dimension, number) pairs, for model/DflSyntax.h.
syntax::DimValues dimValues(const std::vector<DimSize> &dims) {
  syntax::DimValues out;
  for (const DimSize &d : dims)
    out.emplace_back(d.dim.name, d.size.value);
  return out;
}

syntax::DimValues dimValues(const std::vector<Step> &steps) {
  syntax::DimValues out;
  for (const Step &s : steps)
    out.emplace_back(s.dim.name, s.amount.value);
  return out;
}

std::optional<int64_t> number(const std::optional<IntLit> &n) {
  return n ? std::optional<int64_t>(n->value) : std::nullopt;
}

std::string access(const Access &a) {
  return a.tensor.name + "[" + join(a.indices, [](const Ident &i) { return i.name; }) + "]";
}

/// Prints the AST one output line per item, weaving the comments back in by
/// source offset: a comment on the same source line as the code before it
/// stays at the end of that line, any other one gets a line of its own before
/// the next item. Blank lines between items are kept (at most one); the
/// printer adds one between top-level declarations and drops those just
/// inside braces.
class Printer {
public:
  Printer(const File &file, const SourceManager &sm) : text_(sm.text(file.fileId)), comments_(file.comments) {}

  std::string run(const File &file) {
    for (const Import &imp : file.imports)
      line(imp.range, syntax::importLine(imp.path));
    for (const TopDecl &decl : file.decls) {
      wantBlank_ = !lines_.empty();
      std::visit([this](const auto &d) { print(d); }, decl);
    }
    flushComments(std::numeric_limits<uint32_t>::max());
    alignTrailingComments();
    std::string out;
    for (const std::string &l : lines_)
      out += l + "\n";
    return out;
  }

private:
  // ---- layout ---------------------------------------------------------------
  void line(SourceRange src, const std::string &s) { line(src.begin.offset, src.end.offset, s); }

  /// Emits `s` for the source [begin, end), after the comments before `begin`.
  void line(uint32_t begin, uint32_t end, const std::string &s) {
    flushComments(begin);
    emit(begin, end, s);
  }

  /// Trailing comments on consecutive lines start in one column, two spaces
  /// after the longest code among them (as gofmt and clang-format align
  /// them); a line without one, or a blank line, ends the run.
  void alignTrailingComments() {
    for (size_t i = 0; i < lines_.size();) {
      size_t end = i, width = 0;
      for (; end < lines_.size() && codeWidth_[end]; ++end)
        width = std::max(width, codeWidth_[end]);
      for (size_t j = i; j < end; ++j)
        lines_[j].insert(codeWidth_[j], width - codeWidth_[j], ' ');
      i = std::max(end, i + 1);
    }
  }

  void emit(uint32_t begin, uint32_t end, const std::string &s) {
    if (!lines_.empty() && blankAllowed_ && (wantBlank_ || blankBetween(lastEnd_, begin))) {
      lines_.emplace_back();
      codeWidth_.push_back(0);
    }
    wantBlank_ = false;
    blankAllowed_ = true;
    lines_.push_back(syntax::indentation(indent_) + s);
    codeWidth_.push_back(0);
    lastEnd_ = end;
    endsWithLineComment_ = false;
  }

  void flushComments(uint32_t before) {
    while (next_ < comments_.size() && comments_[next_].range.begin.offset < before) {
      const Comment &c = comments_[next_++];
      bool isLine = c.text.rfind("//", 0) == 0;
      if (!lines_.empty() && !lines_.back().empty() && !endsWithLineComment_ &&
          sameLine(lastEnd_, c.range.begin.offset)) {
        if (!codeWidth_.back())
          codeWidth_.back() = lines_.back().size();
        lines_.back() += "  " + c.text;
        lastEnd_ = std::max(lastEnd_, c.range.end.offset);
      } else {
        emit(c.range.begin.offset, c.range.end.offset, c.text);
      }
      endsWithLineComment_ = isLine;
    }
  }

  /// True if no line break separates `from` from `to` (or `to` lies inside the
  /// code just printed, as a comment within an item does).
  bool sameLine(uint32_t from, uint32_t to) const {
    for (uint32_t i = from; i < to && i < text_.size(); ++i)
      if (text_[i] == '\n')
        return false;
    return true;
  }

  /// True if a line holding only white space lies between `from` and `to`.
  bool blankBetween(uint32_t from, uint32_t to) const {
    int newlines = 0;
    for (uint32_t i = from; i < to && i < text_.size(); ++i) {
      char c = text_[i];
      if (c == '\n') {
        if (++newlines == 2)
          return true;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        newlines = 0;
      }
    }
    return false;
  }

  void open(uint32_t begin, uint32_t headerEnd, const std::string &header) {
    line(begin, headerEnd, syntax::openBlock(header));
    ++indent_;
    blankAllowed_ = false;
  }

  /// `range` ends with the closing brace.
  void close(SourceRange range) {
    uint32_t brace = range.end.offset > 0 ? range.end.offset - 1 : 0;
    flushComments(brace);
    --indent_;
    blankAllowed_ = false;
    emit(brace, range.end.offset, syntax::closeBlock());
  }

  // ---- values ---------------------------------------------------------------
  std::string value(const Value &v) const {
    switch (v.kind) {
    case Value::Kind::Quantity:
      if (v.unit.empty())
        return v.number;
      // `4 x2` would lex as the array shape 4 x 2; only a line break keeps a
      // unit spelled x<digit> (never a valid unit, but fmt must not change the AST).
      if (v.unit.size() > 1 && v.unit[0] == 'x' && std::isdigit(static_cast<unsigned char>(v.unit[1])))
        return v.number + "\n" + syntax::indentation(indent_ + 2) + v.unit;
      return v.number + " " + v.unit;
    case Value::Kind::Array: return std::to_string(v.rows) + " x " + std::to_string(v.cols);
    case Value::Kind::Word: return v.text;
    case Value::Kind::String: return syntax::quoted(v.text);
    }
    DFLC_UNREACHABLE("Value::Kind " + std::to_string(static_cast<int>(v.kind)));
  }

  /// A layer parameter's value. The per-axis window attributes (`stride`,
  /// `dilation`, `pad`) print in their shortest form: one number when both
  /// axes (and both ends) agree, `X x Y` when the ends agree (docs/language.md).
  std::string windowValue(const KeywordArg &k) const {
    const Value &v = k.value;
    const bool window = k.key.name == "stride" || k.key.name == "dilation" || k.key.name == "pad";
    if (!window || (v.kind != Value::Kind::Array && !k.end))
      return value(v) + (k.end ? ", " + value(*k.end) : "");
    auto pair = [](const Value &a) -> std::optional<std::pair<int64_t, int64_t>> {
      if (a.kind == Value::Kind::Array)
        return std::pair(a.rows, a.cols);
      if (a.kind == Value::Kind::Quantity && a.isInteger && a.unit.empty())
        return std::pair(static_cast<int64_t>(a.numeric), static_cast<int64_t>(a.numeric));
      return std::nullopt;
    };
    auto begin = pair(v), end = k.end ? pair(*k.end) : begin;
    if (!begin || !end)   // not integers: sema's error, printed as written
      return value(v) + (k.end ? ", " + value(*k.end) : "");
    auto text = [](std::pair<int64_t, int64_t> p) {
      return p.first == p.second ? std::to_string(p.first) : std::to_string(p.first) + " x " + std::to_string(p.second);
    };
    if (*begin == *end)
      return text(*begin);
    return std::to_string(begin->first) + " x " + std::to_string(begin->second) + ", " + std::to_string(end->first) +
           " x " + std::to_string(end->second);
  }

  static std::string instanceRef(const InstanceRef &r) {
    return syntax::instanceRef(r.subGraph.name, r.index ? std::optional<int64_t>(r.index->value) : std::nullopt, r.all);
  }

  static std::string graphDirective(const GraphDirective &d) {
    std::vector<std::string> args;
    for (const GraphArg &a : d.args)
      args.push_back(syntax::graphArg(a.first.name, a.second ? std::optional<std::string>(a.second->name) : std::nullopt,
                                      a.amount ? std::optional<int64_t>(a.amount->value) : std::nullopt));
    return syntax::graphDirective(d.kind.name, args);
  }

  std::string property(const Property &p) const {
    return p.key.name + " = " + join(p.values, [this](const Value &v) { return value(v); }) + ";";
  }

  static std::string directive(const Directive &d) {
    switch (d.kind) {
    case Directive::Kind::Tensor: return syntax::tensorDirective(d.role.name, dimValues(d.shape), number(d.shr));
    case Directive::Kind::Stack: return syntax::stackDirective(dimValues(d.steps), number(d.repl));
    case Directive::Kind::Update: return syntax::updateDirective(dimValues(d.steps));
    case Directive::Kind::Layout: return syntax::layoutDirective(d.role.name, dimValues(d.shape));
    }
    DFLC_UNREACHABLE("Directive::Kind " + std::to_string(static_cast<int>(d.kind)));
  }

  // ---- declarations -----------------------------------------------------------
  void print(const NetworkDecl &n) {
    open(n.range.begin.offset, n.name.range.end.offset, "network " + n.name.name);
    for (const NetworkItem &item : n.items) {
      if (auto *b = std::get_if<BatchDecl>(&item)) {
        line(b->range, "batch " + b->dim.name + " = " + std::to_string(b->size.value) + ";");
      } else if (auto *in = std::get_if<InputDecl>(&item)) {
        line(in->range, "input " + in->name.name + " " + syntax::shape(dimValues(in->shape)) + ";");
      } else if (auto *l = std::get_if<LayerDecl>(&item)) {
        std::vector<std::string> args;
        for (const Ident &o : l->operands)
          args.push_back(o.name);
        for (const KeywordArg &k : l->params)
          args.push_back(k.key.name + "=" + windowValue(k));
        line(l->range, l->name.name + " = " + l->op.name + "(" + join(args, [](const std::string &s) { return s; }) +
                           ");");
      }
    }
    close(n.range);
  }

  void print(const HardwareDecl &h) {
    open(h.range.begin.offset, h.name.range.end.offset, "hardware " + h.name.name);
    for (const HardwareItem &item : h.items) {
      if (auto *p = std::get_if<Property>(&item)) {
        line(p->range, property(*p));
        continue;
      }
      const auto &b = std::get<HardwareBlock>(item);
      open(b.range.begin.offset, (b.name ? b.name->range : b.kind.range).end.offset,
           b.kind.name + (b.name ? " " + b.name->name : ""));
      for (const BlockItem &bi : b.items) {
        if (auto *p = std::get_if<Property>(&bi)) {
          line(p->range, property(*p));
        } else if (auto *sb = std::get_if<SubBlock>(&bi)) {
          open(sb->range.begin.offset, (sb->name ? sb->name->range : sb->kind.range).end.offset,
               sb->kind.name + (sb->name ? " " + sb->name->name : ""));
          for (const Property &sp : sb->items)
            line(sp.range, property(sp));
          close(sb->range);
        } else {
          line(std::get<Directive>(bi).range, directive(std::get<Directive>(bi)));
        }
      }
      close(b.range);
    }
    close(h.range);
  }

  void print(const ScheduleDecl &s) {
    open(s.range.begin.offset, s.hardware.range.end.offset, syntax::scheduleHeader(s.network.name, s.hardware.name));
    for (const ScheduleItem &item : s.items) {
      if (auto *seg = std::get_if<SegmentDecl>(&item)) {
        std::vector<std::string> layers;
        for (const Ident &i : seg->layers)
          layers.push_back(i.name);
        line(seg->range, syntax::segmentLine(layers, seg->pipelined, seg->splitDim ? seg->splitDim->name : "",
                                             seg->splitDim ? seg->instances.value : 1));
        continue;
      }
      if (auto *p = std::get_if<Property>(&item)) {
        line(p->range, property(*p));
        continue;
      }
      if (auto *g = std::get_if<SubGraphDecl>(&item)) {
        std::vector<std::string> layers;
        for (const Ident &i : g->layers)
          layers.push_back(i.name);
        const std::string header = syntax::subGraphHeader(g->name.name, layers, g->kind.name);
        if (!g->block) {
          line(g->range, header + ";");
          continue;
        }
        open(g->range.begin.offset, (g->layers.empty() ? g->name : g->layers.back()).range.end.offset, header);
        for (const GraphDirective &d : g->directives)
          line(d.range, graphDirective(d));
        close(g->range);
        continue;
      }
      if (auto *o = std::get_if<OrderDecl>(&item)) {
        std::vector<std::string> refs;
        for (const InstanceRef &r : o->instances)
          refs.push_back(instanceRef(r));
        line(o->range, syntax::orderLine(refs, o->kind.name));
        continue;
      }
      if (auto *in = std::get_if<InstanceDecl>(&item)) {
        open(in->range.begin.offset, in->instance.range.end.offset, syntax::instanceHeader(instanceRef(in->instance), in->kind.name));
        for (const GraphDirective &d : in->directives)
          line(d.range, graphDirective(d));
        close(in->range);
        continue;
      }
      const auto &l = std::get<LayerSchedule>(item);
      open(l.range.begin.offset, (l.unit ? l.unit->range : l.layer.range).end.offset,
           syntax::layerHeader(l.layer.name, l.unit ? l.unit->name : ""));
      for (const LevelSchedule &lv : l.levels) {
        open(lv.range.begin.offset, lv.level.range.end.offset, lv.level.name);
        for (const Directive &d : lv.directives)
          line(d.range, directive(d));
        close(lv.range);
      }
      close(l.range);
    }
    close(s.range);
  }

  void print(const IntrinsicDecl &in) {
    uint32_t headerEnd = in.dims.empty() ? in.name.range.end.offset : in.dims.back().range.end.offset;
    open(in.range.begin.offset, headerEnd,
         "intrinsic " + in.name.name + "(" + syntax::dimList(dimValues(in.dims)) + ")");
    for (const IntrinsicItem &item : in.items) {
      if (auto *p = std::get_if<Property>(&item))
        line(p->range, property(*p));
      else if (auto *c = std::get_if<IntrinsicCompute>(&item))
        line(c->range, access(c->out) + " += " + access(c->lhs) + " * " + access(c->rhs) + ";");
    }
    close(in.range);
  }

  const std::string &text_;
  const std::vector<Comment> &comments_;
  std::vector<std::string> lines_;
  std::vector<size_t> codeWidth_;   // per line: where its trailing comment starts; 0: none
  size_t next_ = 0;            // the first comment not yet printed
  uint32_t lastEnd_ = 0;       // source end of what was printed last
  int indent_ = 0;
  bool wantBlank_ = false;     // a top-level declaration starts: separate it
  bool blankAllowed_ = false;  // false at the start and just inside braces
  bool endsWithLineComment_ = false;
};

} // namespace

std::string printFile(const File &file, const SourceManager &sm) { return Printer(file, sm).run(file); }

} // namespace dfl
