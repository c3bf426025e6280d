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

} // namespace dfl::lsp
