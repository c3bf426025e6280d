// `dflc lsp`: the language server's entry point. Binds the protocol
// (Transport) to the language logic (DflServer): one table of methods, each
// handler one line. Reads LSP messages from `in`, writes to `out`; returns the
// process exit code (0 after shutdown + exit, 1 on exit without shutdown or
// end of input). Never throws on any input.
#pragma once

#include "driver/DriverOptions.h"
#include "lsp/DflServer.h"   // kDefaultRequestTimeLimitSeconds

#include <iosfwd>
#include <string>
#include <vector>

namespace dfl::lsp {

struct LspOptions {
  bool litTest = false;           // MLIR's -lit-test (Transport.h); checks run on the main loop
  std::ostream *log = nullptr;    // --log FILE: every message in and out, timestamped
  /// -I, --train, --solver, --objective of `dflc lsp`; the editor's settings
  /// (initializationOptions, workspace/didChangeConfiguration) override them.
  driver::DriverOptions driver;
  std::string version = "0.1.0";
  /// The time limit of a solve a request starts, unless the editor's
  /// `timeLimit` setting says otherwise (docs/lsp.md, "Limits").
  double requestTimeLimitSeconds = kDefaultRequestTimeLimitSeconds;
};

int runLanguageServer(std::istream &in, std::ostream &out, const LspOptions &options);

} // namespace dfl::lsp
