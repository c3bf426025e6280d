#include "frontend/Parser.h"

#include "DflLexer.h"
#include "DflParser.h"
#include "antlr4-runtime.h"

#include "support/Format.h"

#include <cctype>
#include <set>
#include <charconv>
#include <limits>

namespace dfl {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

/// Validates UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates,
/// nothing above U+10FFFF: ANTLR's decoder throws on those); returns the
/// offset of the first byte of the first bad sequence, or npos.
size_t firstInvalidUtf8(const std::string &s) {
  for (size_t i = 0, len; i < s.size(); i += len)
    if ((len = utf8Length(s, i)) == 0)
      return i;
  return std::string::npos;
}

/// The code point of one UTF-8 encoded character (already validated).
unsigned codePoint(const std::string &c) {
  auto b = [&](size_t i) { return static_cast<unsigned>(static_cast<unsigned char>(c[i])); };
  if (c.size() >= 4)
    return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
  if (c.size() == 3)
    return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  if (c.size() == 2)
    return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  return b(0);
}

/// ANTLR indexes code points; we index bytes.
class OffsetMap {
public:
  explicit OffsetMap(const std::string &text) {
    bool ascii = true;
    for (unsigned char c : text)
      ascii &= c < 0x80;
    if (ascii)
      return;
    for (uint32_t i = 0; i < text.size(); ++i)
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
        starts_.push_back(i);
    starts_.push_back(static_cast<uint32_t>(text.size()));
  }
  uint32_t byteOf(size_t cp) const {
    if (starts_.empty())
      return static_cast<uint32_t>(cp);
    return starts_[std::min(cp, starts_.size() - 1)];
  }

private:
  std::vector<uint32_t> starts_;
};

std::string quoteToken(antlr4::Token *t, const antlr4::dfa::Vocabulary &vocab) {
  if (!t || t->getType() == antlr4::Token::EOF)
    return "end of file";
  std::string text = t->getText();
  if (t->getType() == dfl::DflLexer::ID)
    return "identifier '" + text + "'";
  (void)vocab;
  return "'" + text + "'";
}

std::string describeExpected(const antlr4::misc::IntervalSet &set,
                             const antlr4::dfa::Vocabulary &vocab) {
  std::vector<std::string> names;
  for (ssize_t t : set.toList()) {
    if (t == static_cast<ssize_t>(antlr4::Token::EOF)) {
      names.push_back("end of file");
      continue;
    }
    std::string lit = vocab.getLiteralName(t);
    if (!lit.empty())
      names.push_back(lit);
    else if (t == dfl::DflLexer::ID)
      names.push_back("a name");
    else if (t == dfl::DflLexer::INT)
      names.push_back("an integer");
    else if (t == dfl::DflLexer::FLOAT)
      names.push_back("a number");
    else if (t == dfl::DflLexer::STRING)
      names.push_back("a string");
    else if (t == dfl::DflLexer::DIMS)
      names.push_back("an array shape");
  }
  if (names.size() > 6)
    names.resize(6), names.back() = "...";
  return joinList(names);
}

/// Turns ANTLR's syntax errors into E0001 diagnostics, one per position.
class SyntaxErrorListener : public antlr4::BaseErrorListener {
public:
  SyntaxErrorListener(uint32_t file, const OffsetMap &map, DiagnosticsEngine &diags)
      : file_(file), map_(map), diags_(diags) {}

  void syntaxError(antlr4::Recognizer *recognizer, antlr4::Token *offending, size_t, size_t,
                   const std::string &msg, std::exception_ptr) override {
    auto *parser = dynamic_cast<antlr4::Parser *>(recognizer);
    SourceRange range = rangeOf(offending);
    if (range.begin.offset == lastOffset_)
      return;   // one error per position: recovery repeats itself
    lastOffset_ = range.begin.offset;
    std::string text = msg;
    if (parser) {
      const auto &vocab = parser->getVocabulary();
      std::string expected;
      try {
        expected = describeExpected(parser->getExpectedTokens(), vocab);
      } catch (...) {
      }
      text = "unexpected " + quoteToken(offending, vocab);
      if (!expected.empty())
        text += "; expected " + expected;
    }
    diags_.report(range, diag::err_syntax) << text;
  }

  SourceRange rangeOf(antlr4::Token *t) const {
    if (!t)
      return {{file_, 0}, {file_, 0}};
    if (t->getType() == antlr4::Token::EOF) {
      uint32_t b = map_.byteOf(t->getStartIndex());
      return {{file_, b}, {file_, b}};
    }
    return {{file_, map_.byteOf(t->getStartIndex())}, {file_, map_.byteOf(t->getStopIndex() + 1)}};
  }

private:
  uint32_t file_;
  const OffsetMap &map_;
  DiagnosticsEngine &diags_;
  uint32_t lastOffset_ = std::numeric_limits<uint32_t>::max();
};

/// Builds the AST from a parse tree that has no syntax errors.
class AstBuilder {
public:
  AstBuilder(uint32_t file, const OffsetMap &map, DiagnosticsEngine &diags)
      : file_(file), map_(map), diags_(diags) {}

  ast::File build(DflParser::FileContext *ctx) {
    ast::File f;
    f.fileId = file_;
    for (auto *imp : ctx->importDecl()) {
      ast::Import i;
      i.pathRange = range(imp->STRING()->getSymbol());
      i.path = unquote(imp->STRING()->getText());
      i.range = range(imp);
      f.imports.push_back(std::move(i));
    }
    for (auto *top : ctx->topDecl()) {
      if (auto *n = top->networkDecl())
        f.decls.push_back(network(n));
      else if (auto *h = top->hardwareDecl())
        f.decls.push_back(hardware(h));
      else if (auto *s = top->scheduleDecl())
        f.decls.push_back(schedule(s));
      else if (auto *i = top->intrinsicDecl())
        f.decls.push_back(intrinsic(i));
    }
    return f;
  }

private:
  SourceRange range(antlr4::Token *t) const {
    return {{file_, map_.byteOf(t->getStartIndex())}, {file_, map_.byteOf(t->getStopIndex() + 1)}};
  }
  SourceRange range(antlr4::ParserRuleContext *c) const {
    return {{file_, map_.byteOf(c->getStart()->getStartIndex())},
            {file_, map_.byteOf(c->getStop()->getStopIndex() + 1)}};
  }
  ast::Ident ident(antlr4::Token *t) const { return {t->getText(), range(t)}; }
  ast::Ident ident(antlr4::tree::TerminalNode *n) const { return ident(n->getSymbol()); }

  ast::IntLit integer(antlr4::Token *t) {
    ast::IntLit lit;
    lit.range = range(t);
    std::string s = t->getText();
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || v > kMaxInt) {
      diags_.report(lit.range, diag::err_integer_too_large) << s << kMaxInt;
      v = kMaxInt;
    }
    lit.value = v;
    return lit;
  }

  /// A string literal's value: the escapes of docs/language.md, "Lexical
  /// structure" (\" \\ \n \r \t \xHH; any other character after `\` is itself).
  static std::string unquote(const std::string &s) {
    auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
    std::string out;
    for (size_t i = 1; i + 1 < s.size(); ++i) {
      if (s[i] != '\\' || i + 2 >= s.size()) {
        out += s[i];
        continue;
      }
      char c = s[++i];
      if (c == 'x' && i + 3 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
        out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
      }
    }
    return out;
  }

  std::vector<ast::DimSize> shape(DflParser::ShapeContext *ctx) {
    std::vector<ast::DimSize> dims;
    for (auto *d : ctx->dimSize())
      dims.push_back(dimSize(d));
    return dims;
  }
  ast::DimSize dimSize(DflParser::DimSizeContext *d) {
    return {ident(d->dim), integer(d->size), range(d)};
  }

  ast::Value value(DflParser::ValueContext *ctx) {
    ast::Value v;
    v.range = range(ctx);
    if (auto *q = dynamic_cast<DflParser::QuantityValueContext *>(ctx)) {
      v.kind = ast::Value::Kind::Quantity;
      v.number = q->number()->getText();
      v.isInteger = q->number()->INT() != nullptr;
      v.numeric = std::strtod(v.number.c_str(), nullptr);
      if (v.isInteger && v.numeric > static_cast<double>(kMaxInt)) {
        diags_.report(range(q->number()), diag::err_integer_too_large) << v.number << kMaxInt;
        v.numeric = static_cast<double>(kMaxInt);
      }
      if (auto *u = q->unit()) {
        auto ids = u->ID();
        v.unit = ids[0]->getText();
        if (ids.size() > 1)
          v.unit += "/" + ids[1]->getText();
        v.unitRange = range(u);
      }
    } else if (auto *a = dynamic_cast<DflParser::ArrayValueContext *>(ctx)) {
      array(a->DIMS(), v);
    } else if (auto *w = dynamic_cast<DflParser::WordValueContext *>(ctx)) {
      v.kind = ast::Value::Kind::Word;
      v.text = w->ID()->getText();
    } else if (auto *s = dynamic_cast<DflParser::StringValueContext *>(ctx)) {
      v.kind = ast::Value::Kind::String;
      v.text = unquote(s->STRING()->getText());
    }
    return v;
  }

  /// An array value `R x C` from its DIMS token (v.range already set).
  void array(antlr4::tree::TerminalNode *dims, ast::Value &v) {
    v.kind = ast::Value::Kind::Array;
    std::string s = dims->getText();
    // Each side of `R x C` is digits; a too-large one is reported at its own digits.
    auto parse = [&](size_t from) -> int64_t {
      size_t begin = s.find_first_of("0123456789", from), end = s.find_first_not_of("0123456789", begin);
      end = end == std::string::npos ? s.size() : end;
      int64_t n = 0;
      auto [p, ec] = std::from_chars(s.data() + begin, s.data() + end, n);
      if (ec != std::errc() || n > kMaxInt) {
        uint32_t at = v.range.begin.offset + static_cast<uint32_t>(begin);
        diags_.report({{file_, at}, {file_, at + static_cast<uint32_t>(end - begin)}}, diag::err_integer_too_large)
            << s.substr(begin, end - begin) << kMaxInt;
        return kMaxInt;
      }
      return n;
    };
    v.rows = parse(0);
    v.cols = parse(s.find('x'));
  }

  ast::Property property(DflParser::PropertyContext *ctx) {
    ast::Property p;
    p.key = ident(ctx->key);
    for (auto *v : ctx->value())
      p.values.push_back(value(v));
    p.range = range(ctx);
    return p;
  }

  ast::Step step(DflParser::StepContext *ctx) {
    return {ident(ctx->dim), integer(ctx->amount), range(ctx)};
  }

  ast::Directive directive(DflParser::DirectiveContext *ctx) {
    ast::Directive d;
    d.range = range(ctx);
    if (auto *t = dynamic_cast<DflParser::TensorDirectiveContext *>(ctx)) {
      d.kind = ast::Directive::Kind::Tensor;
      d.role = ident(t->role);
      d.shape = shape(t->shape());
      if (t->shr)
        d.shr = integer(t->shr);
    } else if (auto *s = dynamic_cast<DflParser::StackDirectiveContext *>(ctx)) {
      d.kind = ast::Directive::Kind::Stack;
      for (auto *st : s->step())
        d.steps.push_back(step(st));
      if (s->repl)
        d.repl = integer(s->repl);
    } else if (auto *u = dynamic_cast<DflParser::UpdateDirectiveContext *>(ctx)) {
      d.kind = ast::Directive::Kind::Update;
      for (auto *st : u->step())
        d.steps.push_back(step(st));
    } else if (auto *l = dynamic_cast<DflParser::LayoutDirectiveContext *>(ctx)) {
      d.kind = ast::Directive::Kind::Layout;
      d.role = ident(l->role);
      d.shape = shape(l->shape());
    }
    return d;
  }

  ast::NetworkDecl network(DflParser::NetworkDeclContext *ctx) {
    ast::NetworkDecl n;
    n.name = ident(ctx->name);
    n.range = range(ctx);
    for (auto *item : ctx->networkItem()) {
      if (auto *b = dynamic_cast<DflParser::BatchDeclContext *>(item)) {
        n.items.push_back(ast::BatchDecl{ident(b->dim), integer(b->size), range(b)});
      } else if (auto *in = dynamic_cast<DflParser::InputDeclContext *>(item)) {
        n.items.push_back(ast::InputDecl{ident(in->name), shape(in->shape()), range(in)});
      } else if (auto *l = dynamic_cast<DflParser::LayerDeclContext *>(item)) {
        ast::LayerDecl layer;
        layer.name = ident(l->name);
        layer.op = ident(l->op);
        layer.range = range(l);
        for (auto *a : l->arg()) {
          if (auto *k = dynamic_cast<DflParser::KeywordArgContext *>(a)) {
            ast::KeywordArg arg{ident(k->key), value(k->value()), std::nullopt, range(k)};
            if (k->end) {
              arg.end.emplace();
              arg.end->range = range(k->end);
              array(k->DIMS(), *arg.end);
            }
            layer.params.push_back(std::move(arg));
          }
          else if (auto *o = dynamic_cast<DflParser::OperandArgContext *>(a))
            layer.operands.push_back(ident(o->ID()));
        }
        n.items.push_back(std::move(layer));
      }
    }
    return n;
  }

  ast::HardwareDecl hardware(DflParser::HardwareDeclContext *ctx) {
    ast::HardwareDecl h;
    h.name = ident(ctx->name);
    h.range = range(ctx);
    for (auto *item : ctx->hardwareItem()) {
      if (auto *p = dynamic_cast<DflParser::HardwarePropertyContext *>(item)) {
        h.items.push_back(property(p->property()));
      } else if (auto *b = dynamic_cast<DflParser::HardwareBlockContext *>(item)) {
        ast::HardwareBlock block;
        block.kind = ident(b->kind);
        if (b->name)
          block.name = ident(b->name);
        block.range = range(b);
        for (auto *bi : b->blockItem()) {
          if (auto *p = bi->property())
            block.items.push_back(property(p));
          else if (auto *d = bi->directive())
            block.items.push_back(directive(d));
          else if (auto *sb = bi->subBlock()) {
            ast::SubBlock sub;
            sub.kind = ident(sb->kind);
            if (sb->name)
              sub.name = ident(sb->name);
            for (auto *p : sb->property())
              sub.items.push_back(property(p));
            sub.range = range(sb);
            block.items.push_back(std::move(sub));
          }
        }
        h.items.push_back(std::move(block));
      }
    }
    return h;
  }

  ast::ScheduleDecl schedule(DflParser::ScheduleDeclContext *ctx) {
    ast::ScheduleDecl s;
    s.network = ident(ctx->network);
    s.hardware = ident(ctx->hardware);
    s.range = range(ctx);
    for (auto *item : ctx->scheduleItem()) {
      if (auto *seg = dynamic_cast<DflParser::SegmentDeclContext *>(item)) {
        ast::SegmentDecl d;
        for (auto *id : seg->layers)
          d.layers.push_back(ident(id));
        d.pipelined = seg->pipelined != nullptr;
        if (seg->splitDim) {
          d.splitDim = ident(seg->splitDim);
          d.instances = integer(seg->instances);
        }
        d.range = range(seg);
        s.items.push_back(std::move(d));
      } else if (auto *ls = dynamic_cast<DflParser::LayerScheduleContext *>(item)) {
        ast::LayerSchedule l;
        l.layer = ident(ls->name);
        if (ls->vectorUnit)
          l.unit = ident(ls->vectorUnit);
        l.range = range(ls);
        for (auto *lv : ls->levelSchedule()) {
          ast::LevelSchedule level;
          level.level = ident(lv->level);
          level.range = range(lv);
          for (auto *d : lv->directive())
            level.directives.push_back(directive(d));
          l.levels.push_back(std::move(level));
        }
        s.items.push_back(std::move(l));
      } else if (auto *p = dynamic_cast<DflParser::SchedulePropertyContext *>(item)) {
        s.items.push_back(property(p->property()));
      } else if (auto *g = dynamic_cast<DflParser::SubGraphDeclContext *>(item)) {
        ast::SubGraphDecl d{ident(g->kind), ident(g->name), {}, {}, g->getStop()->getText() == "}", range(g)};
        auto ids = g->ID();
        for (size_t i = 2; i < ids.size(); ++i)
          d.layers.push_back(ident(ids[i]));
        for (auto *gd : g->graphDirective())
          d.directives.push_back(graphDirective(gd));
        s.items.push_back(std::move(d));
      } else if (auto *o = dynamic_cast<DflParser::OrderDeclContext *>(item)) {
        ast::OrderDecl d{ident(o->kind), {}, range(o)};
        for (auto *r : o->instanceRef())
          d.instances.push_back(instanceRef(r));
        s.items.push_back(std::move(d));
      } else if (auto *in = dynamic_cast<DflParser::InstanceDeclContext *>(item)) {
        ast::InstanceDecl d{ident(in->kind), instanceRef(in->instanceRef()), {}, range(in)};
        for (auto *gd : in->graphDirective())
          d.directives.push_back(graphDirective(gd));
        s.items.push_back(std::move(d));
      }
    }
    return s;
  }

  ast::InstanceRef instanceRef(DflParser::InstanceRefContext *ctx) {
    ast::InstanceRef r;
    r.subGraph = ident(ctx->subGraph);
    if (ctx->index)
      r.index = integer(ctx->index);
    r.all = ctx->all != nullptr;
    r.range = range(ctx);
    return r;
  }

  ast::GraphDirective graphDirective(DflParser::GraphDirectiveContext *ctx) {
    ast::GraphDirective d{ident(ctx->kind), {}, range(ctx)};
    for (auto *a : ctx->graphArg()) {
      ast::GraphArg arg{ident(a->first), std::nullopt, std::nullopt, range(a)};
      if (a->second)
        arg.second = ident(a->second);
      if (a->amount)
        arg.amount = integer(a->amount);
      d.args.push_back(std::move(arg));
    }
    return d;
  }

  ast::Access access(DflParser::AccessContext *ctx) {
    ast::Access a;
    auto ids = ctx->ID();
    a.tensor = ident(ids[0]);
    for (size_t i = 1; i < ids.size(); ++i)
      a.indices.push_back(ident(ids[i]));
    a.range = range(ctx);
    return a;
  }

  ast::IntrinsicDecl intrinsic(DflParser::IntrinsicDeclContext *ctx) {
    ast::IntrinsicDecl d;
    d.name = ident(ctx->name);
    d.range = range(ctx);
    for (auto *ds : ctx->dimSize())
      d.dims.push_back(dimSize(ds));
    for (auto *item : ctx->intrinsicItem()) {
      if (auto *c = dynamic_cast<DflParser::IntrinsicComputeContext *>(item))
        d.items.push_back(ast::IntrinsicCompute{access(c->out), access(c->lhs), access(c->rhs), range(c)});
      else if (auto *p = dynamic_cast<DflParser::IntrinsicPropertyContext *>(item))
        d.items.push_back(property(p->property()));
    }
    return d;
  }

  uint32_t file_;
  const OffsetMap &map_;
  DiagnosticsEngine &diags_;
};

} // namespace

std::optional<ast::File> parseFile(uint32_t fileId, const SourceManager &sm,
                                   DiagnosticsEngine &diags) {
  const std::string &text = sm.text(fileId);
  if (size_t bad = firstInvalidUtf8(text); bad != std::string::npos) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02X", static_cast<unsigned char>(text[bad]));
    diags.report({{fileId, static_cast<uint32_t>(bad)}, {fileId, static_cast<uint32_t>(bad + 1)}},
                 diag::err_invalid_utf8)
        << hex;
    return std::nullopt;
  }
  unsigned errorsBefore = diags.errorCount();
  OffsetMap map(text);

  antlr4::ANTLRInputStream input(text);
  DflLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();

  ast::File file;
  file.fileId = fileId;
  // Lexical errors are ERROR_CHAR tokens: report them, then hide them from the parser.
  for (antlr4::Token *t : tokens.getTokens()) {
    SourceRange r{{fileId, map.byteOf(t->getStartIndex())}, {fileId, map.byteOf(t->getStopIndex() + 1)}};
    // A '/' token (the one of `B/cycle`) right before '*' starts a block comment
    // that BLOCK_COMMENT could not close.
    size_t at = t->getStartIndex();
    if (t->getText() == "/" && at + 1 < input.size() &&
        input.getText(antlr4::misc::Interval(at + 1, at + 1)) == "*") {
      diags.report({r.begin, {fileId, static_cast<uint32_t>(text.size())}}, diag::err_unterminated_comment);
      break;   // the rest of the file is the comment
    }
    if (t->getType() == DflLexer::UNTERMINATED_STRING) {
      diags.report(r, diag::err_unterminated_string);
      if (auto *ct = dynamic_cast<antlr4::CommonToken *>(t))
        ct->setChannel(antlr4::Token::HIDDEN_CHANNEL);
    } else if (t->getType() == DflLexer::ERROR_CHAR) {
      std::string c = t->getText();
      if (static_cast<unsigned char>(c[0]) < 0x20 || static_cast<unsigned char>(c[0]) == 0x7f) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "(byte 0x%02X)", static_cast<unsigned char>(c[0]));
        diags.report(r, diag::err_invalid_character) << buf;
      } else if (static_cast<unsigned char>(c[0]) >= 0x80) {
        // Valid UTF-8 (checked above): show the character and its code point, not its first byte.
        char buf[32];
        std::snprintf(buf, sizeof buf, " (U+%04X)", codePoint(c));
        diags.report(r, diag::err_invalid_character) << "'" + c + "'" + buf;
      } else
        diags.report(r, diag::err_invalid_character) << "'" + c + "'";
      if (auto *ct = dynamic_cast<antlr4::CommonToken *>(t))
        ct->setChannel(antlr4::Token::HIDDEN_CHANNEL);
      if (diags.limitReached())
        return std::nullopt;
    } else if (t->getType() == DflLexer::LINE_COMMENT || t->getType() == DflLexer::BLOCK_COMMENT) {
      file.comments.push_back({t->getText(), r});
    }
  }
  if (diags.errorCount() > errorsBefore)
    return std::nullopt;   // a stray character makes the parser's messages noise

  DflParser parser(&tokens);
  parser.removeErrorListeners();
  SyntaxErrorListener listener(fileId, map, diags);
  parser.addErrorListener(&listener);
  DflParser::FileContext *tree = parser.file();
  if (diags.errorCount() > errorsBefore || parser.getNumberOfSyntaxErrors() > 0)
    return std::nullopt;

  AstBuilder builder(fileId, map, diags);
  file.decls.clear();
  ast::File built = builder.build(tree);
  built.comments = std::move(file.comments);
  if (diags.errorCount() > errorsBefore)
    return std::nullopt;
  if (built.imports.empty() && built.decls.empty())
    diags.report({{fileId, 0}, {fileId, 0}}, diag::warn_empty_file);
  return built;
}

bool isKeyword(const std::string &word) {
  static const std::set<std::string> words = [] {
    std::set<std::string> out;
    antlr4::ANTLRInputStream none("");
    DflLexer lexer(&none);
    const antlr4::dfa::Vocabulary &v = lexer.getVocabulary();
    for (size_t t = 1; t <= v.getMaxTokenType(); ++t)
      if (std::string lit = v.getLiteralName(t); lit.size() > 2 && std::isalpha(static_cast<unsigned char>(lit[1])))
        out.insert(lit.substr(1, lit.size() - 2));   // 'segment' -> segment
    return out;
  }();
  return words.count(word) > 0;
}

} // namespace dfl
