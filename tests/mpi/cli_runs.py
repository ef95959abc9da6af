#!/usr/bin/python3
"""`mpirun -np P adi3d run DECK` as a user runs it, against the one-rank run of the same deck:
the summary's errors, every snapshot field in snapshots.h5 and the checkpoint (written by all
ranks together through parallel HDF5) agree within 1e-12 (double), a diffusivity formula's
alpha field too; the VTK pieces under each .pvti hold the snapshots' values and ParaView reads
the series; a checkpoint written on P ranks restarts on another count and ends where
the uninterrupted run ends; and the bad cases (more ranks than planes, fewer GPUs than
ranks, the direct Poisson solve, a damaged checkpoint plane that only one rank reads) give
one line and the same non-zero exit on every rank;
Poisson's auto takes the ADI iteration on several ranks; SIGTERM to one rank stops
every rank at the same step with a checkpoint that continues to the same end; a fault on
one rank ends every rank with one line, and its last checkpoint continues to the same end.

usage: cli_runs.py ADI3D MPIEXEC SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

try:
    import h5py
    import numpy as np
except ImportError as e:  # ADI3D_NO_PARAVIEW=1 leaves python3-h5py out of setup-deps
    print(f"skipped: {e} (apt-get install python3-h5py)")
    sys.exit(77)

adi3d, mpiexec, source, work = sys.argv[1:5]
deck = os.path.join(source, "inputs", "heat_output.ini")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", ADI3D_RTC_CACHE="off")
failures = []


def run(ranks, out, *sets, check=True):
    command = ([mpiexec, "-np", str(ranks), "--oversubscribe"] if ranks > 1 else []) + [
        adi3d, "run", deck, "--quiet", "--set", f"output.dir={out}", "--set", "solver.backend=cpu",
        "--set", "grid.n=13 12 17", "--set", "time.t_end=0.05"] + [a for s in sets for a in ("--set", s)]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def expect(condition, what):
    print(("ok      " if condition else "FAILED  ") + what)
    if not condition:
        failures.append(what)


def fields(path):
    """Every dataset by path, through the links to the snapshot files (visititems does not follow them)."""
    out = {}

    def walk(group, prefix):
        for name, obj in group.items():
            if isinstance(obj, h5py.Dataset):
                out[prefix + name] = np.array(obj)
            else:
                walk(obj, prefix + name + "/")

    with h5py.File(path, "r") as f:
        walk(f, "")
    return out


def same_fields(a, b, what, tolerance=1e-12):
    fa, fb = fields(a), fields(b)
    expect(sorted(fa) == sorted(fb), f"{what}: the same datasets ({len(fa)})")
    expect(any(name.split("/")[-1] == "u" for name in fa), f"{what}: u is among them")
    worst = 0.0
    for name in fa:
        if name in fb and fa[name].dtype.kind == "f":
            scale = max(1.0, float(np.max(np.abs(fb[name]))))
            worst = max(worst, float(np.max(np.abs(fa[name] - fb[name]))) / scale)
    expect(worst <= tolerance, f"{what}: largest relative difference {worst:.2e} <= {tolerance:.0e}")


shutil.rmtree(work, ignore_errors=True)
one = os.path.join(work, "one")
run(1, one)
summary_one = json.load(open(os.path.join(one, "summary.json")))
for ranks in (2, 3, 4):
    out = os.path.join(work, f"np{ranks}")
    result = run(ranks, out)
    summary = json.load(open(os.path.join(out, "summary.json")))
    expect(summary["ranks"] == ranks, f"{ranks} ranks: the summary says {summary['ranks']} ranks")
    for norm in ("l2", "max"):
        a, b = summary["error"][norm], summary_one["error"][norm]
        expect(abs(a - b) <= 1e-12 * abs(b), f"{ranks} ranks: {norm} error {a:.15e} against {b:.15e}")
    expect(result.stdout.count("summary\n") == 1, f"{ranks} ranks: one summary printed (rank 0's)")
    same_fields(os.path.join(out, "snapshots.h5"), os.path.join(one, "snapshots.h5"), f"{ranks} ranks, snapshots.h5")
    same_fields(os.path.join(out, "checkpoint.h5"), os.path.join(one, "checkpoint.h5"), f"{ranks} ranks, checkpoint")
    expect(os.path.exists(os.path.join(out, "snapshots.xdmf")), f"{ranks} ranks: snapshots.xdmf written")

# Each rank wrote its planes into the one snapshots.h5 (parallel HDF5) and its piece of each
# VTK image; the .pvti joins the pieces. VTK's own reader of the .pvti (ParaView's) gives
# every value of the same run's snapshots.h5, exactly, on the whole grid.
try:
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXML import vtkXMLPImageDataReader
except ImportError:
    vtkXMLPImageDataReader = None


def pieces_equal_hdf5(out, what):
    if vtkXMLPImageDataReader is None:
        print(f"skipped {what}: no VTK Python modules (python3-vtk9)")
        return
    with h5py.File(os.path.join(out, "snapshots.h5"), "r") as f:
        snapshots = {name: {k: np.array(v) for k, v in g.items()} for name, g in f["snapshots"].items()}
        nx, ny, nz = (int(v) for v in f.attrs["shape"])
    pvtis = sorted(n for n in os.listdir(os.path.join(out, "vtk")) if n.endswith(".pvti"))
    expect(len(pvtis) == len(snapshots), f"{what}: a .pvti per snapshot ({len(pvtis)} for {len(snapshots)})")
    for name in pvtis:
        reader = vtkXMLPImageDataReader()
        reader.SetFileName(os.path.join(out, "vtk", name))
        reader.Update()
        image = reader.GetOutput()
        expect(list(image.GetDimensions()) == [nx, ny, nz], f"{what} {name}: dimensions {image.GetDimensions()}")
        stored = snapshots[name[len("snapshot_"):-len(".pvti")]]
        for field, values in stored.items():
            array = image.GetPointData().GetArray(field)
            got = vtk_to_numpy(array).reshape(nz, ny, nx) if array is not None else None
            expect(got is not None and np.array_equal(got, values), f"{what} {name}: '{field}' as in snapshots.h5")


def paraview_reads(out, what):
    """ParaView's readers (tests/io/paraview_check.py under pvbatch) on a run's XDMF and PVD."""
    expected = {"xdmf": "snapshots.xdmf", "pvd": "snapshots.pvd", "steps": [], "times": []}
    with h5py.File(os.path.join(out, "snapshots.h5"), "r") as f:
        expected.update(shape=[int(v) for v in f.attrs["shape"]], origin=[float(v) for v in f.attrs["origin"]],
                        spacing=[float(v) for v in f.attrs["spacing"]])
        for name, group in sorted(f["snapshots"].items(), key=lambda item: int(item[1].attrs["step"])):
            step = int(group.attrs["step"])
            expected["steps"].append(step)
            expected["times"].append(float(group.attrs["time"]))
            expected["fields"] = sorted(group.keys())
            for field in group:
                np.asarray(group[field], dtype="<f8").tofile(os.path.join(out, f"{field}_{step:06d}.bin"))
    json.dump(expected, open(os.path.join(out, "expected.json"), "w"))
    command = [os.path.join(source, "scripts", "pvbatch"), os.path.join(source, "tests", "io", "paraview_check.py"),
               os.path.join(out, "expected.json"), os.path.join(out, "slice.png")]
    # A second try only where pvbatch died before the check said anything: its virtual
    # display, started beside another test's (as tests/io/test_paraview.cpp does).
    for _ in range(2):
        result = subprocess.run(command, capture_output=True, text=True)
        log = result.stdout + result.stderr
        if result.returncode in (0, 77) or "paraview_check:" in log:
            break
    if result.returncode == 77:
        print(f"skipped {what}: {result.stderr.strip()}")
        return
    expect(result.returncode == 0 and "paraview_check: xdmf ok" in log and "paraview_check: pvd ok" in log,
           f"{what}: ParaView reads the XDMF and the .pvti series ({log.strip()[:1500]})")


pieces_equal_hdf5(os.path.join(work, "np3"), "3 ranks, VTK pieces")
pieces_equal_hdf5(os.path.join(work, "np4"), "4 ranks, VTK pieces")
paraview_reads(os.path.join(work, "np3"), "3 ranks")

# A diffusivity formula, sampled where each rank's backend is (its slab at the whole grid's
# coordinates), written as the alpha field from every rank's planes: as on one rank.
alpha_sets = ("material.diffusivity=formula 1 + 0.5*x*z", "output.fields=u error alpha")
run(1, os.path.join(work, "alpha1"), *alpha_sets)
run(3, os.path.join(work, "alpha3"), *alpha_sets)
alpha_one = os.path.join(work, "alpha1", "snapshots.h5")
expect(any(name.endswith("/alpha") for name in fields(alpha_one)), "a diffusivity formula's alpha field is written")
same_fields(os.path.join(work, "alpha3", "snapshots.h5"), alpha_one, "3 ranks, a diffusivity formula's snapshots.h5")

# Compressed snapshots (output.compression) written by 3 ranks together: the values of the one-rank
# uncompressed series, read back through HDF5's filters.
run(3, os.path.join(work, "gzip3"), "output.compression=gzip:1")
same_fields(os.path.join(work, "gzip3", "snapshots.h5"), os.path.join(one, "snapshots.h5"), "3 ranks, gzip snapshots.h5")
# A double run's fields stored as float32 and compressed: HDF5 converts only in independent
# writes and filters only in collective ones, so each rank converts its planes first.
float_sets = ("output.precision=float", "output.compression=gzip:1")
run(1, os.path.join(work, "float1"), *float_sets)
run(3, os.path.join(work, "float3"), *float_sets)
# Values 1e-12 apart in double may round to neighbouring floats: one float32 step apart.
same_fields(os.path.join(work, "float3", "snapshots.h5"), os.path.join(work, "float1", "snapshots.h5"),
            "3 ranks, float32 gzip snapshots.h5 of a double run", tolerance=2 ** -23)

# A checkpoint of 3 ranks (step 5 of 10: t_end halved) continued on 3, 2 and 1 ranks; on 3
# the final checkpoint's u is the uninterrupted 3-rank run's (step 10) bit for bit.
half = os.path.join(work, "half")
run(3, half, "time.t_end=0.025", "output.formats=hdf5", "output.checkpoint_every=5")
for ranks in (3, 2, 1):
    resumed = os.path.join(work, f"resumed{ranks}")
    shutil.copytree(half, resumed)
    command = ([mpiexec, "-np", str(ranks), "--oversubscribe"] if ranks > 1 else []) + [
        adi3d, "run", deck, "--quiet", "--restart", os.path.join(resumed, "checkpoint.h5"), "--set",
        f"output.dir={resumed}", "--set", "solver.backend=cpu", "--set", "grid.n=13 12 17", "--set",
        "time.t_end=0.05", "--set", "output.formats=hdf5", "--set", "output.checkpoint_every=5"]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    expect(result.returncode == 0, f"restart on {ranks} rank(s) of a 3-rank checkpoint exits 0 ({result.stderr.strip()[:200]})")
    if result.returncode == 0:
        a = json.load(open(os.path.join(resumed, "summary.json")))["error"]["l2"]
        expect(abs(a - summary_one["error"]["l2"]) <= 1e-12 * summary_one["error"]["l2"],
               f"restart on {ranks} rank(s): l2 error {a:.15e} equals the uninterrupted run's")
    if result.returncode == 0 and ranks == 3:
        with h5py.File(os.path.join(resumed, "checkpoint.h5"), "r") as f, \
                h5py.File(os.path.join(work, "np3", "checkpoint.h5"), "r") as g:
            expect(int(f.attrs["step"]) == int(g.attrs["step"]) == 10 and np.array_equal(f["u"][()], g["u"][()]),
                   "restart on 3 ranks of a 3-rank checkpoint: u at step 10 bit for bit the uninterrupted run's")

# Each rank reads only its planes of a checkpoint, each checked against its checksum: one
# bit flipped in the last plane (rank 2's of 3) stops every rank with one line naming the
# plane, exit 2, nothing written.
damaged = os.path.join(work, "damaged")
shutil.copytree(half, damaged)
checkpoint = os.path.join(damaged, "checkpoint.h5")
with h5py.File(checkpoint, "r") as f:
    offset, shape = f["u"].id.get_offset(), f["u"].shape
with open(checkpoint, "r+b") as f:
    f.seek(offset + ((shape[0] - 1) * shape[1] * shape[2] + 5) * 8)
    byte = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([byte[0] ^ 0x10]))
before = sorted(os.listdir(damaged))
result = subprocess.run([mpiexec, "-np", "3", "--oversubscribe", adi3d, "run", deck, "--quiet", "--restart", checkpoint,
                         "--set", f"output.dir={damaged}", "--set", "solver.backend=cpu", "--set", "grid.n=13 12 17",
                         "--set", "time.t_end=0.05", "--set", "output.formats=hdf5"],
                        env=env, capture_output=True, text=True, timeout=300)
lines = [l for l in result.stderr.splitlines() if l.startswith("adi3d")]
expect(result.returncode == 2, f"a damaged plane on rank 2 of 3: exit 2 (got {result.returncode})")
expect(len(lines) == 1 and f"in plane z = {shape[0] - 1}" in lines[0],
       f"a damaged plane on rank 2 of 3: one line naming the plane: {lines}")
expect(sorted(os.listdir(damaged)) == before, "a damaged plane: nothing written in the output directory")

# SIGTERM to one rank only (a scheduler that signals the ranks): every rank stops after
# the same step, writes the checkpoint, exits 143 with one restart line; the run
# continued from it on 2 ranks ends where the uninterrupted run ends.
def long_run(out, *extra):
    return [mpiexec, "-np", "2", "--oversubscribe", adi3d, "run", deck, "--quiet", "--set", f"output.dir={out}",
            "--set", "solver.backend=cpu", "--set", "grid.n=21 21 24", "--set", "time.dt=0.0001", "--set",
            "time.t_end=0.4", "--set", "output.formats=hdf5", "--set", "output.interval=0.1",
            "--set", "output.checkpoint_every=0"] + list(extra)


def ranks_of(mpirun_pid):
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == mpirun_pid:
                        children.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return children


whole = os.path.join(work, "whole")
subprocess.run(long_run(whole), env=env, capture_output=True, text=True, check=True)
stopped = os.path.join(work, "stopped")
job = subprocess.Popen(long_run(stopped), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
for _ in range(200):  # until the snapshot of t = 0 is indexed: the ranks have set up
    if os.path.exists(os.path.join(stopped, "snapshots.xdmf")):
        break
    time.sleep(0.05)
ranks = ranks_of(job.pid)
expect(len(ranks) == 2, f"mpirun started 2 ranks ({ranks})")
if ranks:
    os.kill(max(ranks), signal.SIGTERM)
out, err = job.communicate(timeout=300)
lines = [l for l in err.splitlines() if l.startswith("adi3d: stopped")]
expect(job.returncode == 143, f"SIGTERM to one rank: mpirun exits 143 (got {job.returncode}: {err.strip()[-300:]})")
expect(len(lines) == 1 and "--restart" in lines[0], f"one restart line: {lines}")
checkpoint = os.path.join(stopped, "checkpoint.h5")
expect(os.path.exists(checkpoint), "the checkpoint is written")
if os.path.exists(checkpoint):
    with h5py.File(checkpoint, "r") as f:
        step = int(f.attrs["step"])
    expect(0 < step < 4000, f"stopped at step {step}, before the end")
    result = subprocess.run(long_run(stopped, "--restart", checkpoint), env=env, capture_output=True, text=True)
    expect(result.returncode == 0, f"the 2-rank restart exits 0 ({result.stderr.strip()[:200]})")
    if result.returncode == 0:
        a = json.load(open(os.path.join(stopped, "summary.json")))["error"]["l2"]
        b = json.load(open(os.path.join(whole, "summary.json")))["error"]["l2"]
        expect(abs(a - b) <= 1e-12 * b, f"the continued run's l2 error {a:.15e} equals the uninterrupted {b:.15e}")

# A fault on one rank only (ADI3D_FAULT=step:N@1, as a failing node would): every rank
# ends at once (no rank waits for the lost one), exit 1, one error line naming the rank
# and the step; the last complete checkpoint restarts and ends where the uninterrupted
# run ends.
faulted = os.path.join(work, "faulted")
job = subprocess.run(["timeout", "300"] + long_run(faulted, "--set", "time.t_end=0.01", "--set",
                                                   "output.checkpoint_every=20"),
                     env=dict(env, ADI3D_FAULT="step:57@1"), capture_output=True, text=True)
lines = [l for l in job.stderr.splitlines() if l.startswith("adi3d")]
expect(job.returncode == 1, f"a fault on rank 1: mpirun exits 1 (got {job.returncode}: {job.stderr.strip()[-300:]})")
expect(len(lines) == 1 and lines[0].startswith("adi3d: rank 1 of 2: error: in step 57 of 100") and
       "injected by ADI3D_FAULT=step:57@1" in lines[0] and "--restart" in lines[0],
       f"a fault on rank 1: one line naming the rank, the step and how to continue: {lines}")
checkpoint = os.path.join(faulted, "checkpoint.h5")
if os.path.exists(checkpoint):
    with h5py.File(checkpoint, "r") as f:
        step = int(f.attrs["step"])
    expect(step == 40, f"the last complete checkpoint before the fault is step 40 (got {step})")
    short_whole = os.path.join(work, "short_whole")
    subprocess.run(long_run(short_whole, "--set", "time.t_end=0.01"), env=env, capture_output=True, text=True,
                   check=True)
    result = subprocess.run(long_run(faulted, "--set", "time.t_end=0.01", "--set", "output.checkpoint_every=20",
                                     "--restart", checkpoint), env=env, capture_output=True, text=True)
    expect(result.returncode == 0, f"the restart after the fault exits 0 ({result.stderr.strip()[:200]})")
    if result.returncode == 0:
        a = json.load(open(os.path.join(faulted, "summary.json")))["error"]["l2"]
        b = json.load(open(os.path.join(short_whole, "summary.json")))["error"]["l2"]
        expect(a == b, f"the run continued after the fault: l2 error {a:.17e} equals the uninterrupted {b:.17e}")
else:
    expect(False, "a fault on rank 1 leaves the step-40 checkpoint")

# More ranks than the grid has planes for: a deck error (exit 2) on every rank, one line.
result = run(3, os.path.join(work, "thin"), "grid.n=9 9 5", check=False)
lines = [l for l in result.stderr.splitlines() if l.startswith("adi3d")]
expect(result.returncode == 2, f"3 ranks on 5 planes exit 2 (got {result.returncode})")
expect(len(lines) == 1 and "grid.n" in lines[0] and "at most 2 ranks" in lines[0],
       f"3 ranks on 5 planes: one line naming grid.n and the limit: {lines}")

# Poisson: on several ranks auto takes the ADI iteration (the direct solve runs on one rank,
# where auto takes it), and solver.method = spectral is a deck error, one line, exit 2.
def poisson(ranks, out, *sets):
    command = ([mpiexec, "-np", str(ranks), "--oversubscribe"] if ranks > 1 else []) + [
        adi3d, "run", os.path.join(source, "inputs", "poisson_dirichlet.ini"), "--quiet", "--set",
        f"output.dir={out}", "--set", "solver.backend=cpu", "--set", "grid.n=9 9 12"] + [
        a for s in sets for a in ("--set", s)]
    return subprocess.run(command, env=env, capture_output=True, text=True)


result = poisson(1, os.path.join(work, "poisson_one"))
expect(result.returncode == 0 and "method spectral" in result.stdout, "Poisson on one rank: auto solves directly")
result = poisson(2, os.path.join(work, "poisson_two"))
expect(result.returncode == 0 and "method adi (auto;" in result.stdout,
       f"Poisson on 2 ranks: auto takes adi (exit {result.returncode})")
# Where the ADI iteration diverges (a stack with vias), auto goes on by conjugate gradients,
# on 2 ranks preconditioned by ADI cycles (the direct solve runs on one rank).
result = subprocess.run(([mpiexec, "-np", "2", "--oversubscribe"]) + [
    adi3d, "run", os.path.join(source, "inputs", "chip_vias.ini"), "--quiet", "--set", "solver.method=auto",
    "--set", f"output.dir={os.path.join(work, 'vias_two')}", "--set", "solver.backend=cpu", "--set",
    "grid.n=17 17 21", "--set", "output.formats=none"], env=env, capture_output=True, text=True)
expect(result.returncode == 0 and "the ADI iteration diverged" in result.stdout and
       "conjugate gradients (converged), each preconditioned by a cycle of" in result.stdout,
       f"Poisson on 2 ranks: a diverging ADI iteration gives way to conjugate gradients (exit {result.returncode})")
result = poisson(2, os.path.join(work, "poisson_spectral"), "solver.method=spectral")
lines = [l for l in result.stderr.splitlines() if l.startswith("adi3d")]
expect(result.returncode == 2, f"2 ranks, solver.method = spectral: exit 2 (got {result.returncode})")
expect(len(lines) == 1 and "solver.method" in lines[0] and "one rank" in lines[0],
       f"2 ranks, solver.method = spectral: one line naming solver.method: {lines}")

# solver.backend = cuda with more ranks than GPUs on the node: where there is no GPU (CI).
probe = subprocess.run([adi3d, "info"], env=env, capture_output=True, text=True).stdout
if "CUDA backend not compiled" not in probe and shutil.which("nvidia-smi") is None:
    result = run(2, os.path.join(work, "gpus"), "solver.backend=cuda", check=False)
    lines = [l for l in result.stderr.splitlines() if l.startswith("adi3d")]
    expect(result.returncode == 1, f"2 ranks, no GPU, backend cuda: exit 1 (got {result.returncode})")
    expect(len(lines) == 1 and "GPU" in lines[0], f"2 ranks, no GPU: one line about GPUs: {lines}")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
