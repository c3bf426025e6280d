# lit configuration for dflc's end-to-end tests.
import os
import lit.formats

config.name = "dflc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".dfl"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "expect_exit.py", "same_totals.py", "check_macs.py", "verdict_pieces.py", "all_stdlib.py", "bounds_hold.py",
                   "check_coverage.py", "check_diag_formats.py", "check_objectives.py", "check_fmt_roundtrip.py",
                   "check_self_contained.py", "plant_tree.py", "sim_stdlib.py", "same_under_load.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dflc_build_root, "tests", "lit")

config.substitutions.append(("%dflc", config.dflc))
config.substitutions.append(("%onnxpython", config.onnx_python))   # with python3-onnx and numpy
config.substitutions.append(("%python", config.python))
# Where the dflc under test finds its stdlib: next to itself, <exe>/../share/dflc
# (build/share/dflc/stdlib links to the source stdlib/). The tests rely on that
# lookup rather than passing -I: it is the lookup an installed dflc makes.
# (Before %stdlib, which it begins with.)
config.substitutions.append(("%stdlibroot", os.path.join(config.dflc_build_root, "share", "dflc")))
config.substitutions.append(("%stdlib", os.path.join(config.dflc_src_root, "stdlib")))
config.substitutions.append(("%examples", os.path.join(config.dflc_src_root, "examples")))
config.substitutions.append(("%srcroot", config.dflc_src_root))
config.substitutions.append(("%benchdir", os.path.join(config.dflc_build_root, "bench")))
config.substitutions.append(("FileCheck", config.filecheck))
# split-file --leading-lines: many small inputs in one test, line numbers kept for [[@LINE]].
config.substitutions.append(("split-file", config.split_file))
# %exit N CMD...: CMD must exit with exactly N.
config.substitutions.append(("%exit", config.python + " " + os.path.join(os.path.dirname(__file__), "expect_exit.py")))
# Run from a clean environment: no colour, no search roots from DFLC_PATH.
config.environment["NO_COLOR"] = "1"
config.environment.pop("DFLC_PATH", None)
