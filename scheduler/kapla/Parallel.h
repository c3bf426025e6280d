// Work items run on a few threads, for the solver's independent solves. The
// caller keeps each item's result in its own slot and reduces the slots in
// index order afterwards, so nothing it returns depends on the threads or
// their timing (docs/solver.md, "Speed").
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace dfl {

/// The CPUs this process may use (at least 1).
size_t usableCpus();

/// [0, n) taken from `parts` equal stretches in turn (0, s, 2s, ..., 1, s + 1,
/// ...), so that threads taking consecutive items work far apart: the
/// solver's segments are listed by their first layer, and neighbours share
/// memoized layer solves that one thread makes while the others wait.
std::vector<size_t> spreadOrder(size_t n, size_t parts);

/// Runs item(i) for i in [0, n) on up to `threads` threads (this one
/// included), each taking the next index when it is done; returns once all
/// are. The first exception by index is rethrown after all items ran.
template <class F>
void parallelFor(size_t n, size_t threads, F &&item) {
  threads = std::min(std::max<size_t>(1, threads), n);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i)
      item(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> failed(n);
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      try {
        item(i);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> others;
  for (size_t t = 1; t < threads; ++t)
    others.emplace_back(work);
  work();
  for (std::thread &t : others)
    t.join();
  for (std::exception_ptr &e : failed)
    if (e)
      std::rethrow_exception(e);
}

} // namespace dfl
