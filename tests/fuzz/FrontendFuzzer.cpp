// libFuzzer target for the front end and the schedule check: parse, imports,
// sema, the model summary, the check of every schedule the input declares
// (validity, cost, the reports), all three diagnostic renderers and the
// printer round trip. Loading, analysis and the check run through the driver
// (driver/Compilation.h), as in `dflc check`. Any input must give diagnostics
// or a model, never a crash, a sanitizer report, a hang or an internal
// compiler error (docs/testing.md says how to run it).
//
// Imports are confined to a private copy of the stdlib and the quickstart
// example made at start-up: an input whose imports are absolute or climb out
// with `..` is rejected before the loader sees it, so the fuzzer can neither
// read arbitrary files nor block on a FIFO or device.
#include "driver/Compilation.h"
#include "frontend/Parser.h"
#include "frontend/Printer.h"
#include "model/ModelSummary.h"
#include "scheduler/analysis/Report.h"
#include "support/DiagnosticRenderer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path gRoot;   // the sandbox: <tmp>/root, holding stdlib/ and the quickstart files

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "FrontendFuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void copyDfl(const fs::path &from, const fs::path &to) {
  for (const auto &e : fs::recursive_directory_iterator(from)) {
    if (!e.is_regular_file() || e.path().extension() != ".dfl")
      continue;
    fs::path dest = to / fs::relative(e.path(), from);
    fs::create_directories(dest.parent_path());
    fs::copy_file(e.path(), dest, fs::copy_options::overwrite_existing);
  }
}

/// True if every import stays inside the sandbox: relative and without `..`.
bool importsConfined(const dfl::ast::File &file) {
  for (const dfl::ast::Import &imp : file.imports) {
    fs::path p(imp.path);
    if (p.is_absolute() || imp.path.find('\0') != std::string::npos)
      return false;
    for (const fs::path &part : p)
      if (part == "..")
        return false;
  }
  return true;
}

/// Renders the diagnostics in all three formats; returns the text.
std::string renderAll(const dfl::SourceManager &sm, const dfl::DiagnosticsEngine &diags) {
  std::ostringstream os;
  dfl::renderText(os, sm, diags.diagnostics());
  dfl::renderJson(sm, diags.diagnostics());
  dfl::renderSarif(sm, diags.diagnostics());
  return os.str();
}

/// print(parse(print(x))) == print(x), and the printed text parses cleanly.
void checkPrinterRoundTrip(const dfl::ast::File &file, const dfl::SourceManager &sm) {
  std::string once = dfl::printFile(file, sm);
  dfl::SourceManager sm2;
  dfl::DiagnosticsEngine diags2(sm2);
  uint32_t id = sm2.addBuffer((gRoot / "printed.dfl").string(), once);
  auto reparsed = dfl::parseFile(id, sm2, diags2);
  if (!reparsed)
    fail("the printed file does not parse", once + "\n---\n" + renderAll(sm2, diags2));
  std::string twice = dfl::printFile(*reparsed, sm2);
  if (twice != once)
    fail("printing is not idempotent", once + "\n---\n" + twice);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  char tmpl[] = "/tmp/dflc-fuzz-XXXXXX";
  if (!mkdtemp(tmpl))
    fail("cannot create a temporary directory", "");
  gRoot = fs::path(tmpl) / "root";
  std::atexit([] { std::error_code ec; fs::remove_all(gRoot.parent_path(), ec); });
  fs::path src = DFLC_FUZZ_SOURCE_ROOT;
  copyDfl(src / "stdlib", gRoot / "stdlib");
  copyDfl(src / "examples" / "quickstart", gRoot);   // schedule.dfl imports "net.dfl", "hw.dfl"
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string path = (gRoot / "input.dfl").string();

  // A first parse, on its own, decides whether the imports are safe to follow.
  {
    dfl::SourceManager sm;
    dfl::DiagnosticsEngine diags(sm);
    uint32_t id = sm.addBuffer(path, text);
    auto file = dfl::parseFile(id, sm, diags);
    if (!file) {
      renderAll(sm, diags);
      return 0;
    }
    if (!importsConfined(*file))
      return -1;   // keep such inputs out of the corpus
    checkPrinterRoundTrip(*file, sm);
  }

  dfl::driver::DriverOptions options;
  options.files = {path};
  options.openBuffers[dfl::canonicalPath(path)] = text;
  options.stdlibRoot = gRoot.string();   // imports resolve in the sandbox alone
  options.train = size > 0 && (data[0] & 1);   // the first byte: both sema paths get inputs
  options.requireSchedule = false;   // network and hardware files are inputs too
  dfl::driver::Compilation c(options);
  if (c.load() && c.analyze()) {
    dfl::modelSummaryJson(c.model());
    c.checkSchedules();
    // `dflc check --format json` reports invalid schedules too.
    for (const dfl::CheckedSchedule &s : c.checked()) {
      const dfl::Schedule &schedule = c.model().schedules[s.schedule];
      dfl::scheduleReportText(c.model(), schedule, s.result);
      dfl::scheduleReportJson(c.model(), schedule, s.result);
    }
  }
  renderAll(c.sources(), c.diagnostics());
  return 0;
}
