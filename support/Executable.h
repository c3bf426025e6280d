// Where the running program is: dflc finds its stdlib relative to its own
// binary (`<prefix>/bin/dflc` next to `<prefix>/share/dflc/stdlib`), so an
// installed prefix works wherever it is moved. Nothing is compiled in.
#pragma once

#include <string>

namespace dfl {

/// The absolute path of the running executable with symbolic links resolved
/// (Linux: /proc/self/exe); empty if the system does not say.
std::string executablePath();

} // namespace dfl
