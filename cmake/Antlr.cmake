# ANTLR4: the tool (Debian's /usr/bin/antlr4, 4.7.2) and the C++ runtime (4.9),
# as dflc::antlr4. Shared by the main build and the fuzzer's build (tests/fuzz).
find_program(ANTLR4_TOOL NAMES antlr4 REQUIRED)
find_path(ANTLR4_INCLUDE_DIR antlr4-runtime.h PATH_SUFFIXES antlr4-runtime REQUIRED)
find_library(ANTLR4_LIBRARY NAMES antlr4-runtime REQUIRED)
add_library(dflc::antlr4 INTERFACE IMPORTED)
# SYSTEM: the runtime headers warn under C++20; they are not our code.
target_include_directories(dflc::antlr4 SYSTEM INTERFACE ${ANTLR4_INCLUDE_DIR})
target_link_libraries(dflc::antlr4 INTERFACE ${ANTLR4_LIBRARY})
