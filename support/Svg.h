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
/// The i-th colour of a qualitative palette (cycles after 10).
const char *colour(size_t i);
/// The whole document: a white background, sans-serif 12 px, then `body`.
std::string document(double width, double height, const std::string &body);

} // namespace dfl::svg
