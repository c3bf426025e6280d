// The ONNX importer: reads a model exported from PyTorch or TensorFlow (the
// protobuf, parsed by Debian's libonnx; ONNX shape inference fills in the
// shapes the file leaves out) and writes the network it describes as DFL, in
// the canonical form `dflc fmt` prints, each statement with a comment naming
// the ONNX node it came from. docs/onnx.md gives the operator mapping, what is
// layout only, and what is refused and why.
//
// Before: `bytes` is the file's content (read by the caller). After: the DFL
// text, or nullopt with every problem reported as a diagnostic located in the
// ONNX file (a SourceManager buffer without text: `MODEL.onnx: error: ...`).
// A malformed or truncated file is a diagnostic, never a crash. Runs in the
// loader (frontend/Loader.cpp): an `.onnx` path anywhere a `.dfl` is read —
// on the command line or in an `import` — is its imported network.
#pragma once

#include "support/Diagnostics.h"

#include <optional>
#include <string>

namespace dfl {

/// Whether `path` names an ONNX model: it ends in `.onnx` (any case).
bool isOnnxPath(const std::string &path);

std::optional<std::string> importOnnx(const std::string &path, const std::string &bytes, SourceManager &sm,
                                      DiagnosticsEngine &diags);

} // namespace dfl
