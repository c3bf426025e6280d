// The shared pieces of dflc's SVG charts (support/Svg.h).
#include "support/Svg.h"

#include "support/Format.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace dfl::svg {

std::string escape(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : std::string(1, c);
  return out;
}

std::string num(double v) { return formatFixed(v, 1); }

double tickStep(double span) {
  double raw = span / 5, p = std::pow(10.0, std::floor(std::log10(raw > 0 ? raw : 1e-9)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw)
      return m * p;
  return 10 * p;
}

size_t tickCount(double span, double step, double slack) {
  double n = std::floor(span / step + slack) + 1;
  if (!(n >= 1) || !std::isfinite(n))   // NaN, infinite, negative
    return 1;
  return n >= static_cast<double>(kMaxTicks) ? kMaxTicks : static_cast<size_t>(n);
}

Axis::Axis(double min, double max) {
  if (!std::isfinite(min) || !std::isfinite(max))
    min = 0, max = 1;
  if (min > max)
    std::swap(min, max);
  const double magnitude = std::max({std::abs(min), std::abs(max), 1.0});
  double span = max - min > magnitude * 1e-9 ? max - min : magnitude * 0.1;
  step = tickStep(span);
  lo = std::floor(min / step) * step, hi = std::ceil(max / step) * step;
  if (hi <= lo)
    hi = lo + step;
  digits = std::max(0, -static_cast<int>(std::floor(std::log10(step))));
  ticks = tickCount(hi - lo, step, 0.5);   // hi - lo is a whole number of steps, up to rounding
}

const char *colour(size_t i) {
  static const char *const kColours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                         "#edc948", "#b07aa1", "#9c755f", "#ff9da7", "#bab0ac"};
  return kColours[i % std::size(kColours)];
}

std::string document(double width, double height, const std::string &body) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" +
         body + "</svg>\n";
}

} // namespace dfl::svg
