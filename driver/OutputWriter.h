// Writes the outputs of a run all or nothing: `dflc compile`'s schedule.dfl,
// report.json and pareto.json, `dflc fmt -i`'s files.
//
// Before: the texts, in memory. After writeOutputs() returns nullopt, every
// target holds its new text. After it returns an OutputError, every target
// holds what it held before (or is still absent), no temporary or backup file
// is left, and the error names the file that failed and why — except when
// undoing a failed rename fails too: then the reason says which previous text
// is kept in which backup file (docs/cli.md, "How outputs are written").
//
// How: every target is checked first (one that is a directory, FIFO, device
// or socket is refused before anything is written). Each text goes to a new
// temporary beside its target, created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW)
// under an unpredictable name, so a file or symbolic link planted there is
// never opened or followed; every write, fsync and close is checked. Each
// existing target is hard-linked to a backup (copied where the file system
// has no hard links), then the temporaries are renamed over the targets in
// order. A target that is a symbolic link is replaced by the new file (the
// link's target is never written); a regular target's permission bits are
// kept. The directories are fsync'ed after the renames, best effort.
// Runs on the caller's thread; two runs writing the same targets at once are
// not supported.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dfl::driver {

struct OutputFile {
  std::string path, text;
};

struct OutputError {
  std::string path;     // the file that could not be written or put in place
  std::string reason;   // what failed, in the system's words
};

/// Stands in for ::rename: tests make a rename fail after others succeeded.
using RenameFunction = int (*)(const char *from, const char *to);

std::optional<OutputError> writeOutputs(const std::vector<OutputFile> &files, RenameFunction rename = nullptr);

} // namespace dfl::driver
