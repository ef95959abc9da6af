# Run by pvbatch (tests/io/test_paraview.cpp): ParaView's own readers open the XDMF and
# PVD series the solver wrote; the array names, shapes, geometry, time values and every
# value must match what the solver stored (exported by the test as raw float64 files);
# then a slice is rendered to PNG. Exits non-zero with a message on the first mismatch.
import json
import os
import sys

import numpy as np
from paraview import servermanager
from paraview.simple import (ColorBy, GetActiveViewOrCreate, OpenDataFile, PVDReader, Render, ResetCamera,
                             SaveScreenshot, Show, Slice, UpdatePipeline, Xdmf3ReaderS)
from vtkmodules.util.numpy_support import vtk_to_numpy

expected = json.load(open(sys.argv[1]))
base = os.path.dirname(os.path.abspath(sys.argv[1]))
png = sys.argv[2]
nx, ny, nz = expected["shape"]


def fail(message):
    print("paraview_check: " + message)
    sys.exit(1)


def image_of(reader, t):
    reader.UpdatePipeline(t)
    data = servermanager.Fetch(reader)
    if data.IsA("vtkMultiBlockDataSet"):  # some readers wrap the grid in a block
        data = data.GetBlock(0)
    return data


def check(kind, reader):
    reader.UpdatePipeline(expected["times"][0])
    times = list(reader.TimestepValues) if len(expected["times"]) > 1 else [expected["times"][0]]
    if not np.allclose(times, expected["times"], rtol=0, atol=1e-15):
        fail("%s: time values %s, expected %s" % (kind, times, expected["times"]))
    names = [reader.PointData.GetArray(i).GetName() for i in range(reader.PointData.GetNumberOfArrays())]
    if sorted(names) != sorted(expected["fields"]):
        fail("%s: arrays %s, expected %s" % (kind, names, expected["fields"]))
    for t, step in zip(expected["times"], expected["steps"]):
        image = image_of(reader, t)
        if list(image.GetDimensions()) != [nx, ny, nz]:
            fail("%s step %d: dimensions %s, expected %s" % (kind, step, image.GetDimensions(), [nx, ny, nz]))
        if not np.allclose(image.GetOrigin(), expected["origin"], rtol=0, atol=1e-14):
            fail("%s: origin %s, expected %s" % (kind, image.GetOrigin(), expected["origin"]))
        if not np.allclose(image.GetSpacing(), expected["spacing"], rtol=1e-14, atol=0):
            fail("%s: spacing %s, expected %s" % (kind, image.GetSpacing(), expected["spacing"]))
        for field in expected["fields"]:
            got = vtk_to_numpy(image.GetPointData().GetArray(field)).astype(np.float64)
            want = np.fromfile(os.path.join(base, "%s_%06d.bin" % (field, step)), dtype="<f8")
            if got.shape != want.shape or not np.array_equal(got, want):
                fail("%s step %d: values of '%s' differ from the solver's (max diff %g)"
                     % (kind, step, field, np.max(np.abs(got - want)) if got.shape == want.shape else -1))
    print("paraview_check: %s ok (%d times, arrays %s)" % (kind, len(times), sorted(names)))


xdmf = Xdmf3ReaderS(FileName=[os.path.join(base, expected["xdmf"])])
check("xdmf", xdmf)
pvd = PVDReader(FileName=os.path.join(base, expected["pvd"]))
check("pvd", pvd)
if OpenDataFile(os.path.join(base, expected["xdmf"])) is None:
    fail("OpenDataFile cannot open the .xdmf")

# A slice through the middle of the box at the last time, coloured by u.
view = GetActiveViewOrCreate("RenderView")
view.ViewSize = [400, 300]
view.ViewTime = expected["times"][-1]
cut = Slice(Input=xdmf)
cut.SliceType.Origin = [expected["origin"][a] + 0.5 * expected["spacing"][a] * (expected["shape"][a] - 1)
                        for a in range(3)]
cut.SliceType.Normal = [0, 0, 1]
display = Show(cut, view)
ColorBy(display, ("POINTS", "u"))
ResetCamera(view)
Render(view)
SaveScreenshot(png, view, ImageResolution=[400, 300])
print("paraview_check: slice rendered to " + png)
