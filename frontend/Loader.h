// Reads the files of a compilation: the files named on the command line and,
// transitively, everything they import. An import resolves relative to the
// importing file's directory, then against each search root in order.
// Missing files and import cycles are reported at the `import`.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <map>
#include <string>
#include <vector>

namespace dfl {

struct LoadedFiles {
  /// Parsed files, every import before its importer; files that failed to
  /// read or parse are absent.
  std::vector<ast::File> files;
  /// Buffer ids of the files named on the command line, in order (0 if unreadable).
  std::vector<uint32_t> roots;
};

struct LoadOptions {
  std::vector<std::string> searchRoots;   // -I dirs, then the stdlib root
  /// Texts that take precedence over the disk, keyed by canonical path: the
  /// language server's open (possibly unsaved) documents.
  std::map<std::string, std::string> openBuffers = {};
};

/// The key `openBuffers` is looked up by: the path made absolute and canonical.
std::string canonicalPath(const std::string &path);

/// The directory holding dflc's `stdlib/`: $DFLC_STDLIB if set, else the
/// source tree it was built from, else `<exe>/../share/dflc`.
std::string defaultStdlibRoot();

LoadedFiles loadFiles(const std::vector<std::string> &paths, const LoadOptions &options,
                      SourceManager &sm, DiagnosticsEngine &diags);

/// Like loadFiles, for a buffer whose text is given (the language server's open documents).
LoadedFiles loadBuffer(const std::string &path, std::string text, const LoadOptions &options,
                       SourceManager &sm, DiagnosticsEngine &diags);

} // namespace dfl
