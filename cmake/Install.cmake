# `cmake --install build --prefix P` puts the driver at P/bin/dflc and the
# stdlib at P/share/dflc/stdlib/. dflc finds its stdlib relative to its own
# binary, at <exe>/../share/dflc (frontend/Loader.h, defaultStdlibRoot), so
# the prefix can be moved anywhere; no path is compiled in. The build tree
# mirrors the layout: build/tools/dflc finds build/share/dflc/stdlib, a link
# to the source stdlib/ (so edits to the stdlib need no rebuild).
include(GNUInstallDirs)
if(NOT CMAKE_INSTALL_BINDIR STREQUAL "bin" OR NOT CMAKE_INSTALL_DATADIR STREQUAL "share")
  message(FATAL_ERROR "dflc looks for its stdlib at <exe>/../share/dflc: keep CMAKE_INSTALL_BINDIR=bin "
                      "and CMAKE_INSTALL_DATADIR=share (got ${CMAKE_INSTALL_BINDIR}, ${CMAKE_INSTALL_DATADIR})")
endif()

install(TARGETS dflc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${DFLC_ROOT}/stdlib/ DESTINATION ${CMAKE_INSTALL_DATADIR}/dflc/stdlib
        FILES_MATCHING PATTERN "*.dfl")

get_target_property(dflc_dir dflc RUNTIME_OUTPUT_DIRECTORY)
if(dflc_dir)
  message(FATAL_ERROR "cmake/Install.cmake assumes dflc is built in build/tools/ (one level below the build root)")
endif()
set(build_share ${CMAKE_BINARY_DIR}/share/dflc)
file(MAKE_DIRECTORY ${build_share})
if(NOT IS_SYMLINK ${build_share}/stdlib)
  file(CREATE_LINK ${DFLC_ROOT}/stdlib ${build_share}/stdlib SYMBOLIC)
endif()
