// The extension module `dflc._dflc` (docs/python.md): the driver's stages
// (driver/Compilation.h) for the Python package, which wraps them in its
// classes (python/dflc/__init__.py). Every run is one Compilation, as in the
// CLI; what it returns is plain data: the diagnostics as `dflc check --format
// json` prints them, the report.json and schedule.dfl texts, sim.json. The GIL
// is released while the stages run.
#include "driver/Compilation.h"
#include "frontend/Loader.h"
#include "support/DiagnosticRenderer.h"
#include "sweep/SweepSpec.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace dfl::python {
namespace {

/// What every run reads: the FILEs, the texts standing in for files (by path:
/// sources given as strings, hardware with overrides), the -I dirs and the
/// stdlib root of the package.
struct Inputs {
  std::vector<std::string> files;
  std::map<std::string, std::string> buffers;
  std::vector<std::string> includes;
  std::string stdlib;
  bool train = false;
  std::optional<int64_t> batch;
};

driver::DriverOptions optionsOf(const Inputs &in) {
  driver::DriverOptions o;
  o.files = in.files;
  // The CLI's search order: -I, then $DFLC_PATH, then the stdlib, here the
  // one installed beside the package rather than beside the interpreter.
  o.includes = in.includes;
  for (std::string &dir : environmentSearchRoots())
    o.includes.push_back(std::move(dir));
  o.stdlibRoot = in.stdlib;
  for (const auto &[path, text] : in.buffers)
    o.openBuffers[canonicalPath(path)] = text;
  o.train = in.train;
  if (in.batch && *in.batch < 1)
    throw py::value_error("batch must be a positive integer, got " + std::to_string(*in.batch));
  o.batch = in.batch;
  return o;
}

std::string diagnosticsJson(const driver::Compilation &c) {
  return renderJson(c.sources(), c.diagnostics().diagnostics());
}

/// The output error (E1401, E1402), rendered as the diagnostics are.
std::string outputErrorJson(const driver::Compilation &c) {
  DiagnosticsEngine diags(c.sources());
  driver::reportOutputError(diags, c.outputError());
  return renderJson(c.sources(), diags.diagnostics());
}

py::dict check(const Inputs &in) {
  driver::Compilation c(optionsOf(in));
  bool ok;
  {
    py::gil_scoped_release release;
    ok = c.load() && c.analyze() && c.check();
  }
  py::dict out;
  out["ok"] = ok && !c.hasErrors();
  out["diagnostics"] = diagnosticsJson(c);
  return out;
}

/// Refused before the solve: the Python module runs memory-hierarchy
/// schedules only (docs/limits.md).
void requireMemoryHierarchy(const driver::Compilation &c) {
  if (c.targetsCm() || c.targetsDsa())
    throw py::value_error("the Python module compiles and simulates memory-hierarchy hardware only; use the dflc "
                          "command line for computational-memory and cluster/core chips (docs/python.md)");
}

sim::SimOptions simOptions(uint64_t seed, const std::vector<std::string> &layers) {
  sim::SimOptions so;
  so.seed = seed;
  so.layers = layers;
  return so;
}

py::dict simulationOf(const driver::Compilation &c) {
  py::dict out;
  const driver::Simulation &run = c.simulation();
  out["ok"] = run.ok();
  for (const driver::OutputFile &f : run.files)
    if (f.path == "sim.json")
      out["report"] = f.text;
  return out;
}

py::dict compile(const Inputs &in, const std::string &objective, const std::string &solver,
                 std::optional<double> timeLimit, bool pipelining, bool plots, bool simulate, uint64_t seed,
                 const std::string &outDir) {
  driver::DriverOptions o = optionsOf(in);
  if (auto error = driver::objectiveNameError(objective))
    throw py::value_error(*error);
  if (auto error = driver::solverNameError(solver))
    throw py::value_error(*error);
  if (timeLimit && !(*timeLimit > 0))
    throw py::value_error("time_limit must be a positive number of seconds or None");
  o.objective = objective;
  o.solver = solver;
  o.timeLimitSeconds = timeLimit;
  o.pipelining = pipelining;
  o.plots = plots;
  o.outDir = outDir.empty() ? "." : outDir;   // the schedule's imports are relative to it
  driver::Compilation c(std::move(o));
  py::dict out;
  bool opened = true, ok = false, written = false;
  {
    py::gil_scoped_release release;
    opened = outDir.empty() || c.openOutputs();
    ok = opened && c.load() && c.analyze();
    if (ok && !c.hasErrors()) {
      py::gil_scoped_acquire acquire;   // a Python exception needs the GIL
      requireMemoryHierarchy(c);
    }
    ok = ok && !c.hasErrors() && c.selectSchedule() && c.solve();
    if (ok && simulate)
      ok = c.simulate(simOptions(seed, {}));
    if (ok)
      c.outputs();   // made here, without the GIL
    if (ok && !outDir.empty())
      written = c.writeOutputs(simulate ? c.simulation().files : std::vector<driver::OutputFile>{});
  }
  out["diagnostics"] = diagnosticsJson(c);
  if (!opened || (ok && !outDir.empty() && !written)) {
    out["ok"] = false;
    out["output_error"] = outputErrorJson(c);
    return out;
  }
  out["ok"] = ok;
  if (!ok)
    return out;
  py::dict files;
  for (const driver::OutputFile &f : c.outputs())
    files[py::str(f.path)] = f.text;
  out["files"] = files;
  if (simulate)
    out["simulation"] = simulationOf(c);
  return out;
}

py::dict simulate(const Inputs &in, uint64_t seed, const std::vector<std::string> &layers) {
  driver::Compilation c(optionsOf(in));
  py::dict out;
  bool ok;
  {
    py::gil_scoped_release release;
    ok = c.load() && c.analyze();
    if (ok && !c.hasErrors()) {
      py::gil_scoped_acquire acquire;
      requireMemoryHierarchy(c);
    }
    ok = ok && !c.hasErrors() && c.checkSchedules() && c.simulate(simOptions(seed, layers));
  }
  out["ok"] = ok;
  out["diagnostics"] = diagnosticsJson(c);
  if (ok)
    out["simulation"] = simulationOf(c);
  return out;
}

/// The sweep's rewrite of a hardware template (sweep/SweepSpec.h): `values`
/// maps keys ("GBUF.capacity", "frequency") to DFL text.
std::string hardwareVariant(const std::string &path, const std::string &text,
                            const std::vector<std::pair<std::string, std::string>> &values) {
  std::vector<sweep::Override> overrides;
  std::vector<std::string> settings;
  for (const auto &[key, value] : values) {
    overrides.push_back({key, {value}});
    settings.push_back(value);
  }
  std::string error;
  std::optional<std::string> variant = sweep::hardwareVariant(path, text, overrides, settings, error);
  if (!variant)
    throw py::value_error(error);
  return *variant;
}

} // namespace
} // namespace dfl::python

PYBIND11_MODULE(_dflc, m) {
  using namespace dfl::python;
  m.doc() = "dflc's driver stages; use the package `dflc` (docs/python.md)";
  m.attr("version") = dfl::driver::kVersion;
  py::class_<Inputs>(m, "Inputs")
      .def(py::init<>())
      .def_readwrite("files", &Inputs::files)
      .def_readwrite("buffers", &Inputs::buffers)
      .def_readwrite("includes", &Inputs::includes)
      .def_readwrite("stdlib", &Inputs::stdlib)
      .def_readwrite("train", &Inputs::train)
      .def_readwrite("batch", &Inputs::batch);
  m.def("check", &check, py::arg("inputs"));
  m.def("compile", &compile, py::arg("inputs"), py::arg("objective"), py::arg("solver"), py::arg("time_limit"),
        py::arg("pipelining"), py::arg("plots"), py::arg("simulate"), py::arg("seed"), py::arg("out"));
  m.def("simulate", &simulate, py::arg("inputs"), py::arg("seed"), py::arg("layers"));
  m.def("hardware_variant", &hardwareVariant, py::arg("path"), py::arg("text"), py::arg("values"));
  m.def("canonical_path", &dfl::canonicalPath, py::arg("path"));
}
