// The pieces every SVG chart dflc writes shares (OUT/pipeline.svg, the
// compile's plots): escaping, coordinates rounded to 0.1 so files diff
// cleanly, round axis ticks, a palette and the document around a body.
// Output is deterministic: no timestamps, no ids.
#pragma once

#include <string>

namespace dfl::svg {

/// `s` with <, > and & escaped for text and attribute values.
std::string escape(const std::string &s);
/// A coordinate, rounded to one decimal: "12.5".
std::string num(double v);
/// A round tick step (1, 2 or 5 times a power of ten) giving about five
/// ticks over `span`.
double tickStep(double span);
/// A value axis over [min, max] widened to whole round steps (tickStep), so it
/// need not start at zero: for points that differ by a few percent. A zero
/// span is widened by a tenth of the value's magnitude (at least 1).
struct Axis {
  double lo, hi, step;
  int digits;   // decimals that show the step
  Axis(double min, double max);
  /// Where `v` falls between the pixel coordinates `from` (lo) and `to` (hi).
  double at(double v, double from, double to) const { return from + (v - lo) / (hi - lo) * (to - from); }
};
/// The i-th colour of a qualitative palette (cycles after 10).
const char *colour(size_t i);
/// The whole document: a white background, sans-serif 12 px, then `body`.
std::string document(double width, double height, const std::string &body);

} // namespace dfl::svg
