#include "lsp/Compilation.h"

#include "frontend/Sema.h"

namespace dfl::lsp {

std::shared_ptr<Compilation> compile(const std::string &path, const std::string &text,
                                     const std::map<std::string, std::string> &open,
                                     const std::vector<std::string> &includes, uint64_t generation) {
  auto c = std::make_shared<Compilation>();
  c->generation = generation;
  c->diags.setErrorLimit(20);   // `dflc check`'s default
  LoadOptions lo{includes, open};
  lo.searchRoots.push_back(defaultStdlibRoot());
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
