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

Axis::Axis(double min, double max) {
  double span = max > min ? max - min : std::max(std::abs(max), 1.0) * 0.1;
  step = tickStep(span);
  lo = std::floor(min / step) * step, hi = std::ceil(max / step) * step;
  if (hi <= lo)
    hi = lo + step;
  digits = std::max(0, -static_cast<int>(std::floor(std::log10(step))));
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
