// sweep/: a point's hardware variant, the points' order and ids.
#include "driver/Compilation.h"
#include "frontend/Loader.h"
#include "sweep/SweepSpec.h"

#include <gtest/gtest.h>

#include <set>

using namespace dfl;
using namespace dfl::sweep;

namespace {

const char *const kTemplate = R"(hardware t {
  word = 16 bit;
  frequency = 1 GHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 1 pJ; }
  level GBUF { capacity = 32 KiB; access_energy = 6 pJ; bandwidth = 16 B/cycle; }
  level DRAM { access_energy = 200 pJ; bandwidth = 16 GB/s; }
}
)";

/// The hardware the DFL front end makes of `text`.
Hardware analyzed(const std::string &text) {
  driver::DriverOptions o;
  o.files = {"t.dfl"};
  o.stdlibRoot = "";
  o.openBuffers[canonicalPath("t.dfl")] = text;
  driver::Compilation c(o);
  EXPECT_TRUE(c.load() && c.analyze());
  return c.model().hardware.at(0);
}

TEST(SweepVariant, RewritesGivenPropertiesAndAddsMissingOnes) {
  std::string error;
  auto text = hardwareVariant("t.dfl", kTemplate,
                              {{"GBUF.capacity", {}}, {"REGF.array", {}}, {"REGF.fill_energy", {}}, {"frequency", {}},
                               {"mac.energy", {}}},
                              {"128 KiB", "8 x 16", "0.5 pJ", "500 MHz", "2 pJ"}, error);
  ASSERT_TRUE(text) << error;
  Hardware hw = analyzed(*text);
  EXPECT_EQ(hw.levels[1].capacityBytes, 128 * 1024);
  EXPECT_EQ(hw.levels[0].rows, 8);
  EXPECT_EQ(hw.levels[0].cols, 16);
  EXPECT_EQ(hw.levels[0].fillEnergyPj, 0.5);   // not in the template: added to REGF
  EXPECT_EQ(hw.frequencyHz, 500e6);
  EXPECT_EQ(hw.macEnergyPj, 2);
  // What was not set is as the template says.
  EXPECT_EQ(hw.levels[0].capacityBytes, 64);
  EXPECT_EQ(hw.levels[1].readEnergyPj, 6);
}

TEST(SweepVariant, NamesTheBlocksWhenOneIsMissing) {
  std::string error;
  EXPECT_FALSE(hardwareVariant("t.dfl", kTemplate, {{"GBUG.capacity", {}}}, {"1 KiB"}, error));
  EXPECT_EQ(error, "hardware 't' has no level or block 'GBUG'; did you mean 'GBUF'? (it has mac, REGF, GBUF and DRAM)");
}

SweepSpec spec() {
  SweepSpec s;
  s.hardware = {"t.dfl"};
  s.hardwareTexts = {kTemplate};
  s.networks = {"a.dfl", "b.dfl"};
  s.networkTexts = {"network a {}", "network b {}"};
  s.overrides = {{"GBUF.capacity", {"16 KiB", "32 KiB", "64 KiB"}}, {"REGF.array", {"4 x 4", "8 x 8"}}};
  s.batches = {1, 8};
  s.objectives = {"energy", "latency"};
  return s;
}

TEST(SweepPoints, ProductInSpecOrderWithDistinctStableIds) {
  std::vector<SweepPoint> points = sweepPoints(spec());
  // 1 hardware x 2 networks x 3 capacities x 2 arrays x 2 batches x 2 objectives.
  ASSERT_EQ(points.size(), 1u * 2 * 3 * 2 * 2 * 2);
  // The objective turns fastest, then the batch, then the last override.
  EXPECT_EQ(points[1].objective, "latency");
  EXPECT_EQ(points[2].batch, 8);
  EXPECT_EQ(points[4].settings, (std::vector<std::string>{"16 KiB", "8 x 8"}));
  EXPECT_EQ(points[8].settings, (std::vector<std::string>{"32 KiB", "4 x 4"}));
  EXPECT_EQ(points[24].network, 1u);
  std::set<std::string> ids;
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].index, i);
    EXPECT_EQ(points[i].id.size(), 16u);
    ids.insert(points[i].id);
  }
  EXPECT_EQ(ids.size(), points.size());
  EXPECT_EQ(sweepPoints(spec())[5].id, points[5].id);   // stable from run to run
}

TEST(SweepPoints, AnEditedInputGivesNewIds) {
  SweepSpec edited = spec();
  edited.networkTexts[1] = "network b { }";
  std::vector<SweepPoint> before = sweepPoints(spec()), after = sweepPoints(edited);
  EXPECT_EQ(before[0].id, after[0].id);     // network a: unchanged
  EXPECT_NE(before[24].id, after[24].id);   // network b: solved again on a resume
}

} // namespace
