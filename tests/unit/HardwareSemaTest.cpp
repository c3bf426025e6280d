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

TEST(HardwareSema, AccountingSwitches) {
  // The three switches of nn_dataflow's accounting (docs/language.md): off by
  // default, `true`/`false` only.
  auto c = compile(R"(hardware h {
    word = 16 bit;
    frequency = 1 GHz;
    mac { energy = 1 pJ; }
    level REGF { capacity = 64 B; array = 2; access_energy = 1 pJ; transfer = systolic; psum_multicast = true; }
    level GBUF { capacity = 1 KiB; array = 2; access_energy = 2 pJ; pad_partial = true; }
    level DRAM { access_energy = 100 pJ; fetch_padding = maybe; }
  })");
  const Hardware &h = c.model.hardware.at(0);
  EXPECT_TRUE(h.levels.at(0).psumMulticast);
  EXPECT_FALSE(h.levels.at(0).padPartial);
  EXPECT_TRUE(h.levels.at(1).padPartial);
  EXPECT_FALSE(h.levels.at(1).psumMulticast);
  EXPECT_FALSE(h.levels.at(2).fetchPadding);
  EXPECT_NE(c.diagnostics().find("fetch_padding"), std::string::npos) << c.diagnostics();
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
            "8:5: E0503 unknown hardware block 'nic'; expected one of level, mac, activation, noc, pipeline, vector; did you mean 'noc'?\n"
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

// Issue 20: products of the levels' sizes are checked (docs/language.md, "Limits").
TEST(HardwareSema, UnitsOverTwoLevelsAreLimited) {
  // 65536 x 65536 = 2^32 units at one level alone: over 2^31.
  // 2147483647 x 2147483647 does not even fit 64 bits.
  auto c = compile(R"(hardware h {
    word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
    level A { capacity = 64 B; array = 65536 x 65536; access_energy = 1 pJ; }
    level B { capacity = 1 KiB; array = 2147483647 x 2147483647; access_energy = 1 pJ; }
    level C { access_energy = 1 pJ; }
  })");
  EXPECT_EQ(c.diagnostics(),
            "3:40: E0511 hardware 'h' is too large: the units of level 'A' = 65536 x 65536 exceeds 2^31\n"
            "4:41: E0511 hardware 'h' is too large: the units of level 'B' = 2147483647 x 2147483647 exceeds 2^31\n");
}

TEST(HardwareSema, UnitsOfAllLevelsTogetherAreLimited) {
  // Each level alone is fine; A's units times B's: 2^16 * 2^16 = 2^32 > 2^31,
  // reported at A (the product over A and the levels outside it: A, B, C).
  auto c = compile(R"(hardware h {
    word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
    level A { capacity = 64 B; array = 256 x 256; access_energy = 1 pJ; }
    level B { capacity = 1 KiB; array = 256 x 256; access_energy = 1 pJ; }
    level C { access_energy = 1 pJ; }
  })");
  EXPECT_EQ(c.diagnostics(), "3:32: E0511 hardware 'h' is too large: the units of level 'A' and the levels outside "
                             "it = 65536 x 65536 x 1 exceeds 2^31\n");
}

TEST(HardwareSema, AggregateCapacityIsLimited) {
  // 2^40 B (1 TiB) per buffer times 2^16 buffers = 2^56 B > 2^53.
  auto c = compile(R"(hardware h {
    word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
    level A { capacity = 1024 GiB; array = 256 x 256; access_energy = 1 pJ; }
    level C { access_energy = 1 pJ; }
  })");
  EXPECT_EQ(c.diagnostics(), "3:15: E0511 hardware 'h' is too large: the capacity of all level 'A' buffers in bytes "
                             "= 1099511627776 x 65536 x 1 exceeds 2^53\n");
}

TEST(HardwareSema, RatesAndWordOutOfRange) {
  // 1e-12 B/cycle: a transfer of 2^53 words would take ~1e28 cycles; 1e-300
  // (the issue's) made the latency inf. The limit is 2^-32 (~2.3e-10). 1 B/s at the (rejected) frequency is not checked against a rate
  // nobody will use: the frequency error is enough.
  auto c = compile(R"(hardware h {
    word = 1024 bit; frequency = 0.5 Hz; mac { energy = 1 pJ; }
    level A { capacity = 64 B; access_energy = 1 pJ; bandwidth = 0.000000000001 B/cycle; }
    level C { access_energy = 1 pJ; bandwidth = 1 B/s; }
  })");
  EXPECT_EQ(c.diagnostics(),
            "2:12: E0404 'word' must be a whole number of bits from 1 to 512, got 1024 bit\n"
            "2:34: E0404 'frequency' must be at least 1 Hz, got 0.5 Hz\n"
            "3:66: E0404 'bandwidth' must be at least 2^-32 B/cycle, got 1e-12 B/cycle\n");
}

TEST(HardwareSema, WordWidthsAreWholeBitsFromOne) {
  // 0.4 bit once rounded to 0 bits (Hardware::bytesOf divided by it: SIGFPE);
  // wgt = 0.4 bit made weights free. 0.1 B = 0.8 bit and 12.5 bit are not whole
  // either; 0.125 B = 1 bit and 1.5 B = 12 bit are.
  auto c = compile(R"(hardware h {
    word = 0.4 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
    word { wgt = 0.1 B; psum = 12.5 bit; }
    level A { capacity = 64 B; access_energy = 1 pJ; }
    level C { access_energy = 1 pJ; }
  })");
  EXPECT_EQ(c.diagnostics(),
            "2:12: E0404 'word' must be a whole number of bits from 1 to 512, got 0.4 bit\n"
            "3:18: E0404 'wgt' must be a whole number of bits from 1 to 512, got 0.1 B\n"
            "3:32: E0404 'psum' must be a whole number of bits from 1 to 512, got 12.5 bit\n");
  auto ok = compile(R"(hardware h {
    word = 0.125 B; frequency = 1 GHz; mac { energy = 1 pJ; }
    word { wgt = 1.5 B; }
    level A { capacity = 64 B; access_energy = 1 pJ; }
    level C { access_energy = 1 pJ; }
  })");
  ASSERT_EQ(ok.diagnostics(), "");
  EXPECT_EQ(ok.model.hardware.at(0).wordBits, 1);
  EXPECT_EQ(ok.model.hardware.at(0).wgtBits, 12);
}

TEST(HardwareSema, CmWordIsWholeBitsFromOne) {
  auto c = compile(R"(hardware h {
    word = 0.5 bit; frequency = 1 GHz;
    core { crossbar = 256 x 256; mvm_cycles = 1; mvm_energy = 0 pJ; sram = 64 KiB; }
  })");
  EXPECT_NE(c.diagnostics().find("2:12: E0404 'word' must be a whole number of bits from 1 to 64, got 0.5 bit\n"),
            std::string::npos)
      << c.diagnostics();
}

TEST(HardwareSema, PerSecondBandwidthIsCheckedAtTheFrequency) {
  // 1 B/s at 100 GHz: 1e-11 B/cycle, below 2^-32 (about 2.3e-10).
  auto c = compile(R"(hardware h {
    word = 16 bit; frequency = 100 GHz; mac { energy = 1 pJ; }
    level A { capacity = 64 B; access_energy = 1 pJ; }
    level C { access_energy = 1 pJ; bandwidth = 1 B/s; }
  })");
  EXPECT_EQ(c.diagnostics(),
            "4:49: E0404 'bandwidth' must be at least 2^-32 B/cycle at the frequency, got 1e-11 B/cycle\n");
}

TEST(HardwareSema, AtMost64Levels) {
  std::string text = "hardware h {\n  word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }\n";
  for (int i = 0; i < 65; ++i)
    text += "  level L" + std::to_string(i) + " { capacity = 64 B; access_energy = 1 pJ; }\n";
  text += "}\n";
  auto c = compile(text);
  // Level L64 (the 65th, on line 3 + 64) is the first past the limit.
  EXPECT_EQ(c.diagnostics(), "67:9: E0512 hardware 'h' has 65 levels; at most 64 are supported\n");
}

// noc { channels = ROW x COL, ... }: where DRAM attaches to the node mesh
// (docs/directives.md §6 "NoC"); nodes of the level below the outermost.
TEST(HardwareSema, MemoryChannels) {
  // A 4 x 6 node mesh; the channels property on line 5, from column 30.
  auto withChannels = [](const std::string &channels) {
    return compile("hardware h {\n"
                   "    word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }\n"
                   "    level GBUF { capacity = 1 KiB; array = 4 x 6; access_energy = 1 pJ; }\n"
                   "    level DRAM { access_energy = 100 pJ; }\n"
                   "    noc { hop_energy = 1 pJ; channels = " + channels + "; }\n"
                   "  }");
  };
  auto c = withChannels("0 x 5, 3 x 0");
  ASSERT_EQ(c.diagnostics(), "");
  using Channels = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(c.model.hardware.at(0).memoryChannels, (Channels{{0, 5}, {3, 0}}));
  // Row 4 is past the 4 rows (0 to 3); a number is not a position.
  auto bad = withChannels("0 x 0, 4 x 0");
  EXPECT_EQ(bad.diagnostics(), "5:48: E0404 'channels' must be a node of level 'GBUF' (0 x 0 to 3 x 5), got 4 x 0\n");
  EXPECT_TRUE(bad.model.hardware.empty() || bad.model.hardware.at(0).memoryChannels.empty());
  EXPECT_EQ(withChannels("3").diagnostics(), "5:41: E0403 'channels' expects node positions 'ROW x COL' (from 0 x 0)\n");
}

TEST(HardwareSema, WordWidthsPerTensor) {
  auto c = compile(R"(hardware h {
    word = 8 bit;
    word { wgt = 4 bit; psum = 4 B; }
    frequency = 1 GHz;
    mac { energy = 1 pJ; }
    level DRAM { access_energy = 1 pJ; }
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Hardware &h = c.model.hardware.at(0);
  EXPECT_EQ(h.dataBits(TensorRole::Ifm), 8);
  EXPECT_EQ(h.dataBits(TensorRole::Wgt), 4);
  EXPECT_EQ(h.dataBits(TensorRole::Ofm), 8);   // finished outputs are activations
  EXPECT_EQ(h.partialBits(), 32);
  EXPECT_EQ(h.heldBits(TensorRole::Ofm, TensorRole::Ofm), 32);
  EXPECT_EQ(h.heldBits(TensorRole::Wgt, TensorRole::Wgt), 32);   // a weight gradient accumulates
  // Packed: 3 four-bit weights take 12 bits, 2 bytes; 3 partial sums 12 bytes.
  EXPECT_EQ(h.bytesOf(3, 4), 2);
  EXPECT_EQ(h.bytesOf(3, 32), 12);
  WordScale s = h.wordScale(TensorRole::Ofm);
  EXPECT_DOUBLE_EQ(s.held[static_cast<size_t>(TensorRole::Ofm)], 4);
  EXPECT_DOUBLE_EQ(s.data[static_cast<size_t>(TensorRole::Ofm)], 1);
  EXPECT_DOUBLE_EQ(s.held[static_cast<size_t>(TensorRole::Wgt)], 0.5);
  // 3 partial sums read back, 5 writes: 3 of them partial. (3 + 3) * 4 + 2 * 1 = 26.
  EXPECT_DOUBLE_EQ(s.outerWords(static_cast<size_t>(TensorRole::Ofm), 3, 5), 26);
  // An input role moves finished: 4 weights read = 2 words.
  EXPECT_DOUBLE_EQ(s.outerWords(static_cast<size_t>(TensorRole::Wgt), 4, 0), 2);
}

TEST(HardwareSema, OneWidthByDefault) {
  auto c = compile(R"(hardware h {
    word = 12 bit;
    frequency = 1 GHz;
    mac { energy = 1 pJ; }
    level DRAM { access_energy = 1 pJ; }
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Hardware &h = c.model.hardware.at(0);
  EXPECT_EQ(h.partialBits(), 12);
  EXPECT_EQ(h.dataBits(TensorRole::Wgt), 12);
  // A 12-bit word takes 2 bytes, as wordBytes() has it: 3 words 6 bytes.
  EXPECT_EQ(h.bytesOf(3, 12), 6);
  // Past 64 bits the product is taken in 128: 2^59 words * 12 bits fits in
  // an int64 (6.9e18), times 2 bytes a word does not; 2^59 * 12 * 2 / 12 = 2^60.
  EXPECT_EQ(h.bytesOf(int64_t{1} << 59, 12), int64_t{1} << 60);
  // 2^60 * 12 already overflows: 2^60 * 12 * 2 / 12 = 2^61.
  EXPECT_EQ(h.bytesOf(int64_t{1} << 60, 12), int64_t{1} << 61);
}

TEST(HardwareSema, VectorUnitTemplate) {
  // A vector unit at GBUF (docs/directives.md §7 "Vector units"): its
  // truncated template starts at GBUF, has no bus inside it, prices an
  // operation at the unit's energy and keeps the chip's static energy per
  // cycle: 1 (chip) + 4 REGF units (2 per node, 2 nodes) x 1 + 2 GBUF units
  // x 0.5 = 6 pJ.
  auto c = compile(R"(hardware h {
    word = 16 bit; frequency = 1 GHz; static_energy = 1 pJ;
    mac { energy = 1 pJ; }
    level REGF { capacity = 64 B; array = 2; access_energy = 1 pJ; static_energy = 1 pJ; }
    level GBUF { capacity = 1 KiB; array = 2; access_energy = 2 pJ; bus_energy = 3 pJ; static_energy = 0.5 pJ; }
    level DRAM { access_energy = 100 pJ; }
    vector VPU { ops = 8; energy = 0.25 pJ; level = GBUF; }
  })");
  ASSERT_EQ(c.diagnostics(), "");
  const Hardware &h = c.model.hardware.at(0);
  ASSERT_EQ(h.vectors.size(), 1u);
  const VectorUnit &v = h.vectors[0];
  EXPECT_EQ(v.level, 1);
  EXPECT_EQ(v.opsPerCycle, 8);
  ASSERT_TRUE(v.truncated);
  const Hardware &t = *v.truncated;
  ASSERT_EQ(t.levels.size(), 2u);
  EXPECT_EQ(t.levels[0].name, "GBUF");
  EXPECT_DOUBLE_EQ(t.levels[0].busEnergyPj, 0);
  EXPECT_DOUBLE_EQ(t.macEnergyPj, 0.25);
  EXPECT_EQ(t.opsPerCycle, 8);
  EXPECT_DOUBLE_EQ(h.chipStaticEnergyPj(), 6);
  EXPECT_DOUBLE_EQ(t.chipStaticEnergyPj(), 6);
  EXPECT_TRUE(t.vectors.empty());
  EXPECT_EQ(&h.templateFor(-1), &h);
  EXPECT_EQ(&h.templateFor(0), &t);
}

TEST(HardwareSema, VectorUnitErrors) {
  auto c = compile(R"(hardware h {
    word = 16 bit; frequency = 1 GHz; mac { energy = 1 pJ; }
    level REGF { capacity = 64 B; access_energy = 1 pJ; }
    level GBUF { capacity = 1 KiB; access_energy = 2 pJ; }
    level DRAM { access_energy = 100 pJ; }
    vector A { ops = 4; energy = 1 pJ; level = GBFU; }
    vector B { ops = 0; energy = 1 pJ; level = REGF; }
    vector A { ops = 4; energy = 1 pJ; level = DRAM; }
    vector C { ops = 4; level = GBUF; }
    vector { ops = 4; }
  })");
  EXPECT_EQ(c.diagnostics(),
            "7:22: E0210 parameter 'ops' must be a positive integer, got 0\n"
            "8:12: E0201 redefinition of vector unit 'A'\n"
            "  6:12: note previous definition is here\n"
            "9:5: E0502 'vector' needs 'energy'\n"
            "10:5: E0509 a vector needs a name: `vector NAME { ... }`\n"
            "6:48: E0520 vector unit 'A' cannot read and write level 'GBFU': no level of hardware 'h' is named so; did you mean 'GBUF'?\n"
            "7:48: E0520 vector unit 'B' cannot read and write level 'REGF': it is the innermost level, whose units are the MAC array's PEs\n"
            "  3:11: note level 'REGF' is declared here\n")
      << c.diagnostics();
}
