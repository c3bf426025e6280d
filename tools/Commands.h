// dflc's commands — show, check, compile, fmt, lsp, list-diagnostics — each
// a run of the driver (driver/Compilation.h) and the rendering of its results:
// diagnostics and --time-passes on stderr, reports on stdout. Returns the exit
// code; an InternalError escapes to main() after the diagnostics so far are
// printed.
#pragma once

#include "tools/CommandLine.h"

namespace dfl::tools {

enum ExitCode { kExitOk = 0, kExitInvalid = 1, kExitUsage = 2, kExitInternal = 3 };

/// Runs `cl` (any command but help and version).
int runCommand(const CommandLine &cl);

} // namespace dfl::tools
