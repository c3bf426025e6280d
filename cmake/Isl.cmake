# isl (polyhedral sets and relations): the backend's dependences and LCUs.
# Included by Dependencies.cmake and by the fuzzers' own build tree.
if(NOT TARGET dflc::isl)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(ISL REQUIRED IMPORTED_TARGET isl)
  add_library(dflc::isl ALIAS PkgConfig::ISL)
endif()
