// The language server's transport under hostile input: MessageReader's
// framing (oversize bodies, every kind of malformed header, each followed by a
// valid message that must come through), the nesting check, and whole
// sessions through runLanguageServer where a valid request after each hostile
// message must be answered.
#include "lsp/LSPServer.h"
#include "lsp/MessageReader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>

using namespace dfl::lsp;

namespace {

std::string frame(const std::string &body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

const std::string kValid = R"({"jsonrpc":"2.0","id":7,"method":"shutdown"})";

using Kind = MessageReader::Kind;

/// What the reader makes of `bytes`: "M:<body>" per message, "E" per error,
/// until the end.
std::vector<std::string> readAll(const std::string &bytes, uint64_t maxMessageBytes = kMaxMessageBytes,
                                 std::vector<std::string> *errors = nullptr) {
  std::istringstream in(bytes);
  MessageReader reader(in, maxMessageBytes);
  std::vector<std::string> out;
  for (int i = 0; i < 100; ++i) {
    MessageReader::Result r = reader.next();
    if (r.kind == Kind::End)
      return out;
    out.push_back(r.kind == Kind::Message ? "M:" + r.body : "E");
    if (errors && r.kind == Kind::Error)
      errors->push_back(r.error);
  }
  ADD_FAILURE() << "no end of input after 100 results";
  return out;
}

TEST(MessageReader, ReadsFramedMessages) {
  // Lowercase names, other headers, stray blank lines between messages.
  std::string in = "content-length: 2\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{}\r\n" + frame(kValid);
  EXPECT_EQ(readAll(in), (std::vector<std::string>{"M:{}", "M:" + kValid}));
}

TEST(MessageReader, SkipsAnOversizeBodyWithoutKeepingIt) {
  // 200 bytes over a limit of 100: skipped exactly, the next message read.
  std::vector<std::string> errors;
  std::string in = "Content-Length: 200\r\n\r\n" + std::string(200, 'x') + frame(kValid);
  EXPECT_EQ(readAll(in, 100, &errors), (std::vector<std::string>{"E", "M:" + kValid}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("200 bytes, above the limit of 100"), std::string::npos) << errors[0];
}

TEST(MessageReader, OneGibibyteLengthThenAValidMessage) {
  // 1 GiB announced, 2 bytes sent, then a valid message: the skip ends at its
  // header (the bytes are never allocated, nor waited for).
  std::string in = "Content-Length: 1073741824\r\n\r\n{}" + frame(kValid);
  EXPECT_EQ(readAll(in), (std::vector<std::string>{"E", "M:" + kValid}));
}

struct Malformed {
  const char *name;
  std::string bytes;                  // sent before a valid message
  std::vector<std::string> expected;  // what the reader returns before it
};

TEST(MessageReader, EveryMalformedHeaderIsAnErrorAndTheNextMessageComesThrough) {
  const std::vector<Malformed> cases = {
      // Short: 5 of the 7 body bytes are the message (not JSON: Transport's
      // ParseError), the other 2 precede the next header: an error.
      {"short", "Content-Length: 5\r\n\r\n{\"a\":1}", {"M:{\"a\":", "E"}},
      // Long: the body runs into the next header: an error, then that message.
      {"long", "Content-Length: 500\r\n\r\n{}", {"E"}},
      {"negative", "Content-Length: -5\r\n\r\n{}", {"E"}},
      {"non-numeric", "Content-Length: abc\r\n\r\n{}", {"E"}},
      {"empty value", "Content-Length:\r\n\r\n{}", {"E"}},
      {"overflowing", "Content-Length: 99999999999999999999999\r\n\r\n{}", {"E"}},
      {"missing", "Content-Type: application/vscode-jsonrpc\r\n\r\n{}", {"E"}},
      // A 10,000-byte line: an error at 4096 bytes, then the skip finds the
      // next Content-Length (that of a 2-byte message).
      {"long line", "X-Junk: " + std::string(10000, 'x') + "\r\nContent-Length: 2\r\n\r\n{}", {"E", "M:{}"}},
      {"too many lines", [] {
         std::string s;
         for (int i = 0; i < 40; ++i)
           s += "X-A: b\r\n";
         // An error at the 33rd line; the skip finds the Content-Length after the 40th.
         return s + "Content-Length: 2\r\n\r\n{}";
       }(), {"E", "M:{}"}},
      {"garbage line", "hello world\r\n", {"E"}},
      {"garbage before a header", "xyz", {"E"}},
      {"binary", std::string("\0\x01\xff\r\n\r\n\0", 7), {"E"}},
      {"body without headers", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\r\n", {"E"}},
  };
  for (const Malformed &c : cases) {
    std::vector<std::string> expected = c.expected;
    expected.push_back("M:" + kValid);
    EXPECT_EQ(readAll(c.bytes + frame(kValid)), expected) << c.name;
  }
}

TEST(MessageReader, EndsInsideABodyOrHeader) {
  EXPECT_EQ(readAll("Content-Length: 10\r\n\r\n{}"), std::vector<std::string>{});
  EXPECT_EQ(readAll("Content-Len"), std::vector<std::string>{});
  // After an error, skipping to a header that never comes ends the input.
  EXPECT_EQ(readAll("Content-Length: x\r\n\r\n" + std::string(100000, 'y')), std::vector<std::string>{"E"});
}

TEST(MessageReader, AHeaderNameInsideAJsonStringIsNotAHeader) {
  // "Content-Length: 3" inside a string, the line break escaped: a valid body.
  std::string body = R"({"text":"Content-Length: 3\r\n\r\nabc"})";
  EXPECT_EQ(readAll(frame(body) + frame(kValid)), (std::vector<std::string>{"M:" + body, "M:" + kValid}));
}

TEST(JsonNesting, CountsBracketsOutsideStrings) {
  EXPECT_FALSE(jsonDeeperThan(std::string(256, '[') + std::string(256, ']'), 256));
  EXPECT_TRUE(jsonDeeperThan(std::string(257, '[') + std::string(257, ']'), 256));
  EXPECT_TRUE(jsonDeeperThan(std::string(1000000, '['), 256));
  // Brackets in strings (an escaped quote does not end one) do not count: depth 1.
  EXPECT_FALSE(jsonDeeperThan(R"({"a":"[[[\"{{{"})", 1));
  // Closing brackets bring the depth back: [[]] [[]] is depth 2, not 4.
  EXPECT_FALSE(jsonDeeperThan("[[],[]] [[]]", 2));
}

/// The replies of a session (bodies, in order) and the exit code.
struct Session {
  std::vector<std::string> replies;
  int exitCode;
  double seconds;
};

Session runSession(const std::string &bytes) {
  std::istringstream in(bytes);
  std::ostringstream out;
  auto t0 = std::chrono::steady_clock::now();
  Session s;
  s.exitCode = runLanguageServer(in, out, LspOptions{});
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::istringstream replies(out.str());
  MessageReader reader(replies);
  for (MessageReader::Result r = reader.next(); r.kind != Kind::End; r = reader.next())
    s.replies.push_back(r.kind == Kind::Message ? r.body : "framing error: " + r.error);
  return s;
}

const std::string kInitialize = frame(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
const std::string kShutdownExit =
    frame(R"({"jsonrpc":"2.0","id":2,"method":"shutdown"})") + frame(R"({"jsonrpc":"2.0","method":"exit"})");
const std::string kParseErrorPrefix = R"({"error":{"code":-32700,"message":")";

TEST(LanguageServer, AnswersAValidRequestAfterEachHostileMessage) {
  const std::vector<std::pair<const char *, std::string>> hostile = {
      {"deep JSON", frame(std::string(100000, '[') + std::string(100000, ']'))},
      {"deep params", frame(R"({"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":)" +
                            std::string(5000, '[') + std::string(5000, ']') + "}")},
      {"1 GiB Content-Length", "Content-Length: 1073741824\r\n\r\n{}"},
      {"short", "Content-Length: 5\r\n\r\n{\"a\":1}"},
      {"long", "Content-Length: 500\r\n\r\n{}"},
      {"negative", "Content-Length: -5\r\n\r\n{}"},
      {"non-numeric", "Content-Length: abc\r\n\r\n{}"},
      {"missing", "Content-Type: x\r\n\r\n{}"},
      {"long line", "X-Junk: " + std::string(10000, 'x') + "\r\n"},
      {"garbage", "hello\r\n"},
  };
  for (const auto &[name, bytes] : hostile) {
    Session s = runSession(kInitialize + bytes + kShutdownExit);
    EXPECT_EQ(s.exitCode, 0) << name;
    // The initialize reply, at least one ParseError with id null, and the
    // shutdown (id 2) answered last.
    ASSERT_GE(s.replies.size(), 3u) << name;
    EXPECT_NE(s.replies.front().find(R"("id":1)"), std::string::npos) << name;
    EXPECT_EQ(s.replies[1].rfind(kParseErrorPrefix, 0), 0u) << name << ": " << s.replies[1];
    EXPECT_NE(s.replies[1].find(R"("id":null)"), std::string::npos) << name;
    EXPECT_EQ(s.replies.back(), R"({"id":2,"jsonrpc":"2.0","result":null})") << name;
    EXPECT_LT(s.seconds, 5.0) << name;
  }
}

TEST(LanguageServer, SkipsAMessageAboveSixteenMebibytes) {
  // 16 MiB + 1 = 16,777,217 bytes, all sent (a JSON string), then shutdown.
  std::string big = "\"" + std::string((16 << 20) - 1, 'a') + "\"";
  Session s = runSession(kInitialize + frame(big) + kShutdownExit);
  ASSERT_EQ(s.replies.size(), 3u);
  EXPECT_EQ(s.replies[1], kParseErrorPrefix + "malformed message: a message of 16777217 bytes, above the limit of "
                                              "16777216: skipped\"},\"id\":null,\"jsonrpc\":\"2.0\"}");
  EXPECT_EQ(s.replies[2], R"({"id":2,"jsonrpc":"2.0","result":null})");
}

TEST(LanguageServer, SaysWhyADeepMessageIsRefused) {
  Session s = runSession(kInitialize + frame(std::string(1000000, '{')) + kShutdownExit);
  ASSERT_EQ(s.replies.size(), 3u);
  EXPECT_EQ(s.replies[1], R"({"error":{"code":-32700,"message":"JSON nested deeper than 256 levels"},"id":null,)"
                          R"("jsonrpc":"2.0"})");
}

} // namespace
