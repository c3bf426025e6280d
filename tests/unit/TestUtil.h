// Shared by the front-end unit tests: run the front end over a string.
#pragma once

#include "support/DiagnosticRenderer.h"
#include "frontend/Loader.h"
#include "frontend/Sema.h"
#include "scheduler/embedding/IntrinsicUnits.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace dfl::test {

/// The directory holding the source tree's stdlib/, given by
/// tests/unit/CMakeLists.txt: tests name their roots explicitly and never
/// depend on where the test binary is (defaultStdlibRoot is dflc's, not theirs).
inline const std::string kStdlibRoot = DFLC_TEST_STDLIB_ROOT;

struct Compiled {
  std::unique_ptr<SourceManager> sm = std::make_unique<SourceManager>();
  std::unique_ptr<DiagnosticsEngine> diags = std::make_unique<DiagnosticsEngine>(*sm);
  Model model;

  /// All diagnostics as "line:col: CODE message" lines, notes indented.
  std::string diagnostics() const {
    std::string out;
    for (const Diagnostic &d : diags->diagnostics()) {
      LineCol lc = sm->lineCol(d.range.begin);
      out += std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": " + d.code + " " + d.message + "\n";
      for (const Diagnostic &n : d.notes) {
        LineCol nl = sm->lineCol(n.range.begin);
        out += "  " + std::to_string(nl.line) + ":" + std::to_string(nl.column) + ": note " + n.message + "\n";
      }
    }
    return out;
  }
};

/// `searchRoots`: where imports are looked up (LoadOptions::searchRoots).
inline Compiled compile(const std::string &text, const AnalyzeOptions &options = {},
                        std::vector<std::string> searchRoots = {}) {
  Compiled c;
  LoadedFiles files = loadBuffer("test.dfl", text, LoadOptions{std::move(searchRoots)}, *c.sm, *c.diags);
  if (!c.diags->hasErrors())
    c.model = analyze(files.files, *c.diags, options);
  if (!c.diags->hasErrors())   // the driver's next stage (driver::Compilation::analyze)
    embedIntrinsicUnits(c.model);
  return c;
}

/// Two 1-D convs (X=8 -> a: Xo=6 -> b: Xo=4) on 4 PEs and DRAM, with
/// temporal segments (the analysis' and the simulator's segment tests).
inline const char *const kTwoConvs = R"(network n { input x [C=1, X=8]; a = conv(x, K=1, R=3, S=1); b = conv(a, K=1, R=3, S=1); }
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4; access_energy = 1 pJ; }
  level DRAM { access_energy = 100 pJ; bandwidth = 2 B/cycle; }
  pipeline { temporal = true; spatial = false; }
}
)";

/// Two 3x3 convs over 8x8 (pad 1) pipelined: a walks its output row by row
/// (update Yo: 8 steps), b column by column (update Xo: 8 steps), so b's
/// first column needs all of a's rows. No hardware: append one with a GBUF
/// level (onePeNodes). The segment latency's, the step boxes' and E0824's
/// hand-derived case.
inline const char *const kRowsAgainstColumns = R"(
network n { input x [C=1, X=8, Y=8]; a = conv(x, K=1, R=3, S=3, pad=1); b = conv(a, K=1, R=3, S=3, pad=1); }
schedule for n on h {
  segment a, b pipelined;
  layer a {
    REGF { tensor ifm [Xi=10, Yi=3]; tensor wgt [R=3, S=3]; tensor ofm [Xo=8, Yo=1]; }
    GBUF { tensor ifm [Xi=10, Yi=3]; tensor wgt [R=3, S=3]; tensor ofm [Xo=8, Yo=1]; update Yo += 1, Yi += 1; }
  }
  layer b {
    REGF { tensor ifm [Xi=3, Yi=10]; tensor wgt [R=3, S=3]; tensor ofm [Xo=1, Yo=8]; }
    GBUF { tensor ifm [Xi=3, Yi=10]; tensor wgt [R=3, S=3]; tensor ofm [Xo=1, Yo=8]; update Xo += 1, Xi += 1; }
  }
}
)";

/// A small conv on a small three-level machine: small enough that exhaustive
/// search finishes without its cap.
inline const char *const kSmallConv = R"(network n {
  batch N = 2;
  input x [C=2, X=4, Y=2];
  c = conv(x, K=4, R=3, pad=1);
}
hardware h {
  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
  level REGF { capacity = 32 B; array = 2 x 2; access_energy = 1 pJ; transfer = multicast; }
  level GBUF { capacity = 1 KiB; array = 2; access_energy = 6 pJ; transfer = multicast; }
  level DRAM { access_energy = 200 pJ; bandwidth = 8 B/cycle; }
}
)";

/// Two levels: 16 PEs with 64 B register files and bus multicast, then DRAM
/// (the analysis' and the simulator's hand-counted schedules run on it).
inline const char *const kTwoLevel = R"(
hardware hw {
  word = 16 bit; frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; transfer = multicast; }
  level DRAM { access_energy = 100 pJ; }
}
)";

/// Hardware `h` of `nodes` nodes of one PE each (REGF of `regfBytes`), no
/// bandwidth limits, both kinds of pipelining: every layer is compute-bound,
/// its latency the MACs (ops) it does (the pipelined segments' tests).
inline std::string onePeNodes(int nodes, int regfBytes = 64, int gbufBytes = 1024) {
  return "hardware h {\n"
         "  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }\n"
         "  level REGF { capacity = " + std::to_string(regfBytes) + " B; array = 1; access_energy = 1 pJ; }\n"
         "  level GBUF { capacity = " + std::to_string(gbufBytes) + " B; array = " + std::to_string(nodes) + "; access_energy = 2 pJ; }\n"
         "  level DRAM { access_energy = 100 pJ; }\n"
         "  pipeline { temporal = true; spatial = true; }\n"
         "}\n";
}

/// Layer `name`'s directives on onePeNodes: `tiles` at both levels, the node
/// level stepping one output column (Xo) a step.
inline std::string stepsAlongX(const std::string &name, const std::string &tiles) {
  return "  layer " + name + " {\n    REGF { " + tiles + " }\n    GBUF { " + tiles + " update Xo += 1, Xi += 1; }\n  }\n";
}

} // namespace dfl::test
