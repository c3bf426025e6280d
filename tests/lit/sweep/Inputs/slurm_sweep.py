"""Runs `dflc sweep SPEC -o OUT --slurm --submit` on a real single-node Slurm
that it starts (munged, slurmctld, slurmd: Debian's slurm-wlm and munge),
waits for the job array and the merge job, and stops the cluster.

usage: slurm_sweep.py DIR DFLC SPEC OUT [dflc sweep options...]
Prints dflc's output, then "slurm: job array and merge job done". Exits 1 on
any failure, with the daemons' logs on stderr.

The cluster's sockets (munge's, slurmstepd's in the spool) must fit the
107 bytes of a Unix socket path whatever the clone's path: its state lives
in a short directory under /tmp, removed at the end; DIR gets the config
and the daemons' logs. Timeouts are sized for a loaded 2-core machine.
"""
import atexit, os, shutil, socket, subprocess, sys, tempfile, time

work, dflc, spec, out = [os.path.abspath(a) if i != 1 else a for i, a in enumerate(sys.argv[1:5])]
extra = sys.argv[5:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
short = tempfile.mkdtemp(prefix="dflc-slurm-", dir="/tmp")
for d in ("state", "spool", "munge"):
    os.makedirs(os.path.join(short, d))
os.chmod(os.path.join(short, "munge"), 0o700)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


host = socket.gethostname().split(".")[0]
key, sock = os.path.join(short, "munge", "munge.key"), os.path.join(short, "munge", "munge.socket")
with open(key, "wb") as f:
    f.write(os.urandom(1024))
os.chmod(key, 0o400)
conf = os.path.join(work, "slurm.conf")
with open(conf, "w") as f:
    f.write(f"""ClusterName=dflctest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
StateSaveLocation={short}/state
SlurmdSpoolDir={short}/spool
SlurmctldPidFile={work}/slurmctld.pid
SlurmdPidFile={work}/slurmd.pid
SlurmctldLogFile={work}/slurmctld.log
SlurmdLogFile={work}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldParameters=enable_configless
NodeName=dflcnode NodeHostname={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=dflc Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
env = dict(os.environ, SLURM_CONF=conf)
daemons = []
submitted = []   # job ids, cancelled if this script ends before they do


def logs():
    for name in ("munged.log", "slurmctld.log", "slurmd.log"):
        p = os.path.join(work, name)
        if os.path.exists(p):
            sys.stderr.write(f"--- {name}\n" + open(p).read()[-3000:])


def stop():
    """Idempotent; also run at exit, so that no path out leaves a job, a daemon or /tmp behind."""
    if submitted and daemons:
        subprocess.run(["scancel"] + submitted, env=env, capture_output=True, timeout=60)
        submitted.clear()
    for p in reversed(daemons):   # the ones started here, by their ids
        p.terminate()
    for p in daemons:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    daemons.clear()
    shutil.rmtree(short, ignore_errors=True)


atexit.register(stop)


def fail(message):
    sys.stderr.write(f"slurm_sweep: {message}\n")
    logs()
    stop()
    sys.exit(1)


def wait_for(what, check, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return
        time.sleep(0.2)
    fail(f"timed out waiting for {what}")


daemons.append(subprocess.Popen(["munged", "-F", "--force", f"--key-file={key}", f"--socket={sock}",
                                 f"--pid-file={short}/munge/munged.pid", f"--seed-file={short}/munge/seed",
                                 f"--log-file={work}/munged.log"], stderr=subprocess.DEVNULL))
wait_for("munged", lambda: os.path.exists(sock), 120)
daemons.append(subprocess.Popen(["slurmctld", "-D", "-i", "-f", conf], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL))
daemons.append(subprocess.Popen(["slurmd", "-D", "-N", "dflcnode", "-f", conf], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL))


def node_idle():
    r = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], env=env, capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() == "idle"


wait_for("the node to come up idle", node_idle, 300)
run = subprocess.run([dflc, "sweep", spec, "-o", out, "--slurm", "--submit"] + extra, env=env, capture_output=True,
                     text=True)
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
if run.returncode != 0:
    fail(f"dflc sweep --slurm --submit exited {run.returncode}")
jobs = run.stdout.split("submitted job array ")[1].split()
array, merge = jobs[0], jobs[4]
submitted += [array, merge]


def done():
    r = subprocess.run(["squeue", "-h", "-j", f"{array},{merge}"], env=env, capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() == ""


wait_for("the job array and the merge job", done, 1800)
submitted.clear()
stop()
print("slurm: job array and merge job done")
