# ONNX (libonnx-dev): the importer's protobuf classes and shape inference.
# Debian's ONNXConfig.cmake links its targets to protobuf::libprotobuf, which
# FindProtobuf (CMake's module, over libprotobuf-dev) defines.
# Included by Dependencies.cmake and by the fuzzers' own build tree.
if(NOT TARGET dflc::onnx)
  find_package(Protobuf REQUIRED)
  find_package(ONNX 1.12 REQUIRED CONFIG)
  add_library(dflc::onnx INTERFACE IMPORTED)
  target_link_libraries(dflc::onnx INTERFACE onnx onnx_proto)
endif()
