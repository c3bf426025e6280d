#!/usr/bin/env bash
# Installs dflc's build and test dependencies from Debian 12 packages.
# Idempotent: installs only what is missing. Works as root or through sudo.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  antlr4 libantlr4-runtime-dev        # grammar/: tool 4.7.2 + C++ runtime 4.9
  libisl-dev                          # backend/: polyhedral dependence analysis
  libgecode-dev                       # scheduler/: intrinsic embedding (CP)
  llvm-14-dev llvm-14-tools           # backend/: ORC JIT; FileCheck + lit for tests
  clang-14 libclang-rt-14-dev         # libFuzzer target for the front end
  nlohmann-json3-dev                  # reports, JSON/SARIF diagnostics, LSP
  libmimalloc-dev                     # tools/: the dflc executable's allocator
  libyaml-cpp-dev                     # driver/: dflc import --timeloop reads Timeloop's YAML
  libonnx-dev libprotobuf-dev         # frontend/: the ONNX importer (libonnx 1.12)
  python3-onnx                        # tests/onnx: builds the ONNX models the tests import
  libgtest-dev libgmock-dev libbenchmark-dev
  python3                             # lit
  python3-jsonschema                  # tests/lit/compile: report.json against docs/report.schema.json
  python3-dev pybind11-dev            # python/: the dflc Python module
  python3-pytest                      # tests/python: the Python module's tests
  neovim                              # tests/nvim: the real Neovim LSP client test (0.7.2)
  slurm-wlm munge parallel            # dflc sweep: tests/lit/sweep runs a real Slurm and GNU parallel
  chromium fonts-liberation           # tests/lit/report needs them: headless Chromium renders OUT/report.html
)
# tests/lsp-client (the real-client LSP test) and editors/vscode need node and
# npm. Debian has them as nodejs + npm; a machine whose node comes from
# elsewhere (NodeSource's nodejs bundles npm and conflicts with Debian's npm)
# keeps its own.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
