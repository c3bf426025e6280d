// libFuzzer target for the language server's transport: the bytes of a whole
// session (LSP's Content-Length framing, JSON-RPC bodies) through
// MessageReader, the nesting check, the JSON parser and the dispatch
// (lsp/Transport.h), with handlers that decode their params as the real ones
// do (ProtocolJson.h) but touch no file: the language logic is the front-end
// fuzzer's. Any input must end with replies or protocol errors, never a crash,
// a sanitizer report, a hang or memory growing with a length the input claims.
#include "lsp/Transport.h"

#include <cstdint>
#include <sstream>
#include <string>

namespace {

using namespace dfl::lsp;

struct Handlers {
  InitializeResult initialize(const InitializeParams &) { return {"fuzz", "0"}; }
  std::optional<Hover> hover(const TextDocumentPositionParams &) { return std::nullopt; }
  std::vector<DocumentSymbol> symbols(const DocumentParams &) { return {}; }
  void didOpen(const DidOpenTextDocumentParams &) {}
  void didChange(const DidChangeTextDocumentParams &) {}
  void configure(const DidChangeConfigurationParams &) {}
  // Answered on the spot, failed as an internal error would, or left pending
  // (cancelled or dropped at the end).
  void codeAction(const CodeActionParams &p, Reply<std::vector<CodeAction>> reply) {
    if (p.range.start.line % 2 == 0)
      reply({});
    else if (p.range.start.line % 4 == 1)
      reply.fail("fuzz: an internal error");
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char *>(data), size));
  std::ostringstream out;
  Transport transport(in, out, {});
  Handlers h;
  transport.method("initialize", &h, &Handlers::initialize);
  transport.method("textDocument/hover", &h, &Handlers::hover);
  transport.method("textDocument/documentSymbol", &h, &Handlers::symbols);
  transport.notification("textDocument/didOpen", &h, &Handlers::didOpen);
  transport.notification("textDocument/didChange", &h, &Handlers::didChange);
  transport.notification("workspace/didChangeConfiguration", &h, &Handlers::configure);
  transport.asyncMethod("textDocument/codeAction", &h, &Handlers::codeAction);
  transport.run();
  return 0;
}
