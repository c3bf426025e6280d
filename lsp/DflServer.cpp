#include "lsp/DflServer.h"

#include "support/DiagnosticRenderer.h"

#include "frontend/Loader.h"
#include "frontend/Parser.h"
#include "frontend/Printer.h"
#include "scheduler/ScheduleCheck.h"
#include "model/ScheduleWriter.h"
#include "scheduler/Solver.h"
#include "frontend/Sema.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace dfl::lsp {

std::string uriToPath(const std::string &uri) {
  std::string rest = uri.rfind("file://", 0) == 0 ? uri.substr(7) : uri;
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      out += static_cast<char>(std::stoi(rest.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

std::string pathToUri(const std::string &path) {
  // Server paths are absolute (they come from file:// URIs or are made so).
  return fileUri(path[0] == '/' ? path : "/" + path);
}

namespace {

/// UTF-16 code units in a UTF-8 string (LSP's default position encoding).
int utf16Length(std::string_view s) {
  int n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80)
      n += c >= 0xF0 ? 2 : 1;
  return n;
}

/// The one place where dflc's 1-based lines and byte columns become LSP's
/// 0-based lines and UTF-16 characters.
Position toLspPosition(const SourceManager &sm, SourceLoc loc) {
  if (!loc.valid())
    return {};
  LineCol lc = sm.lineCol(loc);
  std::string_view line = sm.lineText(loc.file, lc.line);
  size_t bytes = std::min<size_t>(lc.column - 1, line.size());
  return {static_cast<int>(lc.line) - 1, utf16Length(line.substr(0, bytes))};
}

Range toLspRange(const SourceManager &sm, SourceRange r) {
  Position b = toLspPosition(sm, r.begin);
  return {b, r.end.valid() ? toLspPosition(sm, r.end) : b};
}

/// The inverse, for positions the client sends: a byte offset into `text`, clamped.
size_t offsetAt(const std::string &text, Position p) {
  size_t off = 0;
  for (int line = 0; line < p.line; ++line) {
    size_t nl = text.find('\n', off);
    if (nl == std::string::npos)
      return text.size();
    off = nl + 1;
  }
  int units = 0;
  while (off < text.size() && text[off] != '\n' && units < p.character) {
    unsigned char c = static_cast<unsigned char>(text[off]);
    units += c >= 0xF0 ? 2 : 1;
    ++off;
    while (off < text.size() && (static_cast<unsigned char>(text[off]) & 0xC0) == 0x80)
      ++off;
  }
  return off;
}

std::string num(double v) {
  char buf[64];
  if (std::fabs(v) < 1e15 && v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

/// A name in the source and what it names; definitions and uses alike.
struct Occurrence {
  enum class Kind { Network, Hardware, Tensor, Level };
  Kind kind;
  SourceRange range;
  bool isDefinition = false;
  std::string scope, name;      // network or hardware; the layer/input/level name
  std::string scheduleLayer;    // Level inside a schedule: the layer it schedules
  SourceRange schedule;         // inside a schedule: its declaration's range
  std::string key() const { return std::to_string(static_cast<int>(kind)) + ":" + scope + "/" + name; }
};

/// One check of one document: everything `dflc check` computes, kept for queries.
struct Compilation {
  SourceManager sm;
  DiagnosticsEngine diags{sm};
  LoadedFiles files;
  uint32_t root = 0;
  const ast::File *rootAst = nullptr;
  bool analyzed = false;
  Model model;
  std::vector<CheckedSchedule> checked;
  std::vector<Occurrence> index;
  std::set<std::string> deps;   // canonical paths of every file read
  uint64_t generation = 0;
};

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
        if (auto *ls = std::get_if<ast::LayerSchedule>(&item)) {
          add(K::Tensor, ls->layer, false, s->network.name, "", s->range);
          for (const ast::LevelSchedule &lv : ls->levels)
            add(K::Level, lv.level, false, s->hardware.name, ls->layer.name, s->range);
        }
      }
    }
  }
}

std::shared_ptr<Compilation> compile(const std::string &path, const std::string &text,
                                     const std::map<std::string, std::string> &open,
                                     const std::vector<std::string> &includes, uint64_t generation) {
  auto c = std::make_shared<Compilation>();
  c->generation = generation;
  c->diags.setErrorLimit(20);   // `dflc check`'s default
  LoadOptions lo{includes, open};
  appendDefaultSearchRoots(lo.searchRoots);
  c->files = loadBuffer(path, text, lo, c->sm, c->diags);
  c->root = c->files.roots.at(0);
  if (!c->diags.hasErrors()) {
    c->model = analyze(c->files.files, c->diags);
    c->analyzed = true;
    if (!c->diags.hasErrors())
      c->checked = checkSchedules(c->model, {c->root}, c->diags);
  }
  for (const ast::File &f : c->files.files) {
    indexFile(f, c->index);
    if (f.fileId == c->root)
      c->rootAst = &f;
  }
  for (uint32_t id = 1; id <= c->sm.bufferCount(); ++id)
    c->deps.insert(canonicalPath(c->sm.path(id)));
  return c;
}

DiagnosticSeverity toLspSeverity(Severity s) {
  switch (s) {
  case Severity::Error: return DiagnosticSeverity::Error;
  case Severity::Warning: return DiagnosticSeverity::Warning;
  case Severity::Remark: return DiagnosticSeverity::Information;
  case Severity::Note: return DiagnosticSeverity::Hint;
  }
  return DiagnosticSeverity::Error;
}

Location toLocation(const SourceManager &sm, SourceRange r) {
  return {pathToUri(canonicalPath(sm.path(r.begin.file))), toLspRange(sm, r)};
}

/// Where, in the root document, a problem in another file shows: the import
/// that reads that file, else the first import, else the top of the file.
Range anchorInRoot(const Compilation &c, uint32_t file) {
  if (!c.rootAst || c.rootAst->imports.empty())
    return {};
  std::string target = canonicalPath(c.sm.path(file));
  fs::path dir = fs::path(c.sm.path(c.root)).parent_path();
  for (const ast::Import &imp : c.rootAst->imports)
    if (canonicalPath((dir / imp.path).string()) == target)
      return toLspRange(c.sm, imp.pathRange);
  return toLspRange(c.sm, c.rootAst->imports.front().pathRange);
}

/// A dflc diagnostic as LSP's: notes become relatedInformation, the code `code`.
Diagnostic toLspDiagnostic(const Compilation &c, const dfl::Diagnostic &d) {
  Diagnostic out;
  out.severity = toLspSeverity(d.severity);
  out.code = d.code;
  out.message = d.message;
  if (d.range.valid() && d.range.begin.file == c.root) {
    out.range = toLspRange(c.sm, d.range);
  } else if (d.range.valid()) {
    LineCol lc = c.sm.lineCol(d.range.begin);
    out.range = anchorInRoot(c, d.range.begin.file);
    out.message = c.sm.path(d.range.begin.file) + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column) +
                  ": " + d.message;
    out.relatedInformation.push_back({toLocation(c.sm, d.range), d.message});
  }
  for (const dfl::Diagnostic &n : d.notes)
    if (n.range.valid())
      out.relatedInformation.push_back({toLocation(c.sm, n.range), n.message});
    else
      out.message += "\nnote: " + n.message;
  return out;
}

const Network *findNetwork(const Model &m, const std::string &name) {
  for (const Network &n : m.networks)
    if (n.name == name)
      return &n;
  return nullptr;
}
const Hardware *findHardware(const Model &m, const std::string &name) {
  for (const Hardware &h : m.hardware)
    if (h.name == name)
      return &h;
  return nullptr;
}

std::string shapeText(const TensorShape &s) {
  return "[C=" + std::to_string(s.C) + ", X=" + std::to_string(s.X) + ", Y=" + std::to_string(s.Y) + "]";
}

std::string layerHover(const Network &net, const Layer &l) {
  std::ostringstream os;
  os << "**" << l.name << "** = " << layerTypeName(l.type) << " (network " << net.name << ")\n\n";
  os << "ifm " << shapeText(l.ifmShape) << " → ofm " << shapeText(l.ofmShape);
  if (l.hasWeights())
    os << ", weights " << l.wgtSize << " words";
  os << "\n\nloop bounds:";
  for (Dim d : {Dim::N, Dim::C, Dim::K, Dim::Xi, Dim::Yi, Dim::Xo, Dim::Yo, Dim::R, Dim::S})
    os << " " << dimName(d) << "=" << (d == Dim::N ? net.batch : at(l.bounds, d));
  if (l.macs)
    os << "\n\nMACs: " << l.macs * net.batch << " (batch of " << net.batch << ")";
  if (l.ops)
    os << "\n\nops: " << l.ops * net.batch << " (batch of " << net.batch << ")";
  return os.str();
}

std::string hardwareLevelHover(const Hardware &hw, const Level &lv) {
  std::ostringstream os;
  os << "**" << lv.name << "** (level of " << hw.name << ")\n\n";
  os << "capacity: " << (lv.capacityBytes ? std::to_string(*lv.capacityBytes) + " B" : "unbounded") << "\n\n";
  os << "array: " << lv.rows << " x " << lv.cols << " (" << lv.units() << " units)\n\n";
  os << "access energy: " << num(lv.accessEnergyPj) << " pJ/word\n\n";
  os << "bandwidth: " << (lv.bandwidthBytesPerCycle ? num(*lv.bandwidthBytesPerCycle) + " B/cycle per unit" : "unbounded");
  std::vector<std::string> transfers;
  for (Transfer t : {Transfer::Unicast, Transfer::Multicast, Transfer::Systolic, Transfer::Sharing})
    if (lv.can(t))
      transfers.push_back(transferName(t));
  os << "\n\ntransfers: " << joinList(transfers, ", ", ", ");
  return os.str();
}

std::string scheduleLevelHover(const Model &m, const Schedule &s, const LayerResult &lr, int levelIdx) {
  const Network &net = m.networks[s.network];
  const Hardware &hw = m.hardware[s.hardware];
  const Layer &layer = net.layers[lr.layer];
  const Level &lv = hw.levels[levelIdx];
  std::ostringstream os;
  os << "**" << lv.name << "** for layer " << layer.name << " (" << net.name << " on " << hw.name << ")\n\n";
  const LevelResult *r = nullptr;
  for (const LevelResult &x : lr.levels)
    if (x.level == levelIdx)
      r = &x;
  if (!r || !r->known) {
    os << "not given: `dflc` fills this level in";
    return os.str();
  }
  os << "| | ";
  std::vector<TensorRole> roles = layer.roles();
  for (TensorRole role : roles)
    os << roleName(role) << " | ";
  os << "\n|---|";
  for (size_t i = 0; i < roles.size(); ++i)
    os << "---|";
  auto row = [&](const char *label, auto value) {
    os << "\n| " << label << " | ";
    for (TensorRole role : roles)
      os << value(static_cast<size_t>(role)) << " | ";
  };
  row("tile (words)", [&](size_t i) { return r->tiles[i].present ? std::to_string(r->tiles[i].words) : "-"; });
  row("reads", [&](size_t i) { return num(r->accesses.reads[i]); });
  row("writes", [&](size_t i) { return num(r->accesses.writes[i]); });
  os << "\n\noccupancy: " << r->occupancyBytes << " B";
  if (lv.capacityBytes)
    os << " of " << *lv.capacityBytes << " B (" << percent(double(r->occupancyBytes), double(*lv.capacityBytes)) << ")";
  os << "\n\nunits: " << r->units << " of " << lv.units() << " (array " << lv.rows << " x " << lv.cols << ")";
  if (!r->trips.empty()) {
    std::vector<std::string> trips;
    for (int64_t t : r->trips)
      trips.push_back(std::to_string(t));
    os << "\n\ntrip counts (innermost first): " << joinList(trips, ", ", ", ");
  }
  os << "\n\nenergy: " << num(r->energyPj) << " pJ (" << percent(r->energyPj, lr.energyPj) << " of the layer)";
  return os.str();
}

bool contains(SourceRange r, uint32_t file, size_t offset) {
  return r.valid() && r.begin.file == file && r.begin.offset <= offset && offset <= r.end.offset;
}

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

struct Document {
  std::string path, text;
  int64_t version = 0;
  uint64_t generation = 0;
  std::shared_ptr<const Compilation> last;
};

} // namespace

struct DflServer::Impl {
  Options options;
  std::mutex mutex;
  std::condition_variable wake, idle;
  std::map<std::string, Document> docs;   // by URI
  std::set<std::string> pending;          // URIs to check; a set, so bursts coalesce
  uint64_t nextGeneration = 1;
  bool busy = false, stopping = false;
  std::thread worker;
  struct Solve {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  std::vector<Solve> solves;   // async code actions; finished ones joined at the next, all by waitIdle
  std::string solver = "kapla", objective = "energy";
  // The last code actions per document, valid for one text and configuration:
  // clients ask on every cursor move, the solver should run once per edit.
  struct ScopedAction {
    Range scope;   // offered when the requested range overlaps it
    CodeAction action;
  };
  std::map<std::string, std::pair<std::string, std::vector<ScopedAction>>> actionCache;

  explicit Impl(Options o) : options(std::move(o)) {
    if (options.background)
      worker = std::thread([this] { run(); });
  }
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    if (worker.joinable())
      worker.join();
    joinSolves();
  }

  void joinSolves() {
    std::vector<Solve> running;
    {
      std::lock_guard<std::mutex> lock(mutex);
      running.swap(solves);
    }
    for (Solve &s : running)
      s.thread.join();
  }

  std::map<std::string, std::string> openBuffers() const {
    std::map<std::string, std::string> open;
    for (const auto &[uri, d] : docs)
      open[canonicalPath(d.path)] = d.text;
    return open;
  }

  /// Queues `uri` (if open) and every open document that read `path`. Caller holds the lock.
  void scheduleDependents(const std::string &path) {
    std::string key = canonicalPath(path);
    for (auto &[uri, d] : docs)
      if (canonicalPath(d.path) == key || (d.last && d.last->deps.count(key)))
        pending.insert(uri);
  }

  void changed(const std::string &path) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      scheduleDependents(path);
    }
    if (options.background)
      wake.notify_all();
    else
      drain();
  }

  /// Checks one pending document; false if none was pending.
  bool checkOne(std::unique_lock<std::mutex> &lock) {
    if (pending.empty())
      return false;
    std::string uri = *pending.begin();
    pending.erase(pending.begin());
    auto it = docs.find(uri);
    if (it == docs.end())
      return true;
    std::string path = it->second.path, text = it->second.text;
    uint64_t generation = it->second.generation;
    int64_t version = it->second.version;
    auto open = openBuffers();
    busy = true;
    lock.unlock();
    std::shared_ptr<Compilation> c;
    PublishDiagnosticsParams params{uri, version, {}};
    try {
      c = compile(path, text, open, options.includes, generation);
      for (const dfl::Diagnostic &d : c->diags.diagnostics())
        params.diagnostics.push_back(toLspDiagnostic(*c, d));
    } catch (const std::exception &e) {
      Diagnostic d;
      d.message = std::string("internal compiler error: ") + e.what();
      params.diagnostics = {d};
    }
    lock.lock();
    it = docs.find(uri);
    // A document edited (or closed) meanwhile is already queued again: drop this stale result.
    if (it != docs.end() && it->second.generation == generation) {
      if (c)
        it->second.last = c;
      lock.unlock();
      if (options.publish)
        options.publish(params);
      lock.lock();
    }
    busy = false;   // only now: waitIdle promises the result is published
    return true;
  }

  void drain() {
    std::unique_lock<std::mutex> lock(mutex);
    while (checkOne(lock)) {
    }
    idle.notify_all();
  }

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stopping || !pending.empty(); });
      if (stopping)
        return;
      while (!stopping && checkOne(lock)) {
      }
      if (pending.empty())
        idle.notify_all();
    }
  }

  /// The compilation of the document's current text (checked now if the last one is stale).
  std::shared_ptr<const Compilation> current(const std::string &uri) {
    std::unique_lock<std::mutex> lock(mutex);
    auto it = docs.find(uri);
    if (it == docs.end())
      return nullptr;
    if (it->second.last && it->second.last->generation == it->second.generation)
      return it->second.last;
    std::string path = it->second.path, text = it->second.text;
    uint64_t generation = it->second.generation;
    auto open = openBuffers();
    lock.unlock();
    return compile(path, text, open, options.includes, generation);
  }

  std::vector<std::shared_ptr<const Compilation>> allLatest() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::shared_ptr<const Compilation>> out;
    for (const auto &[uri, d] : docs)
      if (d.last)
        out.push_back(d.last);
    return out;
  }

  /// Every occurrence of the name at `pos` that `want` accepts: in this document
  /// and what it imports, then in the other open documents (which may import it).
  std::vector<Location> occurrencesOf(const std::string &uri, Position pos,
                                      const std::function<bool(const Occurrence &)> &want) {
    std::vector<Location> out;
    auto c = current(uri);
    const Occurrence *o = c ? occurrenceAt(*c, pos) : nullptr;
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
    collect(*c);
    for (const auto &other : allLatest())
      if (other.get() != c.get())
        collect(*other);
    return out;
  }

  static const Occurrence *occurrenceAt(const Compilation &c, Position pos) {
    size_t off = offsetAt(c.sm.text(c.root), pos);
    for (const Occurrence &o : c.index)
      if (contains(o.range, c.root, off))
        return &o;
    return nullptr;
  }
};

DflServer::DflServer(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}
DflServer::~DflServer() = default;

void DflServer::addDocument(const std::string &uri, const std::string &text, int64_t version) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    Document &d = impl_->docs[uri];
    d.path = path = uriToPath(uri);
    d.text = text;
    d.version = version;
    d.generation = impl_->nextGeneration++;
  }
  impl_->changed(path);
}

void DflServer::updateDocument(const std::string &uri, const std::vector<TextDocumentContentChangeEvent> &changes,
                               int64_t version) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    auto it = impl_->docs.find(uri);
    if (it == impl_->docs.end())
      return;
    Document &d = it->second;
    for (const TextDocumentContentChangeEvent &c : changes) {
      if (!c.range) {
        d.text = c.text;
        continue;
      }
      size_t b = offsetAt(d.text, c.range->start), e = std::max(b, offsetAt(d.text, c.range->end));
      d.text.replace(b, e - b, c.text);
    }
    d.version = version;
    d.generation = impl_->nextGeneration++;
    path = d.path;
  }
  impl_->changed(path);
}

void DflServer::removeDocument(const std::string &uri) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    auto it = impl_->docs.find(uri);
    if (it == impl_->docs.end())
      return;
    path = it->second.path;
    impl_->docs.erase(it);
    impl_->pending.erase(uri);
  }
  if (impl_->options.publish)
    impl_->options.publish({uri, std::nullopt, {}});   // a closed document shows no problems
  impl_->changed(path);                                // its importers now read the disk
}

void DflServer::fileChanged(const std::string &uri) { impl_->changed(uriToPath(uri)); }

void DflServer::waitIdle() {
  impl_->joinSolves();
  if (!impl_->options.background)
    return impl_->drain();
  std::unique_lock<std::mutex> lock(impl_->mutex);
  impl_->idle.wait(lock, [&] { return impl_->pending.empty() && !impl_->busy; });
}

std::optional<Hover> DflServer::findHover(const std::string &uri, Position pos) {
  auto c = impl_->current(uri);
  if (!c || !c->analyzed)
    return std::nullopt;
  const Model &m = c->model;
  auto scheduleAt = [&](SourceRange declRange) -> std::pair<const Schedule *, const ScheduleResult *> {
    for (const CheckedSchedule &cs : c->checked)
      if (m.schedules[cs.schedule].range == declRange)
        return {&m.schedules[cs.schedule], &cs.result};
    return {nullptr, nullptr};
  };
  auto levelHover = [&](SourceRange sched, const std::string &layerName, const std::string &levelName)
      -> std::optional<std::string> {
    auto [s, r] = scheduleAt(sched);
    if (!s)
      return std::nullopt;
    int li = m.networks[s->network].findLayer(layerName), lv = m.hardware[s->hardware].findLevel(levelName);
    if (li < 0 || lv < 0 || static_cast<size_t>(li) >= r->layers.size())
      return std::nullopt;
    return scheduleLevelHover(m, *s, r->layers[li], lv);
  };

  if (const Occurrence *o = Impl::occurrenceAt(*c, pos)) {
    std::optional<std::string> text;
    using K = Occurrence::Kind;
    if (o->kind == K::Tensor) {
      if (const Network *net = findNetwork(m, o->scope)) {
        auto ref = net->names.find(o->name);
        if (ref != net->names.end() && ref->second.isInput) {
          const Input &in = net->inputs.at(ref->second.index);
          text = "**" + in.name + "**: input of " + net->name + " " + shapeText(in.shape) + ", batch " +
                 std::to_string(net->batch);
        } else if (ref != net->names.end()) {
          text = layerHover(*net, net->layers.at(ref->second.index));
          // In a schedule: what this layer costs there, once its directives are complete.
          auto [sched, result] = o->schedule.valid() ? scheduleAt(o->schedule)
                                                     : std::pair<const Schedule *, const ScheduleResult *>{};
          const LayerResult *lr = result && static_cast<size_t>(ref->second.index) < result->layers.size()
                                      ? &result->layers[ref->second.index]
                                      : nullptr;
          if (lr && lr->complete && lr->valid) {
            const Hardware &hw = m.hardware[sched->hardware];
            *text += "\n\nin this schedule: energy " + num(lr->energyPj) + " pJ, latency " + num(lr->latencyCycles) +
                     " cycles (bound by " + (lr->bindingLevel < 0 ? "compute" : hw.levels[lr->bindingLevel].name) +
                     "), utilization " + percent(lr->utilization, 1.0);
          }
        }
      }
    } else if (o->kind == K::Network) {
      if (const Network *net = findNetwork(m, o->scope))
        text = "**network " + net->name + "**: " + std::to_string(net->layers.size()) + " layers, batch " +
               std::to_string(net->batch) + ", " + std::to_string(net->totalMacs()) + " MACs";
    } else if (o->kind == K::Hardware) {
      if (const Hardware *hw = findHardware(m, o->scope)) {
        std::vector<std::string> levels;
        for (const Level &l : hw->levels)
          levels.push_back(l.name);
        text = "**hardware " + hw->name + "**: " + std::to_string(hw->wordBits) + "-bit words, " +
               num(hw->frequencyHz / 1e6) + " MHz, levels " + joinList(levels, ", ", ", ");
      }
    } else if (!o->scheduleLayer.empty()) {
      text = levelHover(o->schedule, o->scheduleLayer, o->name);
    } else if (const Hardware *hw = findHardware(m, o->scope)) {
      int li = hw->findLevel(o->name);
      if (li >= 0) {
        text = hardwareLevelHover(*hw, hw->levels[li]);
        // Which layers this level binds, in every checked schedule on this hardware.
        std::vector<std::string> bound;
        for (const CheckedSchedule &cs : c->checked)
          if (&m.hardware[m.schedules[cs.schedule].hardware] == hw)
            for (const LayerResult &lr : cs.result.layers)
              if (lr.bindingLevel == li)
                bound.push_back(m.networks[m.schedules[cs.schedule].network].layers[lr.layer].name);
        if (!bound.empty())
          *text += "\n\nbinds the latency of: " + joinList(bound, ", ", ", ");
      }
    }
    if (text)
      return Hover{*text, toLspRange(c->sm, o->range)};
    return std::nullopt;
  }
  // Inside a level block of a schedule (on a directive): that level's numbers.
  if (!c->rootAst)
    return std::nullopt;
  size_t off = offsetAt(c->sm.text(c->root), pos);
  for (const ast::TopDecl &decl : c->rootAst->decls)
    if (auto *s = std::get_if<ast::ScheduleDecl>(&decl))
      for (const ast::ScheduleItem &item : s->items)
        if (auto *ls = std::get_if<ast::LayerSchedule>(&item))
          for (const ast::LevelSchedule &lv : ls->levels)
            if (contains(lv.range, c->root, off)) {
              SourceRange r = lv.range;
              for (const ast::Directive &d : lv.directives)
                if (contains(d.range, c->root, off))
                  r = d.range;
              if (auto text = levelHover(s->range, ls->layer.name, lv.level.name))
                return Hover{*text, toLspRange(c->sm, r)};
            }
  return std::nullopt;
}

std::vector<Location> DflServer::findDefinition(const std::string &uri, Position pos) {
  return impl_->occurrencesOf(uri, pos, [](const Occurrence &x) { return x.isDefinition; });
}

std::vector<Location> DflServer::findReferences(const std::string &uri, Position pos, bool includeDeclaration) {
  return impl_->occurrencesOf(uri, pos, [&](const Occurrence &x) { return includeDeclaration || !x.isDefinition; });
}

std::vector<DocumentSymbol> DflServer::findDocumentSymbols(const std::string &uri) {
  std::vector<DocumentSymbol> out;
  auto c = impl_->current(uri);
  if (!c || !c->rootAst)
    return out;
  const SourceManager &sm = c->sm;
  auto symbol = [&](const std::string &name, const std::string &detail, SymbolKind kind, SourceRange range,
                    SourceRange selection) {
    return DocumentSymbol{name, detail, kind, toLspRange(sm, range), toLspRange(sm, selection), {}};
  };
  for (const ast::TopDecl &decl : c->rootAst->decls) {
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
      DocumentSymbol s = symbol("schedule for " + sd->network.name + " on " + sd->hardware.name, "schedule",
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

std::optional<std::vector<TextEdit>> DflServer::format(const std::string &uri) {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    auto it = impl_->docs.find(uri);
    if (it == impl_->docs.end())
      return std::nullopt;
    text = it->second.text;
  }
  // The document alone, as `dflc fmt` reads a file: imports need not resolve.
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  uint32_t id = sm.addBuffer(uriToPath(uri), text);
  auto file = parseFile(id, sm, diags);
  if (!file)
    return std::nullopt;
  std::string printed = printFile(*file, sm);
  if (printed == text)
    return std::vector<TextEdit>{};
  SourceLoc end{id, static_cast<uint32_t>(text.size())};
  return std::vector<TextEdit>{{{{0, 0}, toLspPosition(sm, end)}, printed}};
}

CompletionList DflServer::complete(const std::string &uri, Position pos) {
  CompletionList out;
  auto c = impl_->current(uri);
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
    for (const char *k : {"tensor", "stack", "update", "repl", "shr", "ifm", "wgt", "ofm"})
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
    if (net)
      for (const Layer &l : net->layers)
        add(l.name, CompletionItemKind::Function, std::string(layerTypeName(l.type)) + " layer of " + net->name);
    return out;
  }
  for (const char *k : {"import", "network", "hardware", "schedule", "for", "on", "batch", "input", "level", "mac",
                        "noc", "pipeline", "intrinsic"})
    add(k, CompletionItemKind::Keyword, "keyword");
  if (m)
    for (const Network &n : m->networks) {
      for (const Input &in : n.inputs)
        add(in.name, CompletionItemKind::Variable, "input of " + n.name);
      for (const Layer &l : n.layers)
        add(l.name, CompletionItemKind::Function, std::string(layerTypeName(l.type)) + " layer of " + n.name);
    }
  return out;
}

std::vector<InlayHint> DflServer::inlayHints(const std::string &uri, Range range) {
  std::vector<InlayHint> out;
  auto c = impl_->current(uri);
  if (!c || !c->rootAst || !c->analyzed)
    return out;
  const Model &m = c->model;
  auto inRange = [&](Position p) { return p.line >= range.start.line && p.line <= range.end.line; };
  for (const CheckedSchedule &cs : c->checked) {
    const Schedule &s = m.schedules[cs.schedule];
    if (s.range.begin.file != c->root)
      continue;
    const Hardware &hw = m.hardware[s.hardware];
    forEachLayerBlock(*c, s, cs.result.layers.size(), [&](const ast::LayerSchedule &ls, int li) {
      for (const ast::LevelSchedule &lv : ls.levels) {
        int level = hw.findLevel(lv.level.name);
        const LevelResult *r = nullptr;
        for (const LevelResult &x : cs.result.layers[li].levels)
          if (x.level == level && x.known)
            r = &x;
        if (!r)
          continue;
        // Occupancy after the level's name; each update's trip count after it.
        Position at = toLspPosition(c->sm, lv.level.range.end);
        if (hw.levels[level].capacityBytes && inRange(at))
          out.push_back({at, percent(double(r->occupancyBytes), double(*hw.levels[level].capacityBytes)) + " full",
                         true});
        size_t update = 0;
        for (const ast::Directive &d : lv.directives) {
          if (d.kind != ast::Directive::Kind::Update)
            continue;
          Position end = toLspPosition(c->sm, d.range.end);
          if (update < r->trips.size() && inRange(end))
            out.push_back({end, "× " + std::to_string(r->trips[update]), true});
          ++update;
        }
      }
    });
  }
  return out;
}

bool DflServer::configure(const std::optional<std::string> &solver, const std::optional<std::string> &objective,
                          std::string &error) {
  if (solver && !makeSolver(*solver)) {
    error = "unknown solver '" + *solver + "'" + didYouMean(*solver, solverNames()) + " (expected " +
            joinList(solverNames()) + ")";
    return false;
  }
  if (objective && *objective != "energy" && *objective != "latency" && *objective != "edp") {
    error = "unknown objective '" + *objective + "'" + didYouMean(*objective, {"energy", "latency", "edp"}) +
            " (expected energy, latency or edp)";
    return false;
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->solver = solver.value_or(impl_->solver);
  impl_->objective = objective.value_or(impl_->objective);
  return true;
}

namespace {

/// The solver's directives for one schedule, as DFL: the declaration, and
/// per layer its `layer NAME { ... }` block (canonical 2-space indentation).
std::string scheduleText(const Model &model, const Schedule &schedule) {
  std::string text = writeSchedule(model, schedule, {}, "");
  text = text.substr(text.find("schedule for"));   // after the blank line that follows (no) imports
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

std::string layerBlockText(const Model &model, const Schedule &solved, int layer) {
  Schedule one;
  one.network = solved.network;
  one.hardware = solved.hardware;
  for (const LayerScheduleModel &ls : solved.layers)
    if (ls.layer == layer)
      one.layers.push_back(ls);
  std::string text = scheduleText(model, one);
  size_t begin = text.find("  layer "), end = text.rfind("\n}");
  if (begin == std::string::npos || end == std::string::npos || end <= begin)
    return "";
  return text.substr(begin + 2, end - begin - 2);   // without the first line's indentation
}

} // namespace

void DflServer::codeActionsAsync(const std::string &uri, Range range, std::shared_ptr<std::atomic<bool>> cancelled,
                                 std::function<void(const std::vector<CodeAction> &)> done) {
  auto finished = std::make_shared<std::atomic<bool>>(false);
  auto run = [this, uri, range, cancelled, done, finished] {
    std::vector<CodeAction> actions;
    try {
      actions = codeActions(uri, range, cancelled);
    } catch (const std::exception &) {
      // An internal error in the solver: no action rather than a dead server.
    }
    if (!cancelled || !*cancelled)
      done(actions);
    *finished = true;
  };
  if (!impl_->options.background)
    return run();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto &solves = impl_->solves;
  for (auto it = solves.begin(); it != solves.end();)
    if (*it->finished) {
      it->thread.join();
      it = solves.erase(it);
    } else {
      ++it;
    }
  solves.push_back({std::thread(run), finished});
}

namespace {
struct SolveCancelled {};

/// The fix-its of the root document's diagnostics on the lines of `range`, as
/// quick fixes (the same edits `dflc check` prints under the caret).
std::vector<CodeAction> quickFixes(const Compilation &c, const std::string &uri, Range range) {
  std::vector<CodeAction> out;
  for (const dfl::Diagnostic &d : c.diags.diagnostics())
    for (const FixIt &f : d.fixits) {
      if (!f.range.valid() || f.range.begin.file != c.root)
        continue;
      Range r = toLspRange(c.sm, f.range);
      if (range.end.line < r.start.line || range.start.line > r.end.line)
        continue;
      out.push_back({"Replace '" + std::string(c.sm.textOf(f.range)) + "' with '" + f.replacement + "'", "quickfix",
                     uri, {{r, f.replacement}}, std::nullopt, true});
    }
  return out;
}
} // namespace

std::vector<CodeAction> DflServer::codeActions(const std::string &uri, Range range,
                                               const std::shared_ptr<std::atomic<bool>> &cancelled) {
  auto c = impl_->current(uri);
  if (!c)
    return {};
  std::vector<CodeAction> out = quickFixes(*c, uri, range);
  if (!c->analyzed || !c->rootAst)
    return out;
  std::string solverName, objective;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    solverName = impl_->solver;
    objective = impl_->objective;
  }
  std::string cacheKey = std::to_string(c->generation) + "/" + solverName + "/" + objective;
  std::vector<Impl::ScopedAction> all;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    auto it = impl_->actionCache.find(uri);
    if (it != impl_->actionCache.end() && it->second.first == cacheKey)
      all = it->second.second, cached = true;
  }
  for (const CheckedSchedule &cs : cached ? std::vector<CheckedSchedule>{} : c->checked) {
    const Schedule &s = c->model.schedules[cs.schedule];
    if (s.range.begin.file != c->root || !cs.result.valid || cs.result.complete)
      continue;
    const Network &net = c->model.networks[s.network];
    std::string how = " (solver " + solverName + ", objective " + objective + ")";
    CodeAction whole{"Fill in missing directives" + how, "refactor.rewrite", uri, {}, std::nullopt};
    SolverOptions so;
    so.objective = objective == "latency" ? Objective::Latency : objective == "edp" ? Objective::EDP
                                                                                   : Objective::Energy;
    so.progress = [&](size_t, size_t) {
      if (cancelled && *cancelled)
        throw SolveCancelled{};
    };
    SolveFailure failure;
    std::optional<Solution> solution;
    try {
      solution = makeSolver(solverName)->solve(c->model, s, so, failure);
    } catch (const SolveCancelled &) {
      return out;   // nothing cached: the next request solves again
    }
    if (!solution) {
      whole.disabledReason = "no valid schedule" +
                             (failure.layer >= 0 ? " for layer '" + net.layers.at(failure.layer).name + "'" : "") +
                             ": " + failure.why;
      all.push_back({toLspRange(c->sm, s.range), whole});
      continue;
    }
    whole.edits.push_back({toLspRange(c->sm, s.range), scheduleText(c->model, solution->schedule)});
    all.push_back({toLspRange(c->sm, s.range), whole});
    // Per layer: a written `layer NAME { ... }` block that is incomplete gets the
    // solver's block for that layer alone (the same solve: the layers are independent).
    forEachLayerBlock(*c, s, cs.result.layers.size(), [&](const ast::LayerSchedule &ls, int li) {
      std::string text = cs.result.layers[li].complete ? "" : layerBlockText(c->model, solution->schedule, li);
      if (text.empty())
        return;
      CodeAction one{"Fill in missing directives of layer " + ls.layer.name + how, "refactor.rewrite", uri,
                     {{toLspRange(c->sm, ls.range), text}}, std::nullopt};
      all.push_back({toLspRange(c->sm, ls.range), one});
    });
  }
  if (!cached) {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->actionCache[uri] = {cacheKey, all};
  }
  for (const Impl::ScopedAction &a : all)
    if (!(range.end.line < a.scope.start.line || range.start.line > a.scope.end.line))
      out.push_back(a.action);
  return out;
}

} // namespace dfl::lsp
