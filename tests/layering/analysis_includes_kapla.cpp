// Must not build: the analysis is below the solvers that use it (scheduler/CMakeLists.txt).
#include "scheduler/kapla/Solver.h"
