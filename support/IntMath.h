// Integer division rounded toward minus and plus infinity (C++ rounds toward
// zero), for window bounds and tile counts; the divisor is positive.
#pragma once

#include <cstdint>

namespace dfl {

constexpr int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
constexpr int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

} // namespace dfl
