// Reports as JSON text, checked finite: nlohmann writes an infinity or a NaN
// as `null`, and no report may hold one (issue 20). The inputs that could
// produce one are diagnosed first (docs/language.md, "Limits"); reaching one
// here is dflc's bug, an internal error naming where in the report it is.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace dfl {

/// `j.dump(2)` plus a newline, after checking every number in it is finite.
std::string dumpReport(const nlohmann::ordered_json &j);

} // namespace dfl
