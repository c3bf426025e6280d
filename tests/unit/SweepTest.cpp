// sweep/: a point's hardware variant, the points' order and ids, and the
// commands handed to Slurm and GNU parallel.
#include "driver/Compilation.h"
#include "frontend/Loader.h"
#include "sweep/Sweep.h"
#include "sweep/SweepSpec.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// Paths holding what a shell, sbatch or GNU parallel would act on.
const std::string kDflc = "/bin/d'$(touch A)'", kSpec = "/s/{1}.json", kOut = "/o/x_{=system(\"touch B\")=}\n#SBATCH -p x",
                  kInclude = "/i/{}";

TEST(SweepLaunch, GnuParallelParsesNoPath) {
  ParallelRun run = parallelCommand(kDflc, kSpec, kOut, {kInclude}, 3, ":");
  // The command parallel expands and hands to a shell is fixed text: the
  // paths are environment variables, each sent on with --env.
  const std::string &command = run.argv.at(run.argv.size() - 5);
  EXPECT_EQ(command, "exec \"$DFLC_SWEEP_0\" sweep \"$DFLC_SWEEP_1\" -o \"$DFLC_SWEEP_2\" -I \"$DFLC_SWEEP_3\" "
                     "--slice {}/3 --jobs 1");
  std::vector<std::pair<std::string, std::string>> env = {{"DFLC_SWEEP_0", kDflc}, {"DFLC_SWEEP_1", kSpec},
                                                          {"DFLC_SWEEP_2", kOut},  {"DFLC_SWEEP_3", kInclude},
                                                          {"PARALLEL_SHELL", "/bin/sh"}};
  EXPECT_EQ(run.env, env);
  for (const char *name : {"DFLC_SWEEP_0", "DFLC_SWEEP_1", "DFLC_SWEEP_2", "DFLC_SWEEP_3"})
    EXPECT_NE(std::find(run.argv.begin(), run.argv.end(), name), run.argv.end()) << name << " is not sent with --env";
  // Its arguments: the slice numbers.
  EXPECT_EQ(std::vector<std::string>(run.argv.end() - 4, run.argv.end()),
            (std::vector<std::string>{":::", "0", "1", "2"}));
  for (const std::string &a : run.argv)
    for (const std::string &path : {kDflc, kSpec, kOut, kInclude})
      EXPECT_EQ(a.find(path), std::string::npos) << a;
}

TEST(SweepLaunch, SlurmScriptsHoldNoPath) {
  std::vector<std::string> argv = sliceArgv(kDflc, kSpec, kOut, {kInclude});
  EXPECT_EQ(argv, (std::vector<std::string>{kDflc, "sweep", kSpec, "-o", kOut, "-I", kInclude}));
  EXPECT_EQ(argvFile(argv), kDflc + '\0' + "sweep" + '\0' + kSpec + '\0' + "-o" + '\0' + kOut + '\0' + "-I" +
                                '\0' + kInclude + '\0');
  for (const std::string &script : {slurmScript(4, {"--time=10"}), slurmMergeScript({"--time=10"})}) {
    EXPECT_NE(script.find("mapfile -d '' -t command < sweep.argv\n"), std::string::npos) << script;
    EXPECT_NE(script.find("#SBATCH --time=10\n"), std::string::npos) << script;
    for (const std::string &path : {kDflc, kSpec, kOut, kInclude})
      EXPECT_EQ(script.find(path), std::string::npos) << script;
  }
  EXPECT_TRUE(sbatchOptionFits("--partition=a b"));
  EXPECT_FALSE(sbatchOptionFits("--time=10\nrm -rf x"));
  EXPECT_FALSE(sbatchOptionFits("--time=10\r"));
}

} // namespace
