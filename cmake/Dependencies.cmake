# Finds every dependency of dflc (docs/design.md), each as an imported target.
# scripts/install-deps.sh installs them all from Debian 12 packages.

include(Antlr)

include(Isl)

# ONNX (the importer, frontend/OnnxImporter.h): libonnx and its protobuf.
include(Onnx)

# Gecode (constraint programming).
include(Gecode)

# LLVM 14 (ORC JIT), plus FileCheck and lit for the end-to-end tests.
include(Llvm)
find_program(FILECHECK NAMES FileCheck-14 FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
find_program(SPLIT_FILE NAMES split-file-14 split-file HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
find_program(LIT NAMES lit.py lit HINTS /usr/lib/llvm-14/build/utils/lit REQUIRED)

find_package(nlohmann_json 3 REQUIRED)
# mimalloc: the dflc executable's allocator (docs/design.md, "The allocator").
find_package(mimalloc 2 REQUIRED)
# yaml-cpp: Timeloop's YAML (driver/TimeloopImport.h, dflc import --timeloop).
find_package(yaml-cpp REQUIRED)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# The tests build their ONNX models with python3-onnx, a Debian package: the
# system's python3, whatever interpreter came first above.
find_program(ONNX_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
