// One check of one document, as `dflc check` checks a file: load (open
// documents read from memory, taking precedence over the disk) → analyze →
// check, and everything computed kept for the queries (hover, completion,
// inlay hints, the code actions) along with the symbol index.
#pragma once

#include "lsp/SymbolIndex.h"

#include "frontend/Loader.h"
#include "scheduler/ScheduleCheck.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace dfl::lsp {

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

/// Checks `text` as the file `path`; `open` maps canonical paths to the text of
/// the open documents, `generation` tags the result with the text it checked.
std::shared_ptr<Compilation> compile(const std::string &path, const std::string &text,
                                     const std::map<std::string, std::string> &open,
                                     const std::vector<std::string> &includes, uint64_t generation);

/// The network or hardware template of the model named `name`; null if none.
const Network *findNetwork(const Model &m, const std::string &name);
const Hardware *findHardware(const Model &m, const std::string &name);

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

} // namespace dfl::lsp
