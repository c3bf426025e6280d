// The simulator's outputs (backend/SimReport.h).
#include "backend/SimReport.h"

#include "support/Diagnostics.h"
#include "support/FiniteJson.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <set>

namespace dfl::sim {

std::string simJson(const Network &net, const Hardware &hw, const SimOptions &options, const SimResult &result) {
  nlohmann::ordered_json out;
  out["network"] = net.name;
  out["hardware"] = hw.name;
  out["batch"] = net.batch;
  out["seed"] = options.seed;
  out["ok"] = result.ok();
  out["layers"] = nlohmann::ordered_json::array();
  for (const LayerSim &l : result.layers) {
    nlohmann::ordered_json j;
    j["layer"] = l.layer;
    if (!l.skipped.empty()) {
      j["skipped"] = l.skipped;
      out["layers"].push_back(j);
      continue;
    }
    if (!l.seeded.empty()) {   // docs/simulator.md, "Seeded operands"
      j["operands"] = "seeded";
      j["seeded_because"] = l.seeded;
      j["seeded_tensors"] = l.seededTensors;
    }
    j["output"] = l.outputEqual ? "equal" : "differs";
    if (!l.outputEqual)
      j["first_difference"] = {{"index", l.mismatchIndex}, {"kernel", l.got}, {"reference", l.want}};
    j["counts_exact_claimed"] = l.exactClaimed;
    j["counts"] = l.countsEqual ? "equal" : (l.exactClaimed ? "differ" : "differ (approximated)");
    j["macs"] = {{"kernel", l.macs}, {"analysis", l.analysedMacs}};
    nlohmann::ordered_json counts = nlohmann::ordered_json::array();
    for (const CountCheck &c : l.counts)
      counts.push_back({{"level", hw.levels[static_cast<size_t>(c.level)].name},
                        {"tensor", roleName(c.role)},
                        {"kind", c.kind},
                        {"kernel", c.counted},
                        {"analysis", c.analysed},
                        {"equal", c.equal}});
    j["accesses"] = counts;
    j["compile_ms"] = l.compileMs;
    j["run_ms"] = l.runMs;
    out["layers"].push_back(j);
  }
  return dumpReport(out);
}

std::string simTable(const SimResult &result) {
  std::string s = padRight("layer", 20) + "  " + padRight("output", 8) + "  " + padRight("counts", 22) + "  " +
                  padLeft("compile", 9) + "  " + padLeft("run", 9) + "\n" + padRight("", 20) + "  " +
                  padRight("", 8) + "  " + padRight("", 22) + "  " + padLeft("[ms]", 9) + "  " + padLeft("[ms]", 9) +
                  "\n";
  size_t equal = 0, simulated = 0, seeded = 0;
  for (const LayerSim &l : result.layers) {
    if (!l.skipped.empty()) {
      s += padRight(l.layer, 20) + "  skipped: " + l.skipped + "\n";
      continue;
    }
    ++simulated;
    equal += l.outputEqual ? 1 : 0;
    std::string counts = l.countsEqual ? "equal" : l.exactClaimed ? "DIFFER" : "differ (approximated)";
    s += padRight(l.layer, 20) + "  " + padRight(l.outputEqual ? "equal" : "DIFFERS", 8) + "  " + padRight(counts, 22) +
         "  " + padLeft(formatFixed(l.compileMs, 1), 9) + "  " + padLeft(formatFixed(l.runMs, 1), 9) + "\n";
    if (!l.seeded.empty()) {
      ++seeded;
      s += padRight("", 20) + "  on seeded operands: " + l.seeded + " (" + joinList(l.seededTensors, ", ", " and ") +
           ")\n";
    }
  }
  s += std::to_string(equal) + " of " + std::to_string(simulated) + " layers simulated equal the reference; " +
       std::to_string(result.layers.size() - simulated) + " skipped; " +
       (seeded ? std::to_string(seeded) + " on seeded operands; " : "") + (result.ok() ? "ok" : "FAILED") + "\n";
  return s;
}

std::vector<std::pair<std::string, std::string>> kernelFiles(const SimResult &result) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> used;
  for (const LayerSim &l : result.layers) {
    if (!l.skipped.empty())
      continue;
    std::string name;
    for (char ch : l.layer)
      name += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.') ? ch : '_';
    if (name.empty() || name[0] == '.')
      name = "_" + name;
    // A split layer's pieces: LAYER.piece1.ll, LAYER.piece2.ll, ...
    for (size_t k = 0; k < l.ir.size(); ++k) {
      const std::string stem = l.ir.size() == 1 ? name : name + ".piece" + std::to_string(k + 1);
      std::string file = stem + ".ll";
      for (int i = 2; used.count(file); ++i)
        file = stem + "_" + std::to_string(i) + ".ll";
      used.insert(file);
      out.emplace_back(file, l.ir[k]);
    }
  }
  return out;
}

} // namespace dfl::sim
