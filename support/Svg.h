// The pieces every SVG chart dflc writes shares (OUT/pipeline.svg, the
// compile's plots): escaping, coordinates rounded to 0.1 so files diff
// cleanly, round axis ticks, a palette and the document around a body.
// Output is deterministic: no timestamps, no ids.
#pragma once

#include <cstddef>
#include <string>

namespace dfl::svg {

/// `s` with <, >, & and " escaped for text and attribute values.
std::string escape(const std::string &s);
/// A coordinate, rounded to one decimal: "12.5".
std::string num(double v);
/// A round tick step (1, 2 or 5 times a power of ten) giving about five
/// ticks over `span`.
double tickStep(double span);
/// No axis has more ticks than this, whatever its numbers: every tick loop
/// runs over a count, never "until t passes the end" (a step below the
/// values' resolution would never advance t).
constexpr size_t kMaxTicks = 64;
/// The ticks 0, step, 2·step, … that are at most `span` + `slack`·step:
/// their number, at least 1 and at most kMaxTicks (1 for a NaN or an
/// infinite span or step).
size_t tickCount(double span, double step, double slack);
/// A value axis over [min, max] widened to whole round steps (tickStep), so it
/// need not start at zero: for points that differ by a few percent. A span
/// below a billionth of the values' magnitude (at least 1) is rounding, not a
/// difference: it is widened as a zero span is, by a tenth of the magnitude.
/// A NaN or an infinite bound gives the axis [0, 1].
struct Axis {
  double lo, hi, step;
  int digits;      // decimals that show the step
  size_t ticks;    // lo, lo + step, …, hi: at most kMaxTicks
  Axis(double min, double max);
  double tick(size_t i) const { return lo + static_cast<double>(i) * step; }
  /// Where `v` falls between the pixel coordinates `from` (lo) and `to` (hi).
  double at(double v, double from, double to) const { return from + (v - lo) / (hi - lo) * (to - from); }
};
/// The i-th colour of a qualitative palette (cycles after 10).
const char *colour(size_t i);
/// The whole document: a white background, sans-serif 12 px, then `body`.
std::string document(double width, double height, const std::string &body);

} // namespace dfl::svg
