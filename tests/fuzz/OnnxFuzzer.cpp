// libFuzzer target for the ONNX importer (frontend/OnnxImporter.h): any bytes
// must give diagnostics or a DFL network, never a crash, a sanitizer report,
// a hang or an internal compiler error; and a network it writes must be
// canonical (`dflc fmt` leaves it unchanged) and pass semantic analysis, as
// `dflc import` requires. Seeded with the models tests/onnx/make_models.py
// builds (run_fuzzer.cmake); docs/testing.md says how to run it longer.
#include "driver/Compilation.h"
#include "frontend/OnnxImporter.h"
#include "frontend/Parser.h"
#include "frontend/Printer.h"
#include "support/DiagnosticRenderer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "OnnxFuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void renderAll(const dfl::SourceManager &sm, const dfl::DiagnosticsEngine &diags) {
  std::ostringstream os;
  dfl::renderText(os, sm, diags.diagnostics());
  dfl::renderJson(sm, diags.diagnostics());
  dfl::renderSarif(sm, diags.diagnostics());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  dfl::SourceManager sm;
  dfl::DiagnosticsEngine diags(sm);
  std::optional<std::string> text = dfl::importOnnx("/fuzz/model.onnx", bytes, sm, diags);
  renderAll(sm, diags);
  if (!text) {
    if (!diags.hasErrors())
      fail("the import failed without a diagnostic", "");
    return 0;
  }
  // Canonical: printing the parsed text gives it back.
  {
    dfl::SourceManager sm2;
    dfl::DiagnosticsEngine diags2(sm2);
    auto parsed = dfl::parseFile(sm2.addBuffer("/fuzz/model.dfl", *text), sm2, diags2);
    if (!parsed || dfl::printFile(*parsed, sm2) != *text)
      fail("the imported network is not canonical DFL", *text);
  }
  // Sema on it, from memory (no file is read: the network imports nothing).
  dfl::driver::DriverOptions options;
  options.files = {"/fuzz/model.dfl"};
  options.openBuffers[dfl::canonicalPath("/fuzz/model.dfl")] = *text;
  options.requireSchedule = false;
  dfl::driver::Compilation c(options);
  if (c.load())
    c.analyze();
  renderAll(c.sources(), c.diagnostics());
  return 0;
}
