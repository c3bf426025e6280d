// The Chrome trace writer (support/ChromeTrace.h).
#include "support/ChromeTrace.h"

#include "support/Check.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace dfl {

int ChromeTrace::track(const std::string &process, const std::string &thread) {
  auto p = std::find(processes_.begin(), processes_.end(), process);
  int pid = static_cast<int>(p - processes_.begin()) + 1;
  if (p == processes_.end())
    processes_.push_back(process);
  int tid = 0;
  for (size_t t = 0; t < tracks_.size(); ++t)
    if (tracks_[t].pid == pid) {
      if (tracks_[t].thread == thread)
        return static_cast<int>(t);
      tid = std::max(tid, tracks_[t].tid);
    }
  tracks_.push_back({pid, tid + 1, thread});
  return static_cast<int>(tracks_.size()) - 1;
}

void ChromeTrace::complete(int track, const std::string &name, double ts, double dur,
                           const nlohmann::ordered_json &args) {
  DFLC_CHECK(track >= 0 && static_cast<size_t>(track) < tracks_.size()) << "trace event on no track";
  DFLC_CHECK(std::isfinite(ts) && std::isfinite(dur) && ts >= 0 && dur >= 0)
      << "trace event '" << name << "' at " << ts << " for " << dur;
  if (full()) {
    ++dropped_;
    return;
  }
  const Track &t = tracks_[static_cast<size_t>(track)];
  nlohmann::ordered_json e = {{"ph", "X"}, {"pid", t.pid}, {"tid", t.tid}, {"name", name},
                              {"ts", ts},  {"dur", dur},   {"args", args}};
  events_.push_back(e.dump());
}

void ChromeTrace::note(const std::string &key, const nlohmann::ordered_json &value) {
  notes_.push_back({key, value.dump()});
}

std::string ChromeTrace::json() const {
  // One event a line: large traces stay readable and diffable.
  std::string out = "{\n\"otherData\": {\"time_unit\": \"cycle\", \"events\": " + std::to_string(events_.size()) +
                    ", \"event_limit\": " + std::to_string(max_) + ", \"events_not_written\": " +
                    std::to_string(dropped_);
  for (const auto &[key, value] : notes_)
    out += ", " + nlohmann::ordered_json(key).dump() + ": " + value;
  out += "},\n\"traceEvents\": [";
  const char *sep = "\n";
  auto add = [&](const nlohmann::ordered_json &e) {
    out += sep + e.dump();
    sep = ",\n";
  };
  for (size_t p = 0; p < processes_.size(); ++p) {
    const int pid = static_cast<int>(p) + 1;
    add({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", processes_[p]}}}});
    add({{"ph", "M"}, {"pid", pid}, {"name", "process_sort_index"}, {"args", {{"sort_index", pid}}}});
  }
  for (const Track &t : tracks_) {
    add({{"ph", "M"}, {"pid", t.pid}, {"tid", t.tid}, {"name", "thread_name"}, {"args", {{"name", t.thread}}}});
    add({{"ph", "M"}, {"pid", t.pid}, {"tid", t.tid}, {"name", "thread_sort_index"}, {"args", {{"sort_index", t.tid}}}});
  }
  for (const std::string &e : events_) {
    out += sep + e;
    sep = ",\n";
  }
  return out + "\n]\n}\n";
}

} // namespace dfl
