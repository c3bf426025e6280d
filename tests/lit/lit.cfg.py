# lit configuration for dflc's end-to-end tests.
import os
import lit.formats

config.name = "dflc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".dfl"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "expect_exit.py", "same_totals.py", "check_macs.py", "all_stdlib.py",
                   "check_coverage.py", "check_diag_formats.py", "check_fmt_roundtrip.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dflc_build_root, "tests", "lit")

config.substitutions.append(("%dflc", config.dflc))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%stdlib", os.path.join(config.dflc_src_root, "stdlib")))
config.substitutions.append(("%examples", os.path.join(config.dflc_src_root, "examples")))
config.substitutions.append(("%srcroot", config.dflc_src_root))
config.substitutions.append(("FileCheck", config.filecheck))
# split-file --leading-lines: many small inputs in one test, line numbers kept for [[@LINE]].
config.substitutions.append(("split-file", config.split_file))
# %exit N CMD...: CMD must exit with exactly N.
config.substitutions.append(("%exit", config.python + " " + os.path.join(os.path.dirname(__file__), "expect_exit.py")))
# Run from a clean environment: no colour, a fixed stdlib root.
config.environment["NO_COLOR"] = "1"
config.environment.pop("DFLC_STDLIB", None)
