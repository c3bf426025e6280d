// One check of one document, as `dflc check` checks a file: load (open
// documents read from memory, taking precedence over the disk) → analyze →
// check, and everything computed kept for the queries (hover, completion,
// inlay hints, the code actions) along with the symbol index.
#pragma once

#include "lsp/SymbolIndex.h"

#include "driver/Compilation.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace dfl::lsp {

/// One check of one document: the driver's run (everything `dflc check`
/// computes), kept for queries with the server's index of it.
struct Compilation {
  explicit Compilation(driver::DriverOptions options) : run(std::move(options)) {}
  Compilation(const Compilation &) = delete;
  driver::Compilation run;
  const SourceManager &sm = run.sources();
  const DiagnosticsEngine &diags = run.diagnostics();
  const Model &model = run.model();
  const std::vector<CheckedSchedule> &checked = run.checked();
  uint32_t root = 0;
  const ast::File *rootAst = nullptr;
  bool analyzed = false;
  std::vector<Occurrence> index;
  std::set<std::string> deps;   // canonical paths of every file read or looked for (LoadedFiles::missed)
  uint64_t generation = 0;
};

/// Checks `text` as the file `path`, as `dflc check` would with the driver's
/// `options` (files and open buffers are set here); `open` maps canonical paths
/// to the text of the open documents, `generation` tags the result with the
/// text it checked.
std::shared_ptr<Compilation> compile(const std::string &path, const std::string &text,
                                     std::map<std::string, std::string> open, driver::DriverOptions options,
                                     uint64_t generation);

/// The network or hardware template of the model named `name`; null if none.
const Network *findNetwork(const Model &m, const std::string &name);
const Hardware *findHardware(const Model &m, const std::string &name);

} // namespace dfl::lsp
