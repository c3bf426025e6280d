// Must not build: the scheduler may not see the front end (cmake/Layers.cmake).
#include "frontend/Ast.h"
