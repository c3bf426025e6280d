# LLVM 14 as the imported target dflc::llvm (the backend's JIT); also used by
# the fuzzers' own build tree (tests/fuzz), whose sanitized dflc has the simulator.
find_package(LLVM 14 REQUIRED CONFIG HINTS /usr/lib/llvm-14/lib/cmake/llvm)
# Debian builds LLVM with LLVM_LINK_LLVM_DYLIB: link the one shared library
# (fast links, small binaries) and never mix it with the static component archives.
find_library(LLVM_SHARED_LIBRARY NAMES LLVM-14 LLVM HINTS ${LLVM_LIBRARY_DIR} NO_DEFAULT_PATH REQUIRED)
separate_arguments(_llvm_defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
add_library(dflc::llvm INTERFACE IMPORTED)
target_include_directories(dflc::llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_compile_options(dflc::llvm INTERFACE ${_llvm_defs})
target_link_libraries(dflc::llvm INTERFACE ${LLVM_SHARED_LIBRARY})
