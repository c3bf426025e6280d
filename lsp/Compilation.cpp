#include "lsp/Compilation.h"

#include "frontend/Loader.h"

namespace dfl::lsp {

std::shared_ptr<Compilation> compile(const std::string &path, const std::string &text,
                                     std::map<std::string, std::string> open, driver::DriverOptions options,
                                     uint64_t generation) {
  options.files = {path};
  open[canonicalPath(path)] = text;
  options.openBuffers = std::move(open);
  options.requireSchedule = false;   // an editor opens network and hardware files too
  auto c = std::make_shared<Compilation>(std::move(options));
  c->generation = generation;
  c->run.load() && c->run.analyze() && c->run.check();   // what `dflc check` runs
  c->analyzed = c->run.analyzed();
  c->root = c->run.roots().at(0);
  for (const ast::File &f : c->run.files().files) {
    indexFile(f, c->index);
    if (f.fileId == c->root)
      c->rootAst = &f;
  }
  for (uint32_t id = 1; id <= c->sm.bufferCount(); ++id)
    c->deps.insert(canonicalPath(c->sm.path(id)));
  // A missing import is a dependency too: created on disk, it is read.
  c->deps.insert(c->run.files().missed.begin(), c->run.files().missed.end());
  return c;
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

} // namespace dfl::lsp
