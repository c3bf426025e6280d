// The NoC hops of DRAM <-> node traffic (docs/directives.md §6 "NoC"): where a
// layer's node-level stacks put its units on the mesh, and how far a piece of
// a tensor travels from the memory channels to the nodes that hold it.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace dfl {

/// The stacks of a level as rows and columns of its rows x cols array: bit i
/// set puts stack i's copies along the rows. The first split (in mask order)
/// whose row and column products fit; none if no split fits or there are too
/// many stacks to enumerate (more than 16). §2, E0803.
std::optional<uint64_t> stackRowMask(const std::vector<int64_t> &repls, int64_t rows, int64_t cols);

/// Stack factors (those above 1) that a rows x cols array holds as rows and
/// columns, using at most `allowed` units (enumerates every split, however many).
bool stacksFit(const std::vector<int64_t> &repls, int64_t rows, int64_t cols, int64_t allowed);

/// One node-level stack as placed on the mesh, for one tensor role.
struct MeshStack {
  int64_t repl = 1;
  bool row = false;      // along the rows (else the columns)
  bool shared = false;   // does not move the role's dims: its copies hold the same piece
};

/// Per word of a piece: `first`, the hops from the nearest memory channel to
/// the nearest node holding the piece, averaged over the pieces; `tree`, the
/// length of the forwarding tree over the nodes holding one piece.
struct PieceHops {
  double first = 0, tree = 0;
  /// For data stored at every channel (weights: nn_dataflow duplicates
  /// filters in every memory node, `partition._unit_nhops_to_fil`): the
  /// forwarding tree grown from all the channels at once, averaged over the
  /// pieces; at most first + tree, less when a piece is near two channels.
  double fromEvery = 0;
};

/// The hops of one tensor role's pieces (nn_dataflow's `DataLayout.nhops_to`
/// with forwarding, as `partition.unit_nhops_to_proc_region` uses it): the
/// stacks are placed on the mesh in order, the first listed most significant
/// in its dimension (row = the mixed-radix number of the row stacks' indices),
/// from node (0, 0). Nodes that differ only in `shared` stacks hold the same
/// piece. `channels` are (row, col) positions; empty: the mesh's four corners.
///
/// The tree is the minimum spanning tree of a piece's nodes under Manhattan
/// distance (the reference's greedy nearest-neighbour forwarding is Prim's
/// algorithm, so it has this length), in closed form: the nodes are a product
/// of two mixed-radix sets. `first` is exact when pieces x channels is at most
/// 2^14, and otherwise the mean over an evenly spaced sample of that many
/// pieces, so a mesh of 2^31 nodes costs as much as a 128 x 128 one.
/// `fromEvery` is Prim's algorithm from the channels over a piece's nodes,
/// for pieces of up to 256 nodes (beyond, it is first + tree): on every piece
/// while pieces x nodes x (nodes + channels) stays within 2^16, else on an
/// even sample of them. Without `fromEveryChannel` it is not computed (NaN):
/// Prim's loops are most of the work, and only weights read it.
PieceHops meshPieceHops(const std::vector<MeshStack> &stacks, int64_t rows, int64_t cols,
                        const std::vector<std::pair<int64_t, int64_t>> &channels, bool fromEveryChannel = true);

/// Where a role's pieces lie in its tensor, for a tensor stored by a layout
/// (a `layout` directive: part i of the tensor at channel i). Per tensor dim:
/// the tensor's `extent`, a node's piece (`tile`) and where piece 0 starts
/// (`offset`: minus the padding of a padded input); per stack (as listed in
/// meshPieceHops), how far each copy's piece is shifted along each dim.
struct PieceGeometry {
  std::vector<int64_t> extent, tile, offset;
  std::vector<std::vector<int64_t>> shift;
  /// Per dim, how far a piece's words that travel reach past its tile
  /// (clipped at the extent); empty: not at all. nn_dataflow's pooling input
  /// range, one channel more (`noc { pool_extra_channel }`).
  std::vector<int64_t> extra;
  /// Per dim, whether the pieces split it evenly: nn_dataflow's padded
  /// partitions compute ⌈E/n⌉ per node but hold `util.get_ith_range`'s
  /// [k·E/n, (k+1)·E/n) of the data (`pad_partial`). Empty: not at all.
  std::vector<bool> even;
};

/// A role's first hops from its layout (or, with no parts, from each piece's
/// nearest channel), per word of the pieces' tiles; `growth` is the words
/// that travel (a tile and its `extra`) per word of the tiles, which the tree
/// hops scale by.
struct LayoutHops {
  double first = 0, growth = 1;
};

/// nn_dataflow's `DataLayout.nhops_to` for one piece, averaged per word over
/// the pieces: the hops of the piece's words from the channels of the parts
/// that hold them to the piece's node nearest to all of them. `parts` is the
/// layout, (tensor dim, parts) with the most significant first; dim d cut in
/// n parts as nn_dataflow cuts it (`util.get_ith_range`: part k is
/// [k·E/n, (k+1)·E/n)); no parts: every piece from its nearest channel.
/// Exact for up to 2^14 pieces, else over an even sample of them.
LayoutHops layoutFirstHops(const std::vector<MeshStack> &stacks, const PieceGeometry &geometry,
                       const std::vector<std::pair<size_t, int64_t>> &parts, int64_t rows, int64_t cols,
                       const std::vector<std::pair<int64_t, int64_t>> &channels);

} // namespace dfl
