// Writes the outputs of a run all or nothing: `dflc compile`'s schedule.dfl
// and report.json, `dflc fmt -i`'s files.
//
// Before: the texts, in memory. After writeOutputs() returns nullopt, every
// target holds its new text. After it returns an OutputError, every target
// holds what it held before (or is still absent), no temporary or backup file
// is left, and the error names the file that failed and why. Every stream and
// file-system error is checked; nothing is fsync'ed. Runs on the caller's
// thread; two runs writing the same targets at once are not supported.
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
  std::string reason;   // the system's words
};

std::optional<OutputError> writeOutputs(const std::vector<OutputFile> &files);

} // namespace dfl::driver
