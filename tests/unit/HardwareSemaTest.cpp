#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace dfl;
using dfl::test::compile;

TEST(HardwareSema, UnitsAreConverted) {
  auto c = compile(R"(hardware h {
    word = 2 B;
    frequency = 500 MHz;
    mac { energy = 0.5 pJ; }
    level REGF { capacity = 512 bit; array = 8 x 4; access_energy = 1 pJ; transfer = multicast, systolic; }
    level GBUF { capacity = 32 KiB; array = 16; access_energy = 6 pJ; bandwidth = 8 B/cycle; }
    level DRAM { access_energy = 0.2 nJ; bandwidth = 12.8 GB/s; }
    noc { hop_energy = 2 pJ; }
    pipeline { temporal = true; }
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Hardware &h = c.model.hardware.at(0);
  EXPECT_EQ(h.wordBits, 16);
  EXPECT_DOUBLE_EQ(h.frequencyHz, 5e8);
  EXPECT_DOUBLE_EQ(h.macEnergyPj, 0.5);
  ASSERT_EQ(h.levels.size(), 3u);
  EXPECT_EQ(*h.levels[0].capacityBytes, 64);   // 512 bit = 64 B
  EXPECT_EQ(h.levels[0].units(), 32);
  EXPECT_TRUE(h.levels[0].can(Transfer::Systolic));
  EXPECT_FALSE(h.levels[0].can(Transfer::Unicast));
  EXPECT_EQ(*h.levels[1].capacityBytes, 32768);
  EXPECT_EQ(h.levels[1].rows, 16);
  EXPECT_DOUBLE_EQ(h.levels[2].readEnergyPj, 200);
  EXPECT_DOUBLE_EQ(h.levels[2].writeEnergyPj, 200);
  // 12.8 GB/s at 500 MHz = 25.6 B/cycle.
  EXPECT_DOUBLE_EQ(*h.levels[2].bandwidthBytesPerCycle, 25.6);
  EXPECT_TRUE(h.temporalPipelining);
  EXPECT_FALSE(h.spatialPipelining);
}

TEST(HardwareSema, Errors) {
  auto c = compile(R"(hardware h {
    word = 16 bit;
    frequency = 1 GHz;
    mac { energy = 1 pJ; }
    level A { capacity = 1 KiB; access_energy = 1 pJ; capacty = 3 B; }
    level B { access_energy = 1 pJ; }
    level C { capacity = 512 B; access_energy = 1 pJ; }
    nic { }
  })");
  EXPECT_EQ(c.diagnostics(),
            "5:55: E0501 unknown property 'capacty' in level 'A'; did you mean 'capacity'?\n"
            "8:5: E0503 unknown hardware block 'nic'; expected one of level, mac, activation, noc, pipeline; did you mean 'noc'?\n"
            "6:11: E0506 level 'B' needs a capacity; only the outermost level ('C') may be unbounded\n");
}

TEST(HardwareSema, LevelsMustGrowOutwards) {
  auto c = compile(R"(hardware h {
    word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
    level A { capacity = 2 KiB; access_energy = 1 pJ; }
    level B { capacity = 1 KiB; access_energy = 1 pJ; }
  })");
  EXPECT_EQ(c.diagnostics(),
            "4:15: E0504 level 'B' (capacity 1 KiB) is outside level 'A' (capacity 2 KiB) but smaller; levels go "
            "from innermost to outermost\n"
            "  3:11: note level 'A' is declared here\n");
}
