#include "support/Executable.h"

#include <filesystem>

namespace dfl {

std::string executablePath() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || !exe.is_absolute())
    return "";
  return exe.string();
}

} // namespace dfl
