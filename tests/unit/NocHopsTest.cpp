// The NoC hops between the memory channels and the nodes (docs/directives.md
// §6 "NoC"), on small meshes derived by hand.
#include "scheduler/analysis/NocHops.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

using namespace dfl;

namespace {
MeshStack rowStack(int64_t repl, bool shared) { return {repl, true, shared}; }
MeshStack colStack(int64_t repl, bool shared) { return {repl, false, shared}; }
} // namespace

// The first split, in mask order, whose rows and columns fit (§2, E0803).
TEST(NocHops, StackRowMask) {
  // 16 x 16: mask 0 puts both stacks in the columns (256 > 16); mask 1 puts the
  // first in the rows.
  EXPECT_EQ(stackRowMask({16, 16}, 16, 16), 1u);
  // 4, 4, 16: masks 0-2 leave 64 or 256 in the columns; mask 3 = rows 4 x 4.
  EXPECT_EQ(stackRowMask({4, 4, 16}, 16, 16), 3u);
  // One row of 5: everything in the columns.
  EXPECT_EQ(stackRowMask({2}, 1, 5), 0u);
  EXPECT_EQ(stackRowMask({32}, 16, 16), std::nullopt);
  EXPECT_EQ(stackRowMask(std::vector<int64_t>(17, 1), 16, 16), std::nullopt);   // too many to enumerate
}

// VGG-16 fc2's node split (nn_dataflow: BATP 16 rows, OUTP 16 columns) as the
// weights see it: the 16 rows hold the same weights, so a piece is a column.
TEST(NocHops, ColumnsOfSixteen) {
  PieceHops h = meshPieceHops({rowStack(16, true), colStack(16, false)}, 16, 16, {});
  // Column c's nearest node to a corner is (0, c) or (15, c), min(c, 15 - c)
  // hops: 2 x (0 + ... + 7) = 56 over the 16 columns.
  EXPECT_EQ(h.first, 56.0 / 16);
  // 16 nodes one hop apart: 15 hops.
  EXPECT_EQ(h.tree, 15);
  // From all four corners at once: columns 1-14 as before (min(c, 15 - c),
  // then 15 one-hop steps); columns 0 and 15 hold two corners themselves (0
  // hops) and need 14 steps for the other nodes. (56 + 14 x 15 + 2 x 14) / 16
  // = 294 / 16, the reference's 308,281,344 word-hops over the 16 pieces of
  // 1,048,576 words.
  EXPECT_EQ(h.fromEvery, 294.0 / 16);
  // Not asked for (activations are stored once): the same piece, no tree
  // from every channel.
  PieceHops once = meshPieceHops({rowStack(16, true), colStack(16, false)}, 16, 16, {}, false);
  EXPECT_EQ(once.first, 56.0 / 16);
  EXPECT_EQ(once.tree, 15);
  EXPECT_TRUE(std::isnan(once.fromEvery));
  // The ifm's view: a row of 16 is a piece, the same by symmetry.
  PieceHops i = meshPieceHops({rowStack(16, false), colStack(16, true)}, 16, 16, {});
  EXPECT_EQ(i.first, 56.0 / 16);
  EXPECT_EQ(i.tree, 15);
  // Every node its own piece: the mean distance to the nearest corner, 7.
  PieceHops o = meshPieceHops({rowStack(16, false), colStack(16, false)}, 16, 16, {});
  EXPECT_EQ(o.first, 7);
  EXPECT_EQ(o.tree, 0);
  EXPECT_EQ(o.fromEvery, 7);
}

// One piece on every node of a 3 x 3 mesh.
TEST(NocHops, WholeMesh) {
  PieceHops h = meshPieceHops({rowStack(3, true), colStack(3, true)}, 3, 3, {});
  EXPECT_EQ(h.first, 0);   // node (0, 0) is a corner
  EXPECT_EQ(h.tree, 8);    // 9 nodes, neighbours one hop apart
  // From the corners: the four corner nodes 0 hops, the other five 1 hop each.
  EXPECT_EQ(h.fromEvery, 5);
  // A channel in the middle instead: the centre 0 hops, then 8 one-hop steps.
  PieceHops m = meshPieceHops({rowStack(3, true), colStack(3, true)}, 3, 3, {{1, 1}});
  EXPECT_EQ(m.first, 0);
  EXPECT_EQ(m.fromEvery, 8);
}

// Copies spread by two digits: the gaps of a mixed-radix set.
TEST(NocHops, NestedCopies) {
  // A 14 x 1 mesh; rows stacks A (2, shared), B (2), C (3, shared), first
  // listed most significant: weights C 1, B 3, A 6. A piece (B fixed) is rows
  // b*3 + {0, 1, 2, 6, 7, 8}: gaps 1, 1, 4, 1, 1, a tree of 8. Piece 0 holds
  // row 0 (a channel: 0 hops), piece 1 rows up to 11, 2 from row 13: mean 1.
  PieceHops h = meshPieceHops({rowStack(2, true), rowStack(2, false), rowStack(3, true)}, 14, 1, {});
  EXPECT_EQ(h.tree, 8);
  EXPECT_EQ(h.first, 1);
  // From both ends at once: piece 0 reaches row 8 from 7 (1 hop), not from
  // row 13 (5): the same 8. Piece 1: 11 from 13 (2), then 10, 9 (1 each),
  // 5, 4, 3 from 9 (4, 1, 1) or from row 0 (3 hops to row 3): row 3 first
  // (3), then 4, 5 (1, 1): 2 + 1 + 1 + 3 + 1 + 1 = 9. Mean (8 + 9) / 2.
  EXPECT_EQ(h.fromEvery, 8.5);
}

// A mesh of 2^31 nodes, every node its own piece: a bounded sample of the
// pieces, quickly, near the true mean. On an even side R, min(r, R - 1 - r)
// averages R/4 - 1/2: 16383.5 + 8191.5 = 24575.
TEST(NocHops, HugeMeshIsBounded) {
  auto start = std::chrono::steady_clock::now();
  PieceHops h = meshPieceHops({rowStack(65536, false), colStack(32768, false)}, 65536, 32768, {});
  EXPECT_NEAR(h.first, 24575, 250);
  EXPECT_EQ(h.tree, 0);
  // One piece over all of it: a closed-form tree of 2^31 - 1 one-hop steps.
  PieceHops w = meshPieceHops({rowStack(65536, true), colStack(32768, true)}, 65536, 32768, {});
  EXPECT_EQ(w.tree, static_cast<double>((int64_t(1) << 31) - 1));
  EXPECT_EQ(w.first, 0);
  EXPECT_EQ(w.fromEvery, w.first + w.tree);   // too many nodes to grow from every channel
  // 1,024 channels along row 0, 32 columns apart, and pieces of 16 nodes
  // 4,096 rows apart down a column: the channels count in the budget too.
  // Every piece has a node in rows 0 to 4,095, at most 16 columns from a
  // channel.
  std::vector<std::pair<int64_t, int64_t>> many;
  for (int64_t k = 0; k < 1024; ++k)
    many.push_back({0, k * 32});
  PieceHops m = meshPieceHops({rowStack(16, true), rowStack(4096, false), colStack(32768, false)}, 65536, 32768, many);
  EXPECT_EQ(m.tree, 16 * 4096 - 4096 * 1.0);   // 15 gaps of 4,096 rows
  EXPECT_LE(m.fromEvery, m.first + m.tree);
  EXPECT_LE(m.first, 4095 + 16);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}
