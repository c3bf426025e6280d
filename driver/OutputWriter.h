// The output directory of a run, OUT: every file and subdirectory dflc writes
// there goes through an open handle of OUT, so nothing outside OUT is ever
// written, and a lock on OUT keeps two runs from mixing their outputs
// (docs/cli.md, "How outputs are written").
//
// OutputDir::open resolves the user's path once (a symbolic link there, or in
// a parent, is the user's choice and is followed), creating OUT and its
// missing parents, and from then on works relative to that directory: every
// subdirectory dflc creates or enters (OUT/plots, OUT/kernels, OUT/lcu,
// OUT/points) is made with mkdirat and opened with openat(O_NOFOLLOW |
// O_DIRECTORY); every file is created with openat(O_CREAT | O_EXCL |
// O_NOFOLLOW) under a random name and renamed over its target with renameat.
// Where dflc expects its own directory or file, a symbolic link, FIFO,
// device or socket is refused before anything is written.
//
// write() is all or nothing. Before: the texts, in memory. After it returns
// nullopt, every target holds its new text. After it returns an OutputError,
// every target holds what it held before (or is still absent), no temporary
// or backup file is left, and the error names the file that failed and why —
// except when undoing a failed rename fails too: then the reason says which
// previous text is kept in which backup file. How: every target is checked
// first; each text goes to a temporary beside its target; each existing
// target is hard-linked to a backup (copied where the file system has no hard
// links); then the temporaries are renamed over the targets in order, and a
// failed rename puts the earlier targets back. A regular target keeps its
// permission bits. The directories are fsync'ed after the renames, best effort.
//
// The lock is flock(2) on OUT/.dflc-lock, taken without waiting: a run that
// finds OUT locked is refused. Exclusive for a run that writes a set of
// outputs; shared for the slices of one sweep, which write disjoint files into
// one OUT at once. The lock file is removed when the last holder ends.
//
// One OutputDir is used by one thread at a time; a child forked while it is
// open may write through it (a sweep's workers), and must _exit.
#pragma once

#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace dfl::driver {

struct OutputFile {
  std::string path, text;   // the path relative to OUT ("plots/energy.svg")
};

struct OutputError {
  std::string path;     // the file that could not be written or put in place, OUT/...
  std::string reason;   // what failed, in the system's words
  bool locked = false;  // OUT is in use by another run (the reason says so)
};

/// Stands in for ::renameat within one directory: tests make a rename fail
/// after others succeeded.
using RenameFunction = int (*)(int dir, const char *from, const char *to);

class OutputDir {
public:
  enum class Lock { None, Shared, Exclusive };
  /// The name of the lock file in OUT.
  static constexpr const char *kLockName = ".dflc-lock";

  /// Opens OUT at `path` (created, with its missing parents, if `create`) and
  /// takes `lock` on it. nullopt with `error` set if OUT cannot be opened or
  /// locked (error.locked: another run holds it).
  static std::optional<OutputDir> open(const std::string &path, Lock lock, OutputError &error, bool create = true);
  OutputDir(OutputDir &&other) noexcept;
  OutputDir &operator=(OutputDir &&other) noexcept;
  OutputDir(const OutputDir &) = delete;
  /// Releases the lock; removes the directories open() created if they are
  /// still empty (a run that failed leaves no OUT behind).
  ~OutputDir();

  /// The user's path of OUT, for messages.
  const std::string &path() const { return path_; }
  /// `rel` as the user sees it: OUT/rel.
  std::string shown(const std::string &rel) const;

  /// Writes `files` (paths relative to OUT, without "." or ".." components),
  /// creating the subdirectories they need, all or nothing (above).
  std::optional<OutputError> write(const std::vector<OutputFile> &files, RenameFunction rename = nullptr) const;
  /// Creates the subdirectory `rel` of OUT (and those above it) if absent.
  std::optional<OutputError> makeDirectory(const std::string &rel) const;

private:
  OutputDir() = default;
  void release();

  std::string path_;
  int fd_ = -1;
  int lockFd_ = -1;
  Lock lock_ = Lock::None;
  pid_t owner_ = 0;                   // the process that opened it (a forked worker leaves OUT alone)
  std::vector<std::string> created_;  // directories open() made, outermost first
};

/// Writes one file at `path` (a path the user named: `dflc import -o`, `dflc
/// fmt -i`) through its directory, as OutputDir::write does; the directory
/// must exist. No lock: one file replaced by one rename cannot be mixed.
std::optional<OutputError> writeFile(const std::string &path, const std::string &text);

/// `error` as its diagnostic: E1402 if OUT is locked, else E1401.
void reportOutputError(DiagnosticsEngine &diags, const OutputError &error);

} // namespace dfl::driver
