"""Starts `DFLC sweep SPEC -o OUT --progress`, kills it with SIGTERM once OUT
has N finished points, and prints how many it had then and once the sweep
had ended (its workers end with it: no point is finished after the kill),
and whether that is fewer than TOTAL.

usage: kill_halfway.py N TOTAL DFLC SPEC OUT
"""
import os, signal, subprocess, sys, time

n, total, (dflc, spec, out) = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:6]
points = os.path.join(out, "points")


def finished():
    return len([f for f in os.listdir(points) if f.endswith(".json")]) if os.path.isdir(points) else 0


sweep = subprocess.Popen([dflc, "sweep", spec, "-o", out, "--progress"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
deadline = time.time() + 120
while finished() < n and sweep.poll() is None and time.time() < deadline:
    time.sleep(0.02)
if sweep.poll() is not None:
    sys.exit(f"kill_halfway: the sweep ended (exit {sweep.returncode}) before {n} points were finished")
sweep.send_signal(signal.SIGTERM)
status = sweep.wait()
at_kill = finished()
time.sleep(1)   # a worker outliving the sweep would finish its point by now
print(f"killed by signal {-status} with {at_kill} points finished; {finished()} a second later; "
      + ("fewer" if at_kill < total else "not fewer") + f" than {total}")
