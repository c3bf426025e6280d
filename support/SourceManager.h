// Owns the text of every file dflc reads and maps byte offsets to lines and
// columns. Everything after the parser refers to source by SourceRange.
#pragma once

#include "support/Check.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dfl {

/// A position in a buffer of the SourceManager. file == 0 means "no location".
struct SourceLoc {
  uint32_t file = 0;
  uint32_t offset = 0;
  bool valid() const { return file != 0; }
  friend bool operator==(const SourceLoc &, const SourceLoc &) = default;
};

/// A half-open range [begin, end) within one buffer.
struct SourceRange {
  SourceLoc begin, end;
  bool valid() const { return begin.valid(); }
  friend bool operator==(const SourceRange &, const SourceRange &) = default;
};

/// 1-based line and column (columns count bytes, as clang's do).
struct LineCol {
  unsigned line = 0, column = 0;
};

/// Why a file of this type (a stat st_mode) is not read or replaced: "is a
/// directory", "is a FIFO, not a regular file", ...; empty for a regular file.
std::string notRegularFileReason(unsigned mode);

class SourceManager {
public:
  /// Adds a buffer and returns its id (never 0).
  uint32_t addBuffer(std::string path, std::string text);
  /// Adds a buffer for a file that is not DFL text (an ONNX model): its
  /// diagnostics are located by the file alone (`MODEL.onnx: error: ...`).
  uint32_t addOpaqueBuffer(std::string path);
  /// Whether `file` came from addOpaqueBuffer.
  bool isOpaque(uint32_t file) const { return buffer(file).opaque; }
  /// The largest file loadFile() reads: 64 MiB (docs/cli.md, "Limits").
  static constexpr uint64_t kMaxFileBytes = uint64_t(64) << 20;
  /// Reads a regular file from disk. On failure returns nullopt and sets
  /// `error` to the reason ("is a directory", "is a FIFO, not a regular file",
  /// "is larger than the 64 MiB limit", the system's words). Never blocks on
  /// a FIFO or device, and never reads more than kMaxFileBytes + 1 bytes.
  std::optional<uint32_t> loadFile(const std::string &path, std::string &error);
  /// The id of an already loaded buffer with this (canonical) path, or 0.
  uint32_t findBuffer(const std::string &path) const;

  const std::string &path(uint32_t file) const { return buffer(file).path; }
  const std::string &text(uint32_t file) const { return buffer(file).text; }
  size_t bufferCount() const { return buffers_.size(); }

  LineCol lineCol(SourceLoc loc) const;
  /// The text of a 1-based line, without its line terminator.
  std::string_view lineText(uint32_t file, unsigned line) const;
  /// The offset of a 1-based line and column (clamped to the buffer).
  uint32_t offsetOf(uint32_t file, LineCol lc) const;
  std::string_view textOf(SourceRange r) const;

private:
  struct Buffer {
    std::string path, text;
    std::vector<uint32_t> lineStarts;
    bool opaque = false;
  };
  /// The buffer of an id addBuffer returned; any other id is our bug.
  const Buffer &buffer(uint32_t file) const {
    DFLC_CHECK(file >= 1 && file <= buffers_.size()) << "no buffer " << file << " (" << buffers_.size() << " loaded)";
    return buffers_[file - 1];
  }
  std::vector<Buffer> buffers_;
};

} // namespace dfl
