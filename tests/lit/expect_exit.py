#!/usr/bin/env python3
"""Usage: expect_exit.py CODE CMD ARGS... -- runs CMD, passes its output through,
and fails unless it exits with exactly CODE (lit's `not` only knows nonzero)."""
import subprocess
import sys

want = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:])
if proc.returncode != want:
    sys.stderr.write(f"expect_exit: {sys.argv[2]} exited with {proc.returncode}, expected {want}\n")
    sys.exit(1)
