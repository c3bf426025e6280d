// Number and text formatting shared by every printer (tables, summaries,
// hovers, reports): one formatter, so the same quantity reads the same
// everywhere.
#pragma once

#include <cstddef>
#include <string>

namespace dfl {

/// `v` with exactly `digits` decimals ("%.*f").
std::string formatFixed(double v, int digits);
/// `v` with at most `digits` decimals, trailing zeros dropped: "1.5", "64".
std::string formatTrimmed(double v, int digits);
/// An exact integer in full ("4096"), anything else to 4 significant digits
/// ("0.3333", "1.5e+20"): a count or energy in a hover.
std::string formatNumber(double v);
/// "81.5 KiB", "64 B", "1.5 MiB": the shortest exact-ish binary size.
std::string formatBytes(double bytes);
/// "1.23 mJ", "456 pJ": an energy given in pJ.
std::string formatEnergy(double pj);
/// "4.09 G", "512": a count scaled by thousands, for the eye.
std::string formatScaled(double v);
/// `s` padded with spaces to width `w` (never truncated).
std::string padRight(std::string s, size_t w);
std::string padLeft(std::string s, size_t w);
/// The length of the well-formed UTF-8 character at s[i] (1 to 4), or 0 if
/// the bytes there are not one (a stray continuation byte, an overlong form,
/// a surrogate, past U+10FFFF, cut short).
size_t utf8Length(const std::string &s, size_t i);

} // namespace dfl
