# The `fuzz_frontend` test (cmake -P): builds tests/fuzz with clang in its own
# tree under WORK, seeds a fresh corpus with every .dfl file of stdlib/,
# examples/ and tests/lit/ (copies: libFuzzer writes new inputs into the corpus
# directory, and never into the source tree), then fuzzes for SECONDS. Any
# crash, sanitizer report, hang (-timeout) or memory blow-up (-rss_limit_mb)
# fails the test and leaves the input in WORK/artifacts/. Then the transport
# fuzzer (the language server's framing and JSON-RPC) runs for
# TRANSPORT_SECONDS (default 15), seeded with tests/fuzz/transport-seeds/; its
# -malloc_limit_mb is far below a claimed 1 GiB Content-Length.
# The ONNX importer's fuzzer runs before it (ONNX_SECONDS, below).
#   cmake -DSRC=<source root> -DWORK=<dir> -DCXX=clang++-14 -DGENERATOR=Ninja
#         -DSECONDS=30 -DJOBS=2 [-DPYTHON=/usr/bin/python3] -P run_fuzzer.cmake
foreach(v SRC WORK CXX GENERATOR SECONDS JOBS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_fuzzer.cmake: -D${v}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
endfunction()

# A unit's time limit: a hang, not a slow machine. Units take under a second
# alone, but a loaded CI machine once stretched one to 7 s (ASan's quarantine
# under memory pressure), so the limit leaves a wide margin; an endless loop
# still fails.
set(UNIT_TIMEOUT 30)

string(TIMESTAMP t0 "%s")
if(NOT EXISTS ${WORK}/build/CMakeCache.txt)
  run(${CMAKE_COMMAND} -G ${GENERATOR} -S ${SRC}/tests/fuzz -B ${WORK}/build
      -DCMAKE_CXX_COMPILER=${CXX})
endif()
run(${CMAKE_COMMAND} --build ${WORK}/build -j ${JOBS})
string(TIMESTAMP t1 "%s")
math(EXPR build_s "${t1} - ${t0}")
message(STATUS "fuzzer built in ${build_s} s")

file(REMOVE_RECURSE ${WORK}/corpus)
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
# The lit tests' inputs add the odd corners (comments everywhere, huge sizes).
file(GLOB_RECURSE seeds ${SRC}/stdlib/*.dfl ${SRC}/examples/*.dfl ${SRC}/tests/lit/*.dfl)
list(LENGTH seeds n)
if(n EQUAL 0)
  message(FATAL_ERROR "no seed files under ${SRC}/stdlib, examples or tests/lit")
endif()
foreach(s ${seeds})
  file(RELATIVE_PATH rel ${SRC} ${s})
  string(REPLACE "/" "_" name ${rel})
  configure_file(${s} ${WORK}/corpus/${name} COPYONLY)
endforeach()
message(STATUS "seed corpus: ${n} files")

run(${WORK}/build/FrontendFuzzer -max_total_time=${SECONDS} -timeout=${UNIT_TIMEOUT} -rss_limit_mb=2048
    -dict=${SRC}/tests/fuzz/dfl.dict -artifact_prefix=${WORK}/artifacts/ -print_final_stats=1
    ${WORK}/corpus)

# The ONNX importer, for ONNX_SECONDS (default 15), seeded with the models the
# lit tests build (tests/onnx/make_models.py, run by PYTHON: python3 with
# python3-onnx; without it the importer is fuzzed from an empty corpus).
if(NOT DEFINED ONNX_SECONDS)
  set(ONNX_SECONDS 15)
endif()
file(REMOVE_RECURSE ${WORK}/onnx-corpus)
file(MAKE_DIRECTORY ${WORK}/onnx-corpus)
if(DEFINED PYTHON)
  run(${PYTHON} ${SRC}/tests/onnx/make_models.py ${WORK}/onnx-corpus)
  file(GLOB _macs ${WORK}/onnx-corpus/*.macs)
  file(REMOVE ${_macs})
endif()
run(${WORK}/build/OnnxFuzzer -max_total_time=${ONNX_SECONDS} -timeout=${UNIT_TIMEOUT} -rss_limit_mb=2048
    -artifact_prefix=${WORK}/artifacts/onnx- -print_final_stats=1 ${WORK}/onnx-corpus)

if(NOT DEFINED TRANSPORT_SECONDS)
  set(TRANSPORT_SECONDS 15)
endif()
file(REMOVE_RECURSE ${WORK}/transport-corpus)
file(COPY ${SRC}/tests/fuzz/transport-seeds/ DESTINATION ${WORK}/transport-corpus)
run(${WORK}/build/TransportFuzzer -max_total_time=${TRANSPORT_SECONDS} -timeout=${UNIT_TIMEOUT} -rss_limit_mb=2048
    -malloc_limit_mb=256 -dict=${SRC}/tests/fuzz/transport.dict -artifact_prefix=${WORK}/artifacts/transport-
    -print_final_stats=1 ${WORK}/transport-corpus)
