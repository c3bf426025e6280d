// A run in time as a Chrome trace (OUT/trace.json; docs/simulator.md,
// "Traces"): the JSON object form of the Chrome trace event format, which
// ui.perfetto.dev and chrome://tracing open. The pipeline simulator, the CM
// simulator and GraphTurbo's plan write one each through this class: a track
// per region, core or cluster (a process and thread named by "M" metadata
// events), every step a complete ("X") event with ts and dur in cycles.
// The bytes depend only on what was added, in order: no wall clock.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dfl {

/// The events a trace keeps (docs/limits.md); the ones after them are
/// counted, and the count written in the trace's metadata.
inline constexpr size_t kTraceEvents = 200'000;

class ChromeTrace {
public:
  explicit ChromeTrace(size_t maxEvents = kTraceEvents) : max_(maxEvents) {}

  /// The track of `thread` in `process`: a new process or thread takes the
  /// next number, in the order they are first asked for.
  int track(const std::string &process, const std::string &thread);
  /// Whether the next event would be counted, not kept (skip building its args).
  bool full() const { return events_.size() >= max_; }
  /// A step on `track` from cycle `ts` for `dur` cycles.
  void complete(int track, const std::string &name, double ts, double dur, const nlohmann::ordered_json &args);
  /// A key of the trace's metadata ("otherData"), in the order given.
  void note(const std::string &key, const nlohmann::ordered_json &value);
  size_t events() const { return events_.size(); }
  int64_t dropped() const { return dropped_; }
  /// The trace: metadata, then the tracks' names, then the events in the order added.
  std::string json() const;

private:
  struct Track {
    int pid, tid;
    std::string thread;
  };
  std::vector<std::string> processes_;   // pid - 1
  std::vector<Track> tracks_;
  std::vector<std::string> events_;      // each serialized
  std::vector<std::pair<std::string, std::string>> notes_;
  size_t max_;
  int64_t dropped_ = 0;
};

} // namespace dfl
