"""The Python package against the CLI (docs/python.md).

Run by ctest (tests/CMakeLists.txt, test `python`) with PYTHONPATH at the
build's package and DFLC at the build's binary; the expected figures are the
CLI's for the same inputs, or derived by hand in the comments.
"""
import json
import os
import subprocess

import pytest

import dflc

DFLC = os.environ["DFLC"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUICK = os.path.join(ROOT, "examples", "quickstart")

# examples/quickstart/net.dfl's layers as written (relu1 and relu2 fuse into the convs).
QUICK_LAYERS = ["conv1", "pool1", "conv2", "fc1"]

# A network whose 4th line, `  fc1 = fc(dat, K=4);`, names a tensor that does
# not exist: E0202 at column 12 (two spaces and "fc1 = fc(" are 11 characters).
BAD = "network bad {\n  batch N = 1;\n  input data [C=8];\n  fc1 = fc(dat, K=4);\n}\n"


def cli(*args, cwd=None, expect=0):
    p = subprocess.run([DFLC, *args], capture_output=True, text=True, cwd=cwd,
                       env=dict(os.environ, NO_COLOR="1"))
    assert p.returncode == expect, "dflc %s exited %d:\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr)
    return p


def cli_report(tmp_path, *files):
    out = tmp_path / "cli-out"
    cli("compile", *map(str, files), "-o", str(out))
    return json.loads((out / "report.json").read_text()), (out / "schedule.dfl").read_text()


@pytest.fixture(scope="module")
def quick():
    return dflc.Network.from_file(os.path.join(QUICK, "net.dfl")), dflc.Hardware.from_file(os.path.join(QUICK, "hw.dfl"))


def without_imports(text):
    return "\n".join(line for line in text.splitlines() if not line.startswith("import "))


def test_compile_equals_the_cli(tmp_path, quick):
    net, hw = quick
    result = dflc.compile(net, hw)
    report, schedule = cli_report(tmp_path, net.path, hw.path)
    assert result.energy_pj == report["totals"]["energy_pj"]
    assert result.latency_cycles == report["totals"]["latency_cycles"]
    assert result.report == report   # the whole report.json, plots' names included
    # The imports differ: relative to OUT there, to the working directory here.
    assert without_imports(result.schedule_text) == without_imports(schedule)
    assert result.diagnostics == []


def test_a_stdlib_network_found_as_an_import_is(tmp_path, monkeypatch, quick):
    _, hw = quick
    monkeypatch.chdir(tmp_path)
    net = dflc.Network.from_file("stdlib/nets/mlp.dfl")   # not in the working directory: the stdlib root's
    assert os.path.realpath(net.path) == os.path.realpath(os.path.join(ROOT, "stdlib", "nets", "mlp.dfl"))
    result = dflc.compile(net, hw, objective="latency")
    out = tmp_path / "cli-out"
    cli("compile", "--objective", "latency", os.path.join(ROOT, "stdlib", "nets", "mlp.dfl"), hw.path,
        "-o", str(out))
    report = json.loads((out / "report.json").read_text())
    assert (result.energy_pj, result.latency_cycles) == (report["totals"]["energy_pj"],
                                                         report["totals"]["latency_cycles"])
    assert [row["name"] for row in result.layers] == ["fc1", "fc2", "fc3", "fc4"]   # stdlib/nets/mlp.dfl


def test_an_error_in_a_string_is_located_as_dflc_check_locates_it(tmp_path, quick):
    _, hw = quick
    path = tmp_path / "bad.dfl"
    net = dflc.Network.from_string(BAD, path=str(path))
    assert not path.exists()   # a string is never written
    with pytest.raises(dflc.Error) as info:
        dflc.compile(net, hw)
    errors = info.value.errors
    assert [(d.code, d.line, d.column, d.end_column) for d in errors] == [("E0202", 4, 12, 15)]
    assert errors[0].file == str(path) and errors[0].severity == "error"
    assert "unknown tensor 'dat'" in errors[0].message
    # The same file checked by the CLI: the same diagnostic.
    path.write_text(BAD)
    shown = json.loads(cli("check", "--format", "json", str(path), expect=1).stdout)["diagnostics"]
    assert [(d["code"], d["range"]["start"]["line"], d["range"]["start"]["column"], d["message"]) for d in shown] \
        == [(d.code, d.line, d.column, d.message) for d in errors]
    # check() returns them rather than raising.
    assert [(d.code, d.line, d.column) for d in dflc.check(dflc.Network.from_string(BAD, path=str(path)))] \
        == [("E0202", 4, 12)]
    assert str(errors[0]) == "%s:4:12: error: %s [E0202]" % (path, errors[0].message)


def test_check_of_a_valid_schedule_and_of_none(quick):
    schedule = dflc.Schedule.from_file(os.path.join(QUICK, "schedule.dfl"))
    assert [d for d in dflc.check(schedule) if d.severity == "error"] == []
    # A network and hardware without a schedule: `dflc check`'s E0820.
    assert [d.code for d in dflc.check(*quick)] == ["E0820"]


def gbuf_capacities(result):
    return {lv["capacity_bytes"] for layer in result.report["layers"] for lv in layer["levels"]
            if lv["level"] == "GBUF"}


def test_a_hardware_override_changes_the_gbuf_the_report_shows(quick):
    net, hw = quick
    small = hw.with_level("GBUF", capacity="32 KiB")
    assert "capacity = 64 KiB;" in hw.text          # the original is left as it was
    assert small.path == hw.path and small.text != hw.text
    assert gbuf_capacities(dflc.compile(net, hw, plots=False)) == {64 * 1024}
    assert gbuf_capacities(dflc.compile(net, small, plots=False)) == {32 * 1024}
    # A key naming no block of the template, and a value sema refuses (located in the variant).
    with pytest.raises(ValueError):
        hw.with_level("L9", capacity="1 KiB")
    with pytest.raises(dflc.Error) as info:
        dflc.compile(net, hw.with_level("GBUF", capacity="lots"), plots=False)
    assert all(d.file == hw.path for d in info.value.errors) and info.value.errors


def test_per_layer_rows(quick):
    rows = dflc.compile(*quick, plots=False).layers
    assert [row["name"] for row in rows] == QUICK_LAYERS
    expected = {"name", "valid", "complete", "energy_pj", "mac_pj", "noc_pj", "bus_pj", "static_pj",
                "latency_cycles", "compute_cycles", "utilization", "bound_by", "work", "noc_hops",
                "bound_energy_pj", "bound_cycles", "bound_binding", "gap_energy", "gap_cycles",
                "REGF_energy_pj", "REGF_occupancy_bytes", "GBUF_energy_pj", "GBUF_occupancy_bytes",
                "DRAM_energy_pj", "DRAM_occupancy_bytes"}   # the quickstart hardware's three levels
    for row in rows:
        assert set(row) == expected
        assert all(not isinstance(v, (dict, list)) for v in row.values())   # flat: a DataFrame takes it as is
        assert row["valid"] and row["energy_pj"] > 0 and row["latency_cycles"] > 0
        assert 0 < row["utilization"] <= 1
        # a lower bound (docs/directives.md §14)
        assert row["energy_pj"] >= row["bound_energy_pj"] > 0 and row["gap_energy"] >= 0


def test_out_writes_what_the_result_holds(tmp_path, quick):
    out = tmp_path / "out"
    result = dflc.compile(*quick, out=out)
    assert json.loads((out / "report.json").read_text()) == result.report
    assert (out / "schedule.dfl").read_text() == result.schedule_text
    assert sorted(p for p in result.files if p.startswith("plots/")) == \
        sorted("plots/" + p.name for p in (out / "plots").iterdir())


def test_includes_and_a_schedule_string(tmp_path):
    # Imports in a string resolve against its path's directory, then the includes.
    text = 'import "net.dfl";\nimport "hw.dfl";\nschedule for quicknet on quick_node {\n}\n'
    schedule = dflc.Schedule.from_string(text, path=str(tmp_path / "s.dfl"))
    with pytest.raises(dflc.Error) as info:
        dflc.compile(schedule=schedule, plots=False)
    assert "E0101" in [d.code for d in info.value.errors]   # not found next to s.dfl
    result = dflc.compile(schedule=schedule, includes=[QUICK], plots=False)
    assert [row["name"] for row in result.layers] == QUICK_LAYERS


def test_simulate_runs_the_compiled_schedule(tmp_path, quick):
    result = dflc.compile(*quick, plots=False, simulate=True)
    sim = result.simulation
    assert sim.ok and [row["layer"] for row in sim.layers] == QUICK_LAYERS
    assert all(row["output"] == "equal" for row in sim.layers)
    # simulate() runs a complete schedule the sources declare: the one just written.
    out = tmp_path / "out"
    dflc.compile(*quick, plots=False, out=out)
    again = dflc.simulate(dflc.Schedule.from_file(str(out / "schedule.dfl")), layers=["pool1"])
    assert again.ok and [row["output"] for row in again.layers if row["layer"] == "pool1"] == ["equal"]


def test_bad_options():
    with pytest.raises(ValueError, match="objective"):
        dflc.compile(schedule=dflc.Schedule.from_string("", path="x.dfl"), objective="speed")
    with pytest.raises(ValueError, match="batch"):
        dflc.check(dflc.Schedule.from_string("", path="x.dfl"), batch=0)
    with pytest.raises(TypeError):
        dflc.check("net.dfl")


def test_threads_compile_at_once_as_one_by_one(quick):
    # The GIL is released during the stages: points compiled on threads at
    # once give the reports compiled one after another give.
    import concurrent.futures
    net, hw = quick
    capacities = ["16 KiB", "32 KiB", "64 KiB", "256 KiB"]

    def report(capacity):
        return dflc.compile(net, hw.with_level("GBUF", capacity=capacity), plots=False).report

    one_by_one = [report(c) for c in capacities]
    with concurrent.futures.ThreadPoolExecutor(len(capacities)) as pool:
        assert list(pool.map(report, capacities)) == one_by_one
