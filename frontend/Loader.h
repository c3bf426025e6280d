// Reads the files of a compilation: the files named on the command line and,
// transitively, everything they import. An import resolves relative to the
// importing file's directory, then against each search root in order: the
// -I dirs, then $DFLC_PATH's, then the stdlib root next to the binary
// (docs/cli.md, "Search roots"). Missing files and import cycles are
// reported at the `import`.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace dfl {

struct LoadedFiles {
  /// Parsed files, every import before its importer; files that failed to
  /// read or parse are absent.
  std::vector<ast::File> files;
  /// Buffer ids of the files named on the command line, in order (0 if unreadable).
  std::vector<uint32_t> roots;
  /// Canonical paths looked at and not read: every candidate of an import
  /// tried before the one found (or all, if none was), and files that could
  /// not be read. A file appearing there changes the load (the language server
  /// re-checks on it).
  std::set<std::string> missed;
};

struct LoadOptions {
  /// Searched in order after the importing file's directory. The clients
  /// give the -I dirs, then appendDefaultSearchRoots(); tests give their own.
  std::vector<std::string> searchRoots;
  /// Texts that take precedence over the disk, keyed by canonical path: the
  /// language server's open (possibly unsaved) documents.
  std::map<std::string, std::string> openBuffers = {};
};

/// The key `openBuffers` is looked up by: the path made absolute and canonical.
std::string canonicalPath(const std::string &path);

/// The stdlib root of the running binary, the directory holding its
/// `stdlib/`: `<exe>/../share/dflc`, as installed (`<prefix>/bin/dflc`,
/// `<prefix>/share/dflc/stdlib/`) and as the build tree mirrors it
/// (`build/tools/dflc`, `build/share/dflc/stdlib` a link to the sources).
/// Returned whether or not it exists, so that a failed import says where dflc
/// looked; empty only if the executable cannot be located.
std::string defaultStdlibRoot();

/// The directories of $DFLC_PATH (colon-separated, empty entries ignored), in order.
std::vector<std::string> environmentSearchRoots();

/// Appends what every client searches after its -I dirs: environmentSearchRoots(),
/// then defaultStdlibRoot() (if the executable was located).
void appendDefaultSearchRoots(std::vector<std::string> &roots);

LoadedFiles loadFiles(const std::vector<std::string> &paths, const LoadOptions &options,
                      SourceManager &sm, DiagnosticsEngine &diags);

/// Like loadFiles, for a buffer whose text is given (the language server's open documents).
LoadedFiles loadBuffer(const std::string &path, std::string text, const LoadOptions &options,
                       SourceManager &sm, DiagnosticsEngine &diags);

} // namespace dfl
