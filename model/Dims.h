// Loop dimensions and tensor roles in the KAPLA paper's names (§III-B): the
// nine-dimension view of a layer that directives, the analysis and the
// solvers speak.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfl {

// ---- dimensions and tensors (KAPLA §III-B) ---------------------------------

/// Loop dimensions, in the paper's names.
enum class Dim { N, C, K, Xi, Yi, Xo, Yo, R, S };
constexpr size_t kNumDims = 9;
const char *dimName(Dim d);
std::optional<Dim> parseDim(const std::string &name);
std::vector<std::string> allDimNames();

/// A value per loop dimension.
using DimVector = std::array<int64_t, kNumDims>;
inline int64_t &at(DimVector &v, Dim d) { return v[static_cast<size_t>(d)]; }
inline int64_t at(const DimVector &v, Dim d) { return v[static_cast<size_t>(d)]; }

/// The independent dims, every loop of a layer's nest once (KAPLA §3): the
/// input window dims Xi and Yi are derived from Xo+R and Yo+S.
constexpr Dim kIndependentDims[] = {Dim::N, Dim::C, Dim::K, Dim::Xo, Dim::Yo, Dim::R, Dim::S};

/// The input window dims, derived from an output and a filter dim: Xi and Yi.
inline bool isInputWindow(Dim d) { return d == Dim::Xi || d == Dim::Yi; }
/// The output and filter dims an input window dim is derived from: Xo and R
/// for Xi, Yo and S for Yi.
struct WindowSources {
  Dim out, taps;
};
inline WindowSources windowSources(Dim d) {
  return d == Dim::Xi ? WindowSources{Dim::Xo, Dim::R} : WindowSources{Dim::Yo, Dim::S};
}
/// The dims along the width (x axis): Xi, Xo and R; Yi, Yo and S run along the height.
inline bool alongWidth(Dim d) { return d == Dim::Xi || d == Dim::Xo || d == Dim::R; }

enum class TensorRole { Ifm, Wgt, Ofm };
constexpr size_t kNumRoles = 3;
constexpr TensorRole kRoles[] = {TensorRole::Ifm, TensorRole::Wgt, TensorRole::Ofm};
const char *roleName(TensorRole r);
std::optional<TensorRole> parseRole(const std::string &name);
/// The dimensions a tensor of this role is indexed by (ifm: N C Xi Yi, ...).
const std::vector<Dim> &roleDims(TensorRole r);

} // namespace dfl
