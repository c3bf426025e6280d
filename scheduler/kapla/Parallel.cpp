#include "scheduler/kapla/Parallel.h"

#include <sched.h>

namespace dfl {

size_t usableCpus() {
  cpu_set_t cpus;   // as dflc sweep's --jobs
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? static_cast<size_t>(std::max(1, CPU_COUNT(&cpus))) : 1;
}

} // namespace dfl
