# Gecode (constraint programming) as dflc::gecode: the intrinsic embedding's
# solver (scheduler/embedding/IntrinsicEmbedding.cpp). Shared by the main build
# (Dependencies.cmake) and the fuzzers' (tests/fuzz/CMakeLists.txt), which
# link Debian's GCC-built libraries uninstrumented, like the ANTLR runtime.
if(TARGET dflc::gecode)
  return()
endif()
find_path(GECODE_INCLUDE_DIR gecode/kernel.hh REQUIRED)
set(_gecode_libs)
foreach(part search minimodel int kernel support)
  find_library(GECODE_${part}_LIBRARY NAMES gecode${part} REQUIRED)
  list(APPEND _gecode_libs ${GECODE_${part}_LIBRARY})
endforeach()
add_library(dflc::gecode INTERFACE IMPORTED)
target_include_directories(dflc::gecode SYSTEM INTERFACE ${GECODE_INCLUDE_DIR})
target_link_libraries(dflc::gecode INTERFACE ${_gecode_libs})
