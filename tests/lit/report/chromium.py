#!/usr/bin/env python3
"""Debian's chromium, headless, on a local page, for the report tests
(tests/lit/report; scripts/install-deps.sh installs chromium):

    chromium.py dump-dom PAGE                      the DOM after the page's scripts ran, on stdout
    chromium.py screenshot PAGE PNG WIDTH HEIGHT   a PNG of the page in a WIDTH x HEIGHT window

As root in a container chromium's sandbox cannot start, so --no-sandbox;
--disable-gpu and --disable-dev-shm-usage because a container has neither a
GPU nor a large /dev/shm. Each run gets a fresh profile, removed after it.
chromium's own chatter on stderr (D-Bus, its launcher script) is shown only
when it fails. A missing chromium is an error, never a skip: CI installs it."""
import os
import shutil
import subprocess
import sys
import tempfile

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
         "--hide-scrollbars", "--force-device-scale-factor=1"]


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("dump-dom", "screenshot"):
        sys.exit(__doc__)
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        sys.exit("chromium.py: chromium is not installed (scripts/install-deps.sh installs it)")
    url = "file://" + os.path.abspath(sys.argv[2])
    profile = tempfile.mkdtemp(prefix="dflc-chromium-")
    try:
        argv = [exe] + FLAGS + ["--user-data-dir=" + profile]
        if sys.argv[1] == "dump-dom":
            argv += ["--dump-dom", url]
        else:
            png, width, height = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
            argv += ["--screenshot=" + os.path.abspath(png), "--window-size=%d,%d" % (width, height), url]
        run = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if run.returncode != 0 or (sys.argv[1] == "dump-dom" and not run.stdout.strip()):
        sys.stderr.write(run.stderr.decode(errors="replace"))
        sys.exit("chromium.py: chromium exited %d" % run.returncode)
    sys.stdout.buffer.write(run.stdout)


if __name__ == "__main__":
    main()
