// Internal invariants: DFLC_CHECK(cond) << "context"; stays on in release
// builds and raises InternalError ("internal compiler error"), which only the
// tools' main()s catch. User errors never go through here: they are diagnostics.
// DFLC_UNREACHABLE("what") ends a switch that covers every enumerator: it is
// reached only with a value outside the enum, and never returns.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace dfl {

class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

namespace detail {
class CheckFailure {
public:
  CheckFailure(const char *cond, const char *file, int line) {
    os_ << file << ":" << line << ": check failed: " << cond << " ";
  }
  template <class T> CheckFailure &operator<<(const T &v) {
    os_ << v;
    return *this;
  }
  ~CheckFailure() noexcept(false) { throw InternalError(os_.str()); }

private:
  std::ostringstream os_;
};

[[noreturn]] inline void unreachable(const std::string &what, const char *file, int line) {
  throw InternalError(std::string(file) + ":" + std::to_string(line) + ": unreachable: " + what);
}
} // namespace detail

} // namespace dfl

#define DFLC_CHECK(cond) \
  if (cond) {            \
  } else                 \
    ::dfl::detail::CheckFailure(#cond, __FILE__, __LINE__)

#define DFLC_UNREACHABLE(what) ::dfl::detail::unreachable(what, __FILE__, __LINE__)
