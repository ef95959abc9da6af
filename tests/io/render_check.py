#!/usr/bin/python3
"""CTest io test of scripts/render: render_check.py ADI3D_EXE SOURCE_DIR

Runs a tiny heat deck with the built adi3d into a temporary folder, renders it with
scripts/render at 320 x 240 and checks the PNG (read here with zlib: no imaging module
needed): its size, and that it holds a picture rather than one flat colour. Also checks
render's one-line errors (no snapshots, no such field, no pvbatch). Exits 77 (skipped)
where ParaView is not installed (ADI3D_NO_PARAVIEW=1 in scripts/setup-deps).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
WIDTH, HEIGHT = 320, 240


def fail(message):
    print("render_check: FAIL: " + message)
    sys.exit(1)


def png_pixels(path):
    """(width, height, rows of pixel tuples) of an 8-bit, non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        fail("%s: PNG depth %d, colour type %d, interlace %d not handled here" % (path, depth, colour, interlace))
    raw, stride = zlib.decompress(idat), width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, up_left = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + left) & 255
            elif f == 2:
                line[i] = (line[i] + up) & 255
            elif f == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif f == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
        rows.append([tuple(line[i:i + channels]) for i in range(0, stride, channels)])
        prev = line
    return width, height, rows


def render(source, *args, env=None):
    """scripts/render's exit code and output (it tries again itself when the virtual display fails)."""
    r = subprocess.run([os.path.join(source, "scripts", "render")] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True, env=env)
    return r.returncode, r.stdout


def main():
    exe, source = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="adi3d_render_")
    try:
        # The clear one-line errors, before anything needs ParaView.
        code, out = render(source, work)
        if code != 1 or "holds no snapshots.xdmf or snapshots.pvd" not in out or out.count("\n") != 1:
            fail("an empty directory: exit %d, %r" % (code, out))

        run_dir = os.path.join(work, "run")
        r = subprocess.run([exe, "run", os.path.join(source, "inputs", "heat_sine.ini"), "--set", "grid.n=17",
                            "--set", "time.dt=0.005", "--set", "time.t_end=0.02", "--set", "output.every=2",
                            "--set", "output.formats=hdf5", "--set", "output.dir=" + run_dir,
                            "--set", "solver.backend=cpu"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if r.returncode != 0:
            fail("adi3d run: exit %d\n%s" % (r.returncode, r.stdout))

        code, out = render(source, run_dir, "--field", "nosuch")
        if code != 1 or "render: no field 'nosuch' in " not in out or "(has: u, error)" not in out:
            fail("an unknown field: exit %d, %r" % (code, out))
        code, out = render(source, run_dir, env=dict(os.environ, PATH=os.path.join(work, "empty")))
        if code != SKIP or "pvbatch not found (scripts/setup-deps installs it)" not in out:
            fail("no pvbatch on PATH: exit %d, %r" % (code, out))

        png = os.path.join(work, "pictures", "u.png")
        code, out = render(source, run_dir, "--size", str(WIDTH), str(HEIGHT), "--out", png)
        print(out, end="")
        if code == SKIP:
            return SKIP
        if code != 0:
            fail("render: exit %d" % code)
        if "(u at t = 0.02, step 4)" not in out:
            fail("render did not report the last snapshot (t = 0.02, step 4)")
        if not os.path.isfile(png):
            fail("render wrote no %s" % png)
        width, height, rows = png_pixels(png)
        if (width, height) != (WIDTH, HEIGHT):
            fail("%s is %d x %d, asked for %d x %d" % (png, width, height, WIDTH, HEIGHT))
        colours = {p[:3] for row in rows for p in row}
        # A white page with black text alone has few colours: the coloured slice has many.
        coloured = {c for c in colours if max(c) - min(c) > 40}
        if len(colours) < 2:
            fail("%s is one flat colour %s" % (png, colours.pop()))
        if len(coloured) < 20:
            fail("%s has %d colours, %d of them not grey: no coloured slice" % (png, len(colours), len(coloured)))
        print("render_check: %s is %d x %d with %d colours (%d not grey)"
              % (png, width, height, len(colours), len(coloured)))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
