# The ParaView pipeline of scripts/render, run by pvbatch (scripts/pvbatch):
#   render_paraview.py KIND SERIES FIELD TIME STEP AXIS WIDTH HEIGHT CONTOURS TITLE OUT
# KIND is xdmf or pvd. scripts/render has checked the series, the time and the field.
# Draws the mid-plane normal to AXIS coloured by FIELD at TIME, CONTOURS iso-lines of the
# field on it, a colour bar and the time, seen straight on, and saves OUT (PNG).
import math
import sys

from paraview.simple import (Contour, GetActiveViewOrCreate, GetColorTransferFunction, GetScalarBar, PVDReader,
                             Render, SaveScreenshot, Show, Slice, Text, Xdmf3ReaderS)

kind, series, field, time, step, axis, width, height, n_contours, title, out = sys.argv[1:12]
time, step, width, height, n_contours = float(time), int(step), int(width), int(height), int(n_contours)
a = "xyz".index(axis)
BLACK = [0.0, 0.0, 0.0]
SCALE = min(width / 800.0, height / 600.0)  # the layout is drawn for 800 x 600


def font(points):
    return max(7, int(round(points * SCALE)))


def fail(message):
    print("render: " + message)
    sys.exit(1)


def nice_levels(lo, hi, n):
    """At most n round values strictly inside (lo, hi): multiples of 1, 2, 2.5 or 5 times a power of ten."""
    if n <= 0 or not hi > lo:
        return []
    raw = (hi - lo) / (n + 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step_ = min(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(lo / step_) + 1
    levels = [k * step_ for k in range(first, first + n + 3)]
    margin = 1e-9 * (hi - lo)
    return [v for v in levels if lo + margin < v < hi - margin]


reader = Xdmf3ReaderS(FileName=[series]) if kind == "xdmf" else PVDReader(FileName=series)
reader.UpdatePipeline(time)
b = reader.GetDataInformation().GetBounds()
lo3, hi3 = [b[0], b[2], b[4]], [b[1], b[3], b[5]]
center = [0.5 * (lo3[i] + hi3[i]) for i in range(3)]
normal = [1.0 if i == a else 0.0 for i in range(3)]

view = GetActiveViewOrCreate("RenderView")
view.ViewSize = [width, height]
view.ViewTime = time
view.OrientationAxesVisibility = 0
if hasattr(view, "UseColorPaletteForBackground"):  # ParaView >= 5.10
    view.UseColorPaletteForBackground = 0
view.Background = [1.0, 1.0, 1.0]

cut = Slice(Input=reader)
cut.SliceType = "Plane"
cut.SliceType.Origin = center
cut.SliceType.Normal = normal
cut.UpdatePipeline(time)
array = cut.PointData[field] if field in cut.PointData.keys() else None
if array is None:
    fail("the slice has no point field '%s'" % field)
vmin, vmax = array.GetRange()

# Colours: a diverging map centred on zero for fields of both signs, else viridis.
lut = GetColorTransferFunction(field)
signed = vmin < 0 < vmax
lut.ApplyPreset("Cool to Warm" if signed else "Viridis (matplotlib)", True)
if signed:
    m = max(-vmin, vmax)
    lo, hi = -m, m
elif vmax > vmin:
    lo, hi = vmin, vmax
else:  # a constant plane: widen the range a little so the map is defined
    pad = 0.5 * abs(vmin) if vmin != 0 else 0.5
    lo, hi = vmin - pad, vmax + pad
lut.RescaleTransferFunction(lo, hi)
if hasattr(lut, "AutomaticRescaleRangeMode"):
    lut.AutomaticRescaleRangeMode = "Never"

display = Show(cut, view)
display.ColorArrayName = ["POINTS", field]
display.LookupTable = lut
display.Ambient, display.Diffuse = 1.0, 0.0  # unlit: the colours of the bar exactly
display.SetScalarBarVisibility(view, True)
bar = GetScalarBar(lut, view)
bar.Title = field
bar.ComponentTitle = ""
bar.TitleColor = BLACK
bar.LabelColor = BLACK
bar.TitleFontSize = font(20)
bar.LabelFontSize = font(16)
bar.TitleBold = 1
bar.ScalarBarLength = 0.72
bar.ScalarBarThickness = font(20)
bar.WindowLocation = "Any Location"
bar.Orientation = "Vertical"
bar.Position = [0.85, 0.14]  # beside the plane, which spans 0.14 to 0.86 of the height
bar.HorizontalTitle = 1
bar.AddRangeLabels = 1
bar.RangeLabelFormat = "%-#.3g"
bar.DrawTickMarks = 1

levels = nice_levels(vmin, vmax, n_contours)
if levels:
    lines = Contour(Input=cut)
    lines.ContourBy = ["POINTS", field]
    lines.Isosurfaces = levels
    lines.ComputeScalars = 0
    lines_display = Show(lines, view)
    lines_display.ColorArrayName = ["POINTS", ""]
    lines_display.AmbientColor = lines_display.DiffuseColor = [0.1, 0.1, 0.1] if signed else [1.0, 1.0, 1.0]
    lines_display.LineWidth = 2.0
    lines_display.RenderLinesAsTubes = 0

# Axes with the plane's coordinates.
grid = view.AxesGrid
grid.Visibility = 1
for name in ("X", "Y", "Z"):
    vertical = name == ("Y" if a == 2 else "Z")  # its title needs spaces to keep off the labels
    setattr(grid, name + "Title", name.lower() + ("    " if vertical else ""))
    setattr(grid, name + "TitleColor", BLACK)
    setattr(grid, name + "LabelColor", BLACK)
    setattr(grid, name + "TitleFontSize", font(18))
    setattr(grid, name + "LabelFontSize", font(14))
grid.GridColor = [0.55, 0.55, 0.55]
grid.ShowGrid = 0
grid.AxesToLabel = 7  # the lower edges only (MIN_X | MIN_Y | MIN_Z)

caption = Text(Text="%s%s on the plane %s = %.4g" % (title + ": " if title else "", field, axis, center[a]))
caption_display = Show(caption, view)
caption_display.WindowLocation = "Upper Center"
caption_display.FontSize = font(20)
caption_display.Color = BLACK
clock = Text(Text="t = %.6g   (step %d)" % (time, step))
clock_display = Show(clock, view)
clock_display.WindowLocation = "Lower Left Corner"
clock_display.FontSize = font(18)
clock_display.Color = BLACK

# Straight on, with the plane's first axis to the right: looking down z with y up, along
# -x with z up (y to the right), along +y with z up (x to the right).
up = [0.0, 1.0, 0.0] if a == 2 else [0.0, 0.0, 1.0]
toward = {0: [1.0, 0.0, 0.0], 1: [0.0, -1.0, 0.0], 2: [0.0, 0.0, 1.0]}[a]
size = max(hi3[i] - lo3[i] for i in range(3))
view.CameraFocalPoint = center
view.CameraPosition = [center[i] + 4.0 * size * toward[i] for i in range(3)]
view.CameraViewUp = up
view.CameraParallelProjection = 1
# Fit the plane with room for the title, the colour bar and the axis labels.
rest = [i for i in range(3) if i != a]
extent_w, extent_h = hi3[rest[0]] - lo3[rest[0]], hi3[rest[1]] - lo3[rest[1]]
usable_w, usable_h = 0.62 * width, 0.72 * height
scale = max(extent_w / usable_w, extent_h / usable_h)  # world units per pixel
view.CameraParallelScale = 0.5 * height * scale
# Shift the plane left of centre, away from the colour bar.
shift = 0.07 * width * scale
right = [1.0 if i == rest[0] else 0.0 for i in range(3)]
view.CameraFocalPoint = [center[i] + shift * right[i] for i in range(3)]
view.CameraPosition = [view.CameraFocalPoint[i] + 4.0 * size * toward[i] for i in range(3)]
Render(view)
SaveScreenshot(out, view, ImageResolution=[width, height], TransparentBackground=0)
print("render: wrote " + out)
