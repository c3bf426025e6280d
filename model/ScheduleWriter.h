// Prints a schedule of the model as DFL: what `dflc compile` writes to
// out/schedule.dfl. The output imports the network and hardware files, is in
// canonical form (`dflc fmt` leaves it unchanged) and is byte-stable: the same
// schedule always prints the same bytes.
#pragma once

#include "model/Model.h"

#include <string>
#include <vector>

namespace dfl {

/// `imports` are written as given (paths relative to where the file will live).
std::string writeSchedule(const Model &model, const Schedule &schedule, const std::vector<std::string> &imports,
                          const std::string &headerComment);

} // namespace dfl
