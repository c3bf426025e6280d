#include "frontend/Loader.h"

#include "frontend/OnnxImporter.h"
#include "frontend/Parser.h"
#include "support/Executable.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

namespace fs = std::filesystem;

namespace dfl {
namespace {

std::string canonicalKey(const fs::path &p) { return canonicalPath(p.string()); }

/// The files of an import cycle, as the diagnostic names them: every file,
/// or the first and last few of a long cycle with the count left out between.
std::string cycleText(std::vector<std::string> names) {
  constexpr size_t kShown = 5;   // at each end
  if (names.size() > 2 * kShown + 1) {
    size_t omitted = names.size() - 2 * kShown;
    names.erase(names.begin() + kShown, names.end() - kShown);
    names.insert(names.begin() + kShown, "... (" + std::to_string(omitted) + " more) ...");
  }
  return joinList(names, " imports ", " imports ");
}

/// Loads depth first with an explicit stack, not recursion: an import chain
/// as deep as the files on disk allow costs heap, never the call stack
/// (docs/cli.md, "Limits").
class Loader {
public:
  Loader(const LoadOptions &options, SourceManager &sm, DiagnosticsEngine &diags)
      : options_(options), sm_(sm), diags_(diags) {}

  /// Loads (or finds) a file, then its imports; returns its buffer id or 0.
  uint32_t visitPath(const std::string &path, SourceRange importedAt) {
    uint32_t id = enter(path, importedAt);
    run();
    return id;
  }

  /// Loads a buffer already in the source manager, then its imports.
  uint32_t visitBuffer(const std::string &key, uint32_t id) {
    push(key, id);
    run();
    return id;
  }

  LoadedFiles take() { return std::move(loaded_); }

private:
  /// A file whose imports are being loaded.
  struct Frame {
    std::string key;
    std::optional<ast::File> file;   // absent after a syntax error
    fs::path dir;
    size_t next = 0;                 // its next import to visit
  };

  /// A file seen before gives its id; a new one is read and pushed (its
  /// imports are visited by run()). 0 if it cannot be read.
  uint32_t enter(const std::string &path, SourceRange importedAt) {
    std::string key = canonicalKey(path);
    if (auto it = state_.find(key); it != state_.end())
      return it->second.id;
    if (auto open = options_.openBuffers.find(key); open != options_.openBuffers.end())
      return push(key, sm_.addBuffer(path, open->second));
    std::string error;
    if (isOnnxPath(path))
      return enterOnnx(path, key, importedAt);
    if (auto id = sm_.loadFile(path, error))
      return push(key, *id);
    diags_.report(importedAt, diag::err_file_unreadable) << path << error;
    state_[key] = {0, true};
    loaded_.missed.insert(key);
    return 0;
  }

  /// An ONNX model: its imported network's DFL text is the file's buffer
  /// (frontend/OnnxImporter.h). 0 if it cannot be read or imported.
  uint32_t enterOnnx(const std::string &path, const std::string &key, SourceRange importedAt) {
    state_[key] = {0, true};
    std::string error;
    SourceManager bytes;   // read as loadFile reads: no FIFO, no device, at most kMaxFileBytes
    std::optional<uint32_t> raw = bytes.loadFile(path, error);
    if (!raw) {
      loaded_.missed.insert(key);
      diags_.report(importedAt, diag::err_file_unreadable) << path << error;
      return 0;
    }
    std::optional<std::string> text = importOnnx(path, bytes.text(*raw), sm_, diags_);
    if (!text)
      return 0;
    return push(key, sm_.addBuffer(path, std::move(*text)));
  }

  uint32_t push(const std::string &key, uint32_t id) {
    state_[key] = {id, false};
    frames_.push_back({key, parseFile(id, sm_, diags_), fs::path(sm_.path(id)).parent_path()});
    return id;
  }

  /// Visits the imports of the pushed files, depth first; a file is added to
  /// the result after everything it imports.
  void run() {
    while (!frames_.empty()) {
      Frame &top = frames_.back();
      if (top.file && top.next < top.file->imports.size()) {
        // A copy: visiting may push a frame, which moves `top`.
        ast::Import imp = top.file->imports[top.next++];
        visitImport(imp, fs::path(top.dir));
        continue;
      }
      if (top.file)
        loaded_.files.push_back(std::move(*top.file));
      state_[top.key].done = true;
      frames_.pop_back();
    }
  }

  void visitImport(const ast::Import &imp, const fs::path &dir) {
    std::vector<fs::path> candidates{dir / imp.path};
    for (const std::string &root : options_.searchRoots)
      candidates.push_back(fs::path(root) / imp.path);
    if (fs::path(imp.path).is_absolute())
      candidates = {fs::path(imp.path)};
    for (const fs::path &c : candidates) {
      // The first candidate that exists is the import, whatever it is: a
      // directory or FIFO there is reported by enter(), not skipped; so is
      // one whose status cannot be read (a symlink loop, a directory without
      // search permission): enter() names the real reason, not "cannot find".
      std::error_code ec;
      std::string key = canonicalKey(c);
      if (!fs::exists(c, ec) && !ec && !options_.openBuffers.count(key)) {
        loaded_.missed.insert(key);
        continue;
      }
      if (auto it = state_.find(key); it != state_.end() && !it->second.done) {
        // An import of a file still being loaded closes a cycle.
        auto from = std::find_if(frames_.begin(), frames_.end(), [&](const Frame &f) { return f.key == key; });
        std::vector<std::string> names;
        for (auto i = from; i != frames_.end(); ++i)
          names.push_back(fs::path(i->key).filename().string());
        names.push_back(fs::path(key).filename().string());
        diags_.report(imp.pathRange, diag::err_import_cycle) << cycleText(std::move(names));
        return;
      }
      enter(c.string(), imp.pathRange);
      return;
    }
    std::vector<std::string> searched;
    for (const fs::path &c : candidates) {
      std::string d = c.parent_path().lexically_normal().string();
      searched.push_back(d.empty() ? "." : d);   // an importer given as a bare file name
    }
    diags_.report(imp.pathRange, diag::err_import_not_found)
            .note(imp.pathRange, diag::note_import_searched, joinList(searched, ", ", ", "))
        << imp.path;
  }

  struct State {
    uint32_t id = 0;
    bool done = false;
  };
  const LoadOptions &options_;
  SourceManager &sm_;
  DiagnosticsEngine &diags_;
  std::map<std::string, State> state_;
  std::vector<Frame> frames_;
  LoadedFiles loaded_;
};

} // namespace

std::string canonicalPath(const std::string &path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec)
    abs = path;
  fs::path c = fs::weakly_canonical(abs, ec);
  return (ec ? abs.lexically_normal() : c).string();
}

std::string defaultStdlibRoot() {
  std::string exe = executablePath();
  if (exe.empty())
    return "";
  return (fs::path(exe).parent_path().parent_path() / "share" / "dflc").string();
}

std::vector<std::string> environmentSearchRoots() {
  std::vector<std::string> roots;
  const char *env = std::getenv("DFLC_PATH");
  std::string_view rest = env ? env : "";
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    if (!dir.empty())
      roots.emplace_back(dir);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return roots;
}

void appendDefaultSearchRoots(std::vector<std::string> &roots) {
  for (std::string &dir : environmentSearchRoots())
    roots.push_back(std::move(dir));
  if (std::string stdlib = defaultStdlibRoot(); !stdlib.empty())
    roots.push_back(std::move(stdlib));
}

LoadedFiles loadFiles(const std::vector<std::string> &paths, const LoadOptions &options,
                      SourceManager &sm, DiagnosticsEngine &diags) {
  Loader loader(options, sm, diags);
  std::vector<uint32_t> roots;
  for (const std::string &p : paths)
    roots.push_back(loader.visitPath(p, SourceRange{}));
  LoadedFiles out = loader.take();
  out.roots = std::move(roots);
  return out;
}

LoadedFiles loadBuffer(const std::string &path, std::string text, const LoadOptions &options,
                       SourceManager &sm, DiagnosticsEngine &diags) {
  Loader loader(options, sm, diags);
  uint32_t id = sm.addBuffer(path, std::move(text));
  loader.visitBuffer(canonicalKey(path), id);
  LoadedFiles out = loader.take();
  out.roots = {id};
  return out;
}

} // namespace dfl
