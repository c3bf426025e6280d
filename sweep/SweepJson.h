// The JSON files of a sweep (the spec, OUT/spec.json, OUT/points/ID.json)
// read with the place of every value, so that a wrong value is a diagnostic
// located at it: nlohmann keeps no positions.
#pragma once

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace dfl::sweep {

using Json = nlohmann::ordered_json;

/// A JSON text parsed, with the byte range of each value by JSON pointer
/// (RFC 6901: "/set/GBUF.capacity/1", keys unescaped as JSON reads them).
struct LocatedJson {
  uint32_t file = 0;   // the buffer in the SourceManager
  Json value;
  std::map<std::string, std::pair<uint32_t, uint32_t>> ranges;

  /// The range of the value at `pointer`, or of the nearest value enclosing it.
  SourceRange at(const std::string &pointer) const;
  /// "/" + `key` escaped for a JSON pointer (`~` and `/`).
  static std::string key(const std::string &key);
};

/// Deeper nesting than any sweep file has is refused before it is walked.
constexpr size_t kMaxJsonDepth = 32;

/// The buffer `file` of `sm` as JSON. nullopt after reporting, at the byte
/// concerned, `notJson` where the text stops being JSON, or `invalid` where it
/// nests deeper than kMaxJsonDepth or repeats a key of an object (each
/// format has one %0, the reason).
std::optional<LocatedJson> parseLocated(uint32_t file, const SourceManager &sm, DiagnosticsEngine &diags,
                                        diag::ID notJson, diag::ID invalid);

} // namespace dfl::sweep
