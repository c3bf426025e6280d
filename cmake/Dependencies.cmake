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
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
