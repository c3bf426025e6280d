// The Chrome trace writer (support/ChromeTrace.h): tracks numbered in the
// order asked for, the event bound, and the bytes, all written out by hand.
#include "support/ChromeTrace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace dfl;

TEST(ChromeTrace, TracksInOrder) {
  ChromeTrace t;
  int px = t.track("p", "x"), py = t.track("p", "y"), qx = t.track("q", "x");
  EXPECT_EQ(t.track("p", "x"), px);   // asked again: the same track
  EXPECT_NE(px, py);
  EXPECT_NE(px, qx);
  t.complete(qx, "s", 0, 1, {{"layer", "l"}, {"step", 0}});
  t.complete(py, "s", 0, 1, {{"layer", "l"}, {"step", 0}});
  // p is process 1 (asked first), q 2; in p, x is thread 1 and y 2; in q, x is 1.
  const std::string j = t.json();
  EXPECT_NE(j.find(R"({"ph":"M","pid":2,"name":"process_name","args":{"name":"q"}})"), std::string::npos);
  EXPECT_NE(j.find(R"({"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"y"}})"), std::string::npos);
  EXPECT_NE(j.find(R"({"ph":"M","pid":2,"tid":1,"name":"thread_name","args":{"name":"x"}})"), std::string::npos);
  EXPECT_NE(j.find(R"({"ph":"X","pid":2,"tid":1,"name":"s","ts":0.0,"dur":1.0,)"), std::string::npos);
  EXPECT_NE(j.find(R"({"ph":"X","pid":1,"tid":2,"name":"s","ts":0.0,"dur":1.0,)"), std::string::npos);
}

TEST(ChromeTrace, BoundedByCount) {
  // A limit of 2: of 5 steps the first 2 are written, the other 3 counted.
  ChromeTrace t(2);
  int r = t.track("segment 0: a .. a", "a");
  for (int s = 0; s < 5; ++s) {
    EXPECT_EQ(t.full(), s >= 2);
    t.complete(r, "a", 3.0 * s, 3, {{"layer", "a"}, {"step", s}});
  }
  t.note("segments", nlohmann::ordered_json::array());
  EXPECT_EQ(t.events(), 2u);
  EXPECT_EQ(t.dropped(), 3);
  EXPECT_EQ(t.json(), R"({
"otherData": {"time_unit": "cycle", "events": 2, "event_limit": 2, "events_not_written": 3, "segments": []},
"traceEvents": [
{"ph":"M","pid":1,"name":"process_name","args":{"name":"segment 0: a .. a"}},
{"ph":"M","pid":1,"name":"process_sort_index","args":{"sort_index":1}},
{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"a"}},
{"ph":"M","pid":1,"tid":1,"name":"thread_sort_index","args":{"sort_index":1}},
{"ph":"X","pid":1,"tid":1,"name":"a","ts":0.0,"dur":3.0,"args":{"layer":"a","step":0}},
{"ph":"X","pid":1,"tid":1,"name":"a","ts":3.0,"dur":3.0,"args":{"layer":"a","step":1}}
]
}
)");
}

TEST(ChromeTrace, Empty) {
  // No run, no tracks: still a trace a viewer opens.
  EXPECT_EQ(ChromeTrace().json(), "{\n\"otherData\": {\"time_unit\": \"cycle\", \"events\": 0, \"event_limit\": 200000, "
                                  "\"events_not_written\": 0},\n\"traceEvents\": [\n]\n}\n");
}
