// Internal invariants: DFLC_CHECK(cond) << "context"; stays on in release
// builds and raises InternalError ("internal compiler error"), which only the
// tools' main()s catch. User errors never go through here: they are diagnostics.
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
} // namespace detail

} // namespace dfl

#define DFLC_CHECK(cond) \
  if (cond) {            \
  } else                 \
    ::dfl::detail::CheckFailure(#cond, __FILE__, __LINE__)
