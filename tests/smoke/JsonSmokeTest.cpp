// Smoke test for nlohmann::json: sorted-key dumps and a parse round trip.
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <string>

TEST(JsonSmokeTest, DumpSortsKeysAndRoundTrips) {
  nlohmann::json first;
  first["tile"] = {4, 4};
  first["name"] = "conv";
  first["bytes"] = 4096;

  nlohmann::json second;
  second["bytes"] = 4096;
  second["name"] = "conv";
  second["tile"] = {4, 4};

  // nlohmann::json stores objects in a std::map, so keys come out sorted
  // (bytes < name < tile) whatever the insertion order.
  const std::string expected = R"({"bytes":4096,"name":"conv","tile":[4,4]})";
  EXPECT_EQ(first.dump(), expected);
  EXPECT_EQ(second.dump(), expected);

  // Round trip: parse(dump(x)) == x, and re-dumping gives the same text.
  nlohmann::json parsed = nlohmann::json::parse(first.dump());
  EXPECT_EQ(parsed, first);
  EXPECT_EQ(parsed.dump(), expected);
  EXPECT_EQ(parsed["tile"][1].get<int>(), 4);
  EXPECT_EQ(parsed.at("bytes").get<long>(), 4096);

  // Control: ordered_json keeps insertion order, so its dumps do differ.
  nlohmann::ordered_json a, b;
  a["x"] = 1;
  a["a"] = 2;
  b["a"] = 2;
  b["x"] = 1;
  EXPECT_EQ(a.dump(), R"({"x":1,"a":2})");
  EXPECT_NE(a.dump(), b.dump());
}

TEST(JsonSmokeTest, ParseErrorThrows) {
  // parse() is warn_unused_result (and a void cast does not silence GCC),
  // so bind the result; the truncated object must throw before that.
  EXPECT_THROW(
      {
        [[maybe_unused]] nlohmann::json j = nlohmann::json::parse(R"({"a":)");
      },
      nlohmann::json::parse_error);
}
