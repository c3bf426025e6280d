// The code action "Fill in missing directives": for each valid but incomplete
// schedule of a document, the solver completes it (off the main loop: a
// request is cancellable between layers) and the action edits the schedule
// into the complete one; inside an incomplete `layer NAME { ... }` block also
// "... of layer NAME", that block alone. Disabled, with the solver's reason,
// when no valid schedule exists. Computed once per text and configuration.
//
// The edits come from the model, not from text: each level block, layer block
// and segment the solver added is printed by model/ScheduleWriter.h's
// per-construct printers and inserted, as whole lines, before the next written
// block in the solver's order, else before the closing brace of the enclosing
// block (positions from the written constructs' source ranges). A level block
// written without directives is replaced. Everything written stays as it was,
// comments included.
#pragma once

#include "lsp/Protocol.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dfl::lsp {

struct Compilation;

class FillIn {
public:
  /// `out` (the actions found so far) followed by the fill-in actions of `c`
  /// whose schedule or layer block overlaps `range`, solved with `solverName`
  /// and `objective` (names the driver validated). `cancelled` (may be null)
  /// stops the solver between layers: then `out` alone.
  std::vector<CodeAction> actions(std::vector<CodeAction> out, const std::shared_ptr<const Compilation> &c,
                                  const std::string &uri, Range range,
                                  const std::shared_ptr<std::atomic<bool>> &cancelled, const std::string &solverName,
                                  const std::string &objective);

private:
  std::mutex mutex_;
  // The last actions per document, valid for one text and configuration:
  // clients ask on every cursor move, the solver should run once per edit.
  struct ScopedAction {
    Range scope;   // offered when the requested range overlaps it
    CodeAction action;
  };
  std::map<std::string, std::pair<std::string, std::vector<ScopedAction>>> cache_;
};

} // namespace dfl::lsp
