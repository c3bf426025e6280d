// Must not build: the model depends on support/ alone (cmake/Layers.cmake).
#include "scheduler/analysis/Analysis.h"
