#!/usr/bin/python3
"""SIGKILL at random moments (issue 40 item 3), and SIGTERM / SIGINT (item 2): a run writing a snapshot every step (HDF5 +
XDMF and VTK) and a checkpoint every 3 steps is killed TRIALS times at a random moment of
its life; after each kill
  - the checkpoint, where one was written, is whole: adi3d restarts from it and steps on;
  - every snapshot snapshots.xdmf names is a complete file of its own that reads in full
    (h5py), and snapshots.h5 links to it;
  - every image snapshots.pvd names exists and VTK's XML reader (ParaView's) reads it;
  - the index names no temporary file.
Kills that left a temporary file (*.tmp) landed inside a write; they are counted. Then
TRIALS / 2 SIGTERMs and SIGINTs at random moments: exit 143 / 130, a checkpoint from which
the run continues to the uninterrupted run's final field, bit for bit.

usage: kill_trials.py ADI3D SOURCE_DIR WORK_DIR [TRIALS]      exit 77: h5py or VTK missing
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

try:
    import h5py
    from vtkmodules.vtkIOXML import vtkXMLImageDataReader
except ImportError as e:
    print(f"skipped: {e} (python3-h5py, python3-vtk9)")
    sys.exit(77)

adi3d, source, work = sys.argv[1:4]
trials = int(sys.argv[4]) if len(sys.argv) > 4 else 50
deck = os.path.join(source, "inputs", "heat_output.ini")
env = dict(os.environ, OMP_NUM_THREADS="1", ADI3D_RTC_CACHE="off")
settings = ["grid.n=21 22 23", "time.dt=0.001", "time.t_end=0.06", "output.interval=0", "output.every=1",
            "output.checkpoint_every=3", "solver.backend=cpu"]
failures = []


def command(out, *extra):
    sets = settings + [f"output.dir={out}"] + list(extra)
    return [adi3d, "run", deck, "--quiet"] + [a for s in sets for a in ("--set", s)]


def fail(trial, what):
    failures.append(f"trial {trial}: {what}")
    print(f"FAILED  trial {trial}: {what}")


def index_root(trial, out, name):
    """The parsed index file, or None where there is none yet or it does not parse."""
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(trial, f"{name} does not parse: {e}")
        return None


def check_xdmf(trial, out):
    root = index_root(trial, out, "snapshots.xdmf")
    if root is None:
        return 0
    items = [item.text.strip() for item in root.iter("DataItem") if item.text and ".h5:" in item.text]
    for item in items:
        file, name = item.split(":", 1)
        path = os.path.join(out, file)
        if file.endswith(".tmp") or not os.path.exists(path):
            fail(trial, f"snapshots.xdmf names {file}, which is not there")
            continue
        with h5py.File(path, "r") as f:
            if name not in f:
                fail(trial, f"snapshots.xdmf names {item}, not in {file}")
            elif f[name][()].size == 0:
                fail(trial, f"{item} is empty")
    # The HDF5 index names the same snapshots, and its links lead to them (followed from
    # this process's working directory, not the output directory).
    listed = {file.split("snapshot_")[1].split(".")[0] for file, _ in (i.split(":", 1) for i in items)}
    h5_index = os.path.join(out, "snapshots.h5")
    if os.path.exists(h5_index):
        with h5py.File(h5_index, "r") as f:
            linked = set(f["snapshots"].keys()) if "snapshots" in f else set()
            if listed - linked:
                fail(trial, f"snapshots.h5 does not list {sorted(listed - linked)}, which snapshots.xdmf does")
            for label in listed & linked:
                if f[f"snapshots/{label}/u"][()].size == 0:
                    fail(trial, f"snapshots.h5: /snapshots/{label}/u is empty")
    elif items:
        fail(trial, "snapshots.xdmf lists snapshots, and there is no snapshots.h5")
    return len(items)


def check_pvd(trial, out):
    root = index_root(trial, out, "snapshots.pvd")
    if root is None:
        return 0
    files = [d.get("file") for d in root.iter("DataSet")]
    for name in files:
        image = os.path.join(out, name)
        if name.endswith(".tmp") or not os.path.exists(image):
            fail(trial, f"snapshots.pvd names {name}, which is not there")
            continue
        reader = vtkXMLImageDataReader()
        reader.SetFileName(image)
        reader.Update()
        data = reader.GetOutput()
        if data.GetNumberOfPoints() != 21 * 22 * 23 or data.GetPointData().GetArray("u") is None:
            fail(trial, f"{name}: VTK reads {data.GetNumberOfPoints()} points and arrays "
                        f"{[data.GetPointData().GetArrayName(i) for i in range(data.GetPointData().GetNumberOfArrays())]}")
    return len(files)


def check_checkpoint(trial, out):
    path = os.path.join(out, "checkpoint.h5")
    if not os.path.exists(path):
        return False
    with h5py.File(path, "r") as f:
        step = int(f.attrs["step"])
    # One step beyond it, from adi3d's own reader (the checksums of every plane).
    t_end = f"time.t_end={(step + 1) * 0.001:.6f}"
    resumed = os.path.join(out, "resumed")
    result = subprocess.run(command(resumed, t_end, "output.formats=none") + ["--restart", path],
                            env=env, capture_output=True, text=True)
    if result.returncode != 0:
        fail(trial, f"restart from the checkpoint of step {step} exits {result.returncode}: {result.stderr.strip()}")
    return True


# How long a whole run takes here, to draw the kill moments from.
shutil.rmtree(work, ignore_errors=True)
start = time.monotonic()
subprocess.run(command(os.path.join(work, "whole")), env=env, check=True, capture_output=True)
whole = time.monotonic() - start
rng = random.Random(int(os.environ.get("ADI3D_KILL_SEED", "20261127")))
inside_a_write = checkpoints = snapshots = 0
for trial in range(trials):
    out = os.path.join(work, f"trial{trial:02d}")
    process = subprocess.Popen(command(out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0.02, whole))
    process.send_signal(signal.SIGKILL)
    process.wait()
    leftovers = [n for _, _, names in os.walk(out) for n in names if n.endswith(".tmp")]
    inside_a_write += bool(leftovers)
    snapshots += check_xdmf(trial, out) > 0
    check_pvd(trial, out)
    checkpoints += check_checkpoint(trial, out)
    shutil.rmtree(out, ignore_errors=True)

print(f"kill_trials: {trials} kills over a run of {whole:.2f} s; {inside_a_write} inside a write (a .tmp left); "
      f"{checkpoints} after a checkpoint (each restarted), {snapshots} after a snapshot")

# SIGTERM and SIGINT at random moments (issue 40 item 2): the run finishes its step, writes
# the checkpoint and exits 143 / 130 (0 if it had finished); continued from that
# checkpoint it ends on the uninterrupted run's final field, bit for bit.
with h5py.File(os.path.join(work, "whole", "checkpoint.h5"), "r") as f:
    final = f["u"][()]
    final_step = int(f.attrs["step"])


def catches(pid, sig):
    """Whether the process has a handler for sig (its SigCgt mask in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return (int(line.split()[1], 16) >> (sig - 1)) & 1 == 1
    except OSError:
        pass
    return False


stopped_early = 0
for trial in range(trials // 2):
    out = os.path.join(work, f"term{trial:02d}")
    sig, code = (signal.SIGTERM, 143) if trial % 2 == 0 else (signal.SIGINT, 130)
    process = subprocess.Popen(command(out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Before main() runs (the loader mapping the libraries, some tens of ms) a signal kills
    # any program: the moments are drawn from when adi3d's handlers are in place.
    while not catches(process.pid, sig) and process.poll() is None:
        time.sleep(0.001)
    time.sleep(rng.uniform(0.0, whole))
    process.send_signal(sig)
    got = process.wait()
    if got not in (code, 0):
        fail(f"signal {trial}", f"{sig.name} made the run exit {got}, not {code}")
        continue
    stopped_early += got == code
    checkpoint = os.path.join(out, "checkpoint.h5")
    if got == code:
        result = subprocess.run(command(out) + ["--restart", checkpoint], env=env, capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"signal {trial}", f"the restart exits {result.returncode}: {result.stderr.strip()}")
            continue
    with h5py.File(checkpoint, "r") as f:
        if int(f.attrs["step"]) != final_step or not (f["u"][()] == final).all():
            fail(f"signal {trial}", f"{sig.name}: the continued run's final field differs from the uninterrupted run's")
    shutil.rmtree(out, ignore_errors=True)
print(f"kill_trials: {trials // 2} SIGTERM/SIGINT at random moments, {stopped_early} stopped the run early; each "
      f"continued to the uninterrupted run's final field bit for bit; {len(failures)} failures")
sys.exit(1 if failures else 0)
