// LSP's `Content-Length` framing, read defensively: the bytes of a stream cut
// into message bodies in bounded memory and time, whatever a client sends
// (docs/lsp.md, "Limits"). No JSON here: Transport parses the bodies.
//
// - A body above `maxMessageBytes` is never allocated: its bytes are read and
//   discarded in bounded chunks, and next() reports it as an Error.
// - A malformed header block (a line without `Name:`, a header line above
//   kMaxHeaderLineBytes, more than kMaxHeaderLines lines, a Content-Length that
//   is not a decimal integer, no Content-Length) is an Error; the next call
//   first resynchronizes: it skips bytes up to the next `Content-Length: N`
//   line. The Error is returned before the skipping, so its reply is never
//   held back waiting for input.
// - Bytes before a header line ("abc}Content-Length: 5", the rest of a body
//   whose Content-Length was too short) are an Error; the header is kept.
// - A body that runs into a `Content-Length: N` line (the Content-Length was
//   too long, and the next message's header follows) ends there: an Error,
//   and the header starts the next message instead of a read that waits for
//   bytes that never come.
// The last two are exact: a `Content-Length: DIGITS` followed by a raw line
// break cannot occur in valid JSON (outside a string the name is not JSON;
// inside one a raw line break is not allowed), so a valid body never matches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

namespace dfl::lsp {

/// The largest message body read (16 MiB): a larger one is skipped. Sixteen
/// times the largest document checked (DocumentStore::kMaxDocumentBytes), so
/// a larger document is still opened and told it is too large, while the
/// parsed JSON of any message stays within a few hundred MB.
inline constexpr uint64_t kMaxMessageBytes = uint64_t(16) << 20;
/// The longest header line, and the most lines in one header block.
inline constexpr size_t kMaxHeaderLineBytes = 4096;
inline constexpr size_t kMaxHeaderLines = 32;
/// The deepest nesting of arrays and objects a message may have (JSON-RPC's
/// own messages nest a few levels; LSP's deepest well under 20).
inline constexpr size_t kMaxJsonDepth = 256;

/// Whether `text` nests arrays and objects (outside strings) deeper than
/// `limit`: checked before parsing, so the parser and the copies of the parsed
/// value (recursive) never see such a message. Linear, no allocation.
bool jsonDeeperThan(std::string_view text, size_t limit);

class MessageReader {
public:
  explicit MessageReader(std::istream &in, uint64_t maxMessageBytes = kMaxMessageBytes)
      : in_(in), maxMessageBytes_(maxMessageBytes) {}

  enum class Kind { Message, Error, End };
  struct Result {
    Kind kind;
    std::string body;    // Message: the body
    std::string error;   // Error: what was wrong, for the reply and the log
  };
  /// The next message body, framing error, or the end of the input.
  Result next();

private:
  size_t read(char *buf, size_t n);   // 1..n bytes, 0 at the end; blocks for the first only
  void unread(std::string_view bytes);
  enum class Line { Ok, TooLong, End };
  Line readLine(std::string &line);
  /// Reads `length` bytes into `keep` (or discards them if null), ending early
  /// before a `Content-Length` line inside them; false at the end of the input.
  bool consume(uint64_t length, std::string *keep, bool &ranIntoHeader);
  /// Skips to the next `Content-Length: N` line, left unread; false at the end.
  bool resynchronize();
  Result fail(std::string error, bool resync = true);

  std::istream &in_;
  uint64_t maxMessageBytes_;
  std::string pushback_;   // bytes unread, served before the stream's
  size_t pushbackPos_ = 0;
  bool resync_ = false;
  uint64_t skip_ = 0;   // an oversize body still to drop, after its error was answered
};

} // namespace dfl::lsp
