// Instance-split temporal segments (docs/directives.md §9, "Instances"): a
// temporal segment run in pieces of its last layer's output along its rows
// (Yo) or columns (Xo), one piece after the other, each layer computing what
// the piece needs of it — GraphTurbo's instances (Zhao et al., OSDI 2023,
// §3.1-3.3) in KAPLA's cost model. A piece of a layer is a layer of its own:
// its loop nest cut to the piece (halo rows recomputed where pieces overlap),
// analyzed with the layer's directives like any layer, and the layer's result
// is the sum over its pieces.
#pragma once

#include "scheduler/analysis/Analysis.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dfl {

/// Output positions [lo, hi) of a layer along the split dim.
struct Span {
  int64_t lo = 0, hi = 0;
  int64_t size() const { return hi - lo; }
  friend bool operator==(const Span &, const Span &) = default;
};

/// Why segment `layers` (network order) cannot run in `count` instances
/// along `dim` (Xo or Yo); empty if it can: every layer is cut by its output
/// positions along the dim (no reduction over them, no normalization along
/// them), only the last layer is read outside the segment, and `count`
/// divides its extent.
std::string instanceSplitRefusal(const Network &net, const std::vector<int> &layers, Dim dim, int64_t count);
/// Of that, what does not depend on the count.
std::string instanceSplitRefusal(const Network &net, const std::vector<int> &layers, Dim dim);
/// Of that, what the instances' spans (instanceSpans) decide: every
/// instance needs something of every layer.
std::string instanceSpansRefusal(const Network &net, const std::vector<int> &layers,
                                 const std::vector<std::vector<Span>> &spans);

/// Per instance, per layer of the segment (in `layers` order): the span of
/// its output the instance computes. The last layer's are equal pieces; each
/// other layer's is the hull of what its consumers' spans read, clipped to
/// its output (window halos: the rows two instances both compute). The
/// model's halos along the dim (equalPiece and propagateHalos,
/// model/Geometry.h; GraphTurbo's boxes are the same). Only for a segment
/// instanceSplitRefusal accepts.
std::vector<std::vector<Span>> instanceSpans(const Network &net, const std::vector<int> &layers, Dim dim,
                                             int64_t count);

/// The positions of `l`'s input (unpadded) output span `s` reads along `dim`,
/// clipped to the input: the image of its ifm accesses (accessImage).
Span instanceInputSpan(const Layer &l, Dim dim, Span s);

/// The words per sample of layer `l`'s output positions `s` along `dim`.
int64_t pieceOutputWords(const Layer &l, Dim dim, Span s);

/// Per layer of the segment (in `layers` order), pieceOutputWords in the
/// instance whose intermediates — the outputs read inside the segment — are
/// largest: what E0819 and SplitInfo size.
std::vector<int64_t> largestInstanceOutputs(const Network &net, const std::vector<int> &layers, Dim dim,
                                            int64_t count);
/// The same, from the instances' spans.
std::vector<int64_t> largestInstanceOutputs(const Network &net, const std::vector<int> &layers, Dim dim,
                                            const std::vector<std::vector<Span>> &spans);

/// Layer `l` cut to span `s` of its output along `dim`: its nest (the output
/// and every input indexed from the piece's origin, the input clipped to the
/// rows the piece reads, the rest padding), the bounds, window and shapes
/// derived from it, and its work per sample. Only for a layer of a segment
/// instanceSplitRefusal accepts.
Layer instanceLayer(const Layer &l, Dim dim, Span s);

/// Whether two pieces of a layer are the same layer (one analysis, one kernel).
bool samePiece(const Layer &a, const Layer &b);

/// A layer's distinct pieces over a segment's instances, and how many
/// instances compute each; the largest (most work) first.
struct LayerPieces {
  std::vector<Layer> pieces;
  std::vector<int64_t> counts;
};
/// Of the segment's k-th layer, `spans` being instanceSpans of the segment
/// (one derivation for all its layers).
LayerPieces layerPieces(const Network &net, const std::vector<int> &layers, Dim dim,
                        const std::vector<std::vector<Span>> &spans, size_t k);

/// Layer `layer` run as `p`'s pieces with one set of directives: each piece
/// analyzed as a layer (its validity problems appended to `issues`), the
/// counts, energy and latency summed over the instances. Tiles, trip counts,
/// units and occupancy are the largest piece's: what the buffers hold at once.
LayerResult analyzePieces(const Network &net, int layer, const LayerPieces &p, const Hardware &hw,
                          const LayerScheduleModel *schedule, std::vector<Issue> &issues);

/// The segment split into instances that layer `layer` runs in, and its place
/// `k` there (a segment's layers are in network order); null if none.
const SegmentResult *splitSegmentOf(const ScheduleResult &r, int layer, size_t &k);

} // namespace dfl
