"""dflc from Python: load DFL sources, check, compile and simulate them.

Every call runs dflc's driver (the stages `dflc check`, `dflc compile` and
`dflc sim` run) in the extension module `_dflc`; this file only gathers the
inputs and turns the results into plain Python data. See docs/python.md.
"""
import json
import os

from . import _dflc

__all__ = ["Diagnostic", "Error", "Source", "Network", "Hardware", "Schedule", "Result", "Simulation",
           "check", "compile", "simulate", "search_roots", "stdlib_root", "version"]

version = _dflc.version


def stdlib_root():
    """The directory holding the stdlib/ this package reads: <prefix>/share/dflc,
    beside the package at <prefix>/lib/python3/site-packages/dflc, as the binary
    at <prefix>/bin/dflc finds it."""
    here = os.path.dirname(os.path.abspath(_dflc.__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "..", "share", "dflc"))


def search_roots(includes=()):
    """Where an import (and a file given by a relative path that is not found
    from the working directory) is looked for, in order: the includes (-I),
    $DFLC_PATH's directories, the stdlib root."""
    env = [d for d in os.environ.get("DFLC_PATH", "").split(":") if d]
    return [*includes, *env, stdlib_root()]


class Diagnostic:
    """One diagnostic as `dflc check --format json` reports it: code (e.g.
    "E0101", None for a few uncoded ones), severity ("error", "warning",
    "note"), message, file, line and column (1-based; None where the
    diagnostic has no place), end_line, end_column, and its notes."""

    def __init__(self, data):
        self.code = data.get("code")
        self.severity = data["severity"]
        self.message = data["message"]
        self.file = data.get("file")
        start = data.get("range", {}).get("start", {})
        end = data.get("range", {}).get("end", {})
        self.line, self.column = start.get("line"), start.get("column")
        self.end_line, self.end_column = end.get("line"), end.get("column")
        self.notes = [Diagnostic(n) for n in data.get("notes", [])]

    def __str__(self):
        where = ":".join(str(x) for x in (self.file, self.line, self.column) if x is not None)
        return "%s%s: %s%s" % (where + ": " if where else "", self.severity, self.message,
                               " [%s]" % self.code if self.code else "")

    def __repr__(self):
        return "Diagnostic(%r, %r, %r:%r:%r)" % (self.code, self.message, self.file, self.line, self.column)


class Error(Exception):
    """A stage failed with errors: .diagnostics holds every diagnostic of the
    run (errors, warnings and notes as dflc reported them)."""

    def __init__(self, diagnostics):
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"] or self.diagnostics
        super().__init__("\n".join(str(d) for d in errors) or "dflc failed")

    @property
    def errors(self):
        return [d for d in self.diagnostics if d.severity == "error"]


def _diagnostics(text):
    return [Diagnostic(d) for d in json.loads(text)["diagnostics"]] if text else []


def _find(path, includes):
    """`path` as dflc finds an import: from the working directory, then the search roots."""
    if os.path.isabs(path) or os.path.exists(path):
        return os.path.abspath(path)
    for root in search_roots(includes):
        candidate = os.path.join(root, path)
        if os.path.exists(candidate):
            return os.path.abspath(candidate)
    raise FileNotFoundError("'%s' is not in the working directory or the search roots (%s)"
                            % (path, ", ".join(search_roots(includes))))


class Source:
    """A DFL file's text and the path it is read as (imports in it resolve
    relative to that path's directory). Load with from_file() or
    from_string(); the text is read once, at load."""
    _default_name = "source"

    def __init__(self, path, text, includes=()):
        self.path = path
        self.text = text
        self.includes = list(includes)

    @classmethod
    def from_file(cls, path, includes=()):
        """Reads `path`: relative to the working directory, else in the search
        roots (the includes, $DFLC_PATH, the stdlib root), as an import is
        found; e.g. Network.from_file("stdlib/nets/alexnet.dfl")."""
        found = _find(path, includes)
        with open(found, encoding="utf-8") as f:
            return cls(found, f.read(), includes)

    @classmethod
    def from_string(cls, text, path=None, includes=()):
        """DFL text; `path` (default "<network>.dfl", "<hardware>.dfl", ...
        in the working directory) is what diagnostics name and what its
        imports resolve against; a schedule given as a string imports the
        others by these paths."""
        return cls(os.path.abspath(path or "<%s>.dfl" % cls._default_name), text, includes)

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.path)


class Network(Source):
    _default_name = "network"


class Schedule(Source):
    _default_name = "schedule"


class Hardware(Source):
    _default_name = "hardware"

    def with_values(self, values):
        """A copy with properties set, as a sweep's overrides set them
        (docs/sweep.md): keys "LEVEL.property" ("GBUF.capacity"),
        "block.property" ("mac.energy", "noc.hop_energy") or the template's
        own ("frequency"); values DFL text ("64 KiB", "8 x 8") or numbers.
        A property the template gives is rewritten in place, one it does not
        is added to its block. The values are checked when the hardware is
        used (a located diagnostic in this hardware's text)."""
        text = _dflc.hardware_variant(self.path, self.text, [(k, str(v)) for k, v in values.items()])
        return Hardware(self.path, text, self.includes)

    def with_level(self, level, **properties):
        """A copy with a level's properties set: hw.with_level("GBUF", capacity="64 KiB")."""
        return self.with_values({"%s.%s" % (level, k): v for k, v in properties.items()})


def _inputs(sources, includes, train, batch):
    inputs = _dflc.Inputs()
    paths, buffers, roots = [], {}, []
    for s in sources:
        if s is None:
            continue
        if not isinstance(s, Source):
            raise TypeError("expected a dflc.Source (Network, Hardware, Schedule), got %r" % (s,))
        paths.append(s.path)
        buffers[s.path] = s.text
        roots += [r for r in s.includes if r not in roots]
    roots += [r for r in includes if r not in roots]
    inputs.files = paths
    inputs.buffers = buffers
    inputs.includes = [os.path.abspath(r) for r in roots]
    inputs.stdlib = stdlib_root()
    inputs.train = train
    inputs.batch = batch
    return inputs


def check(*sources, includes=(), train=False, batch=None):
    """`dflc check` on the sources: every schedule they declare checked (E0820
    if they declare none). Returns the diagnostics (a list of Diagnostic,
    empty when all is well); never raises for the input's errors."""
    out = _dflc.check(_inputs(sources, includes, train, batch))
    return _diagnostics(out["diagnostics"])


class Simulation:
    """A run of a schedule (docs/simulator.md): .ok (every output equal to the
    reference, every count to the analysis), .report (sim.json as Python
    data) and .layers (one row per layer: name, output_equal, ...)."""

    def __init__(self, data):
        self.ok = data["ok"]
        self.report = json.loads(data["report"]) if "report" in data else {}

    @property
    def layers(self):
        return [{k: v for k, v in layer.items() if not isinstance(v, (dict, list))}
                for layer in self.report.get("layers", [])]


def _layer_row(layer, levels):
    """A report.json layer as one flat row: the figures, its bound and gaps, per level its energy and occupancy."""
    energy = layer.get("energy_pj") or {}
    bound, gap = layer.get("bound") or {}, layer.get("gap") or {}   # docs/directives.md §14
    row = {"name": layer["name"], "valid": layer["valid"], "complete": layer["complete"],
           "energy_pj": energy.get("total"), "mac_pj": energy.get("mac"), "noc_pj": energy.get("noc"),
           "bus_pj": energy.get("bus"), "static_pj": energy.get("static"),
           "latency_cycles": layer.get("latency_cycles"), "compute_cycles": layer.get("compute_cycles"),
           "utilization": layer.get("utilization"), "bound_by": layer.get("bound_by"),
           "work": layer.get("work"), "noc_hops": layer.get("noc_hops"),
           "bound_energy_pj": bound.get("energy_pj"), "bound_cycles": bound.get("cycles"),
           "bound_binding": bound.get("binding"), "gap_energy": gap.get("energy"), "gap_cycles": gap.get("cycles")}
    per_level = {lv["level"]: lv for lv in layer.get("levels", [])}
    for name in levels:
        lv = per_level.get(name, {})
        row[name + "_energy_pj"] = lv.get("energy_pj")
        row[name + "_occupancy_bytes"] = lv.get("occupancy_bytes")
    return row


class Result:
    """A compiled schedule: .report (report.json as Python data), .schedule_text
    (OUT/schedule.dfl), .files (every output by its path in OUT: the plots'
    SVG), .layers (one flat row per layer), .energy_pj, .latency_cycles,
    .diagnostics (the run's warnings) and .simulation (with simulate=True)."""

    def __init__(self, data):
        self.files = dict(data["files"])
        self.report = json.loads(self.files["report.json"])
        self.schedule_text = self.files["schedule.dfl"]
        self.diagnostics = _diagnostics(data["diagnostics"])
        self.simulation = Simulation(data["simulation"]) if "simulation" in data else None

    @property
    def energy_pj(self):
        return self.report["totals"]["energy_pj"]

    @property
    def latency_cycles(self):
        return self.report["totals"]["latency_cycles"]

    @property
    def layers(self):
        """One dict per layer, every row with the same keys (pandas.DataFrame(result.layers))."""
        levels = []
        for layer in self.report["layers"]:
            for lv in layer.get("levels", []):
                if lv["level"] not in levels:
                    levels.append(lv["level"])
        return [_layer_row(layer, levels) for layer in self.report["layers"]]


def _raise_if_failed(out):
    if not out["ok"]:
        raise Error(_diagnostics(out["diagnostics"]) + _diagnostics(out.get("output_error")))


def compile(network=None, hardware=None, schedule=None, *sources, objective="energy", batch=None, train=False,
            solver="kapla", time_limit=600.0, pipelining=True, plots=True, simulate=False, seed=1, out=None,
            includes=()):
    """`dflc compile`: completes the one schedule the sources hold (or, with
    none, schedules the network on the hardware) and returns a Result.
    Options as the CLI's: objective ("energy", "latency", "edp"), batch,
    train, solver, time_limit (seconds, None for none), pipelining, plots;
    simulate=True runs it too (`--sim`, with `seed`); out=DIR also writes
    OUT as `dflc compile -o DIR` does. Raises Error with the diagnostics if a
    stage fails."""
    inputs = _inputs((network, hardware, schedule) + sources, includes, train, batch)
    result = _dflc.compile(inputs, objective, solver, time_limit, pipelining, plots, simulate, seed,
                           os.fspath(out) if out is not None else "")
    _raise_if_failed(result)
    return Result(result)


def simulate(*sources, seed=1, layers=(), includes=(), train=False, batch=None):
    """`dflc sim`: runs the one complete schedule the sources declare
    (docs/simulator.md), `layers` (names) only if given. Returns a
    Simulation; raises Error if it cannot run."""
    out = _dflc.simulate(_inputs(sources, includes, train, batch), seed, list(layers))
    _raise_if_failed(out)
    return Simulation(out["simulation"])
