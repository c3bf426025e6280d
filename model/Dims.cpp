#include "model/Dims.h"

#include "support/Check.h"

namespace dfl {

namespace {
const char *const kDimNames[kNumDims] = {"N", "C", "K", "Xi", "Yi", "Xo", "Yo", "R", "S"};
const char *const kRoleNames[kNumRoles] = {"ifm", "wgt", "ofm"};
} // namespace

const char *dimName(Dim d) { return kDimNames[static_cast<size_t>(d)]; }

std::optional<Dim> parseDim(const std::string &name) {
  for (size_t i = 0; i < kNumDims; ++i)
    if (name == kDimNames[i])
      return static_cast<Dim>(i);
  return std::nullopt;
}

std::vector<std::string> allDimNames() { return {std::begin(kDimNames), std::end(kDimNames)}; }

const char *roleName(TensorRole r) { return kRoleNames[static_cast<size_t>(r)]; }

std::optional<TensorRole> parseRole(const std::string &name) {
  for (size_t i = 0; i < kNumRoles; ++i)
    if (name == kRoleNames[i])
      return static_cast<TensorRole>(i);
  return std::nullopt;
}

const std::vector<Dim> &roleDims(TensorRole r) {
  static const std::vector<Dim> ifm{Dim::N, Dim::C, Dim::Xi, Dim::Yi};
  static const std::vector<Dim> wgt{Dim::K, Dim::C, Dim::R, Dim::S};
  static const std::vector<Dim> ofm{Dim::N, Dim::K, Dim::Xo, Dim::Yo};
  switch (r) {
  case TensorRole::Ifm: return ifm;
  case TensorRole::Wgt: return wgt;
  case TensorRole::Ofm: return ofm;
  }
  DFLC_UNREACHABLE("TensorRole " + std::to_string(static_cast<int>(r)));
}

} // namespace dfl
