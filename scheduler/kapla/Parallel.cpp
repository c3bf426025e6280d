#include "scheduler/kapla/Parallel.h"

#include <sched.h>

namespace dfl {

size_t usableCpus() {
  cpu_set_t cpus;   // as dflc sweep's --jobs
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? static_cast<size_t>(std::max(1, CPU_COUNT(&cpus))) : 1;
}

std::vector<size_t> spreadOrder(size_t n, size_t parts) {
  parts = std::max<size_t>(1, parts);
  const size_t stretch = (n + parts - 1) / parts;
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t r = 0; r < stretch; ++r)
    for (size_t i = r; i < n; i += stretch)
      order.push_back(i);
  return order;
}

} // namespace dfl
