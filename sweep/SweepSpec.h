// A design-space sweep's spec (docs/sweep.md): a JSON file naming hardware
// templates, networks, overrides of the templates' properties, batch sizes and
// objectives. Its cartesian product is the sweep's points, each with a stable
// id (a hash of what it solves), so that results written by any run — local,
// a Slurm task, a GNU parallel job — can be resumed and merged.
//
// readSweepSpec() checks everything a point needs before anything runs: the
// JSON, every path, every network file (one network, no hardware or schedule),
// every override value against the template (its DFL sema, located at the
// value in the spec). A mistake is a diagnostic located in the spec.
#pragma once

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl::sweep {

/// One property of a hardware template set to each of `values` in turn:
/// `GBUF.capacity` (a level's), `mac.energy`, `noc.hop_energy` (a block's) or
/// `frequency` (the template's own). Values are DFL text ("64 KiB", "8 x 8").
struct Override {
  std::string key;
  std::vector<std::string> values;
};

struct SweepSpec {
  std::string path;                      // the spec file
  std::string text;                      // its text, copied into OUT/spec.json
  std::vector<std::string> hardware;     // as written
  std::vector<std::string> networks;     // as written
  std::vector<std::string> hardwarePaths, networkPaths;   // resolved
  std::vector<std::string> hardwareTexts, networkTexts;   // their contents
  std::vector<Override> overrides;
  std::vector<std::optional<int64_t>> batches;   // nullopt: the network's own
  std::vector<std::string> objectives;
  std::string solver = "kapla";
  std::optional<double> timeLimitSeconds = 600;
};

/// One point of the product, in the order the spec gives it (hardware
/// outermost, then networks, overrides in order, batches, objectives).
struct SweepPoint {
  size_t index = 0;
  std::string id;            // 16 hex digits
  size_t hardware = 0, network = 0;
  std::vector<std::string> settings;   // one value per override
  std::optional<int64_t> batch;
  std::string objective;
};

/// The most points a sweep may have (docs/limits.md): its points, their ids
/// in OUT/spec.json and the merged table are held in memory at once. Checked
/// before the product is expanded (E1005).
constexpr uint64_t kMaxSweepPoints = 100000;

/// Reads and checks the spec at `path`; nullopt after reporting to `diags`
/// (whose source manager holds the spec). `includes`: the -I dirs, searched
/// after the spec's directory and before DFLC_PATH and the stdlib.
std::optional<SweepSpec> readSweepSpec(const std::string &path, const std::vector<std::string> &includes,
                                       SourceManager &sm, DiagnosticsEngine &diags);

std::vector<SweepPoint> sweepPoints(const SweepSpec &spec);

/// The template's text with the point's overrides applied: a property given
/// is rewritten in place, one not given is added to its block. nullopt with
/// `error` set if a key names no block of the template.
std::optional<std::string> hardwareVariant(const std::string &templatePath, const std::string &templateText,
                                           const std::vector<Override> &overrides,
                                           const std::vector<std::string> &settings, std::string &error);

} // namespace dfl::sweep
