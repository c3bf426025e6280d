"""examples/python/design_space.ipynb runs top to bottom, its numbers the CLI's.

No Jupyter here: the notebook's code cells run in order in one namespace with
this interpreter, in the notebook's folder, after a check that the file is
nbformat 4 JSON. Each point of its table is then compiled by the CLI from a
copy of the quickstart hardware with the GBUF line rewritten by hand.
"""
import contextlib
import io
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = os.path.join(ROOT, "examples", "python", "design_space.ipynb")
HW = os.path.join(ROOT, "examples", "quickstart", "hw.dfl")
NET = os.path.join(ROOT, "examples", "quickstart", "net.dfl")


def load_notebook():
    nb = json.load(open(NOTEBOOK))
    assert nb["nbformat"] == 4 and isinstance(nb["nbformat_minor"], int)
    assert set(nb) >= {"cells", "metadata"}
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("markdown", "code") and isinstance(cell["source"], list)
        assert isinstance(cell["id"], str)
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
    return nb


def test_notebook_runs_and_matches_the_cli(tmp_path, monkeypatch):
    nb = load_notebook()
    monkeypatch.chdir(os.path.dirname(NOTEBOOK))
    namespace = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                exec(compile("".join(cell["source"]), NOTEBOOK, "exec"), namespace)
    table = namespace["table"]
    assert [row["gbuf"] for row in table] == ["16 KiB", "64 KiB", "256 KiB"]
    assert len(printed.getvalue().splitlines()) == 1 + 3 + 4   # header, 3 points, quicknet's 4 layers
    hw = open(HW).read()
    assert hw.count("capacity = 64 KiB;") == 1   # the GBUF's line, the one rewritten below
    for row in table:
        variant = tmp_path / ("hw-%s.dfl" % row["gbuf"].replace(" ", ""))
        variant.write_text(hw.replace("capacity = 64 KiB;", "capacity = %s;" % row["gbuf"]))
        out = tmp_path / ("out-%s" % row["gbuf"].replace(" ", ""))
        subprocess.run([os.environ["DFLC"], "compile", NET, str(variant), "--no-plots", "-o", str(out)],
                       check=True, capture_output=True)
        totals = json.loads((out / "report.json").read_text())["totals"]
        assert row["energy_uj"] == totals["energy_pj"] / 1e6
        assert row["latency_cycles"] == totals["latency_cycles"]
        assert row["dram_energy_uj"] == totals["levels_pj"]["DRAM"] / 1e6
