#!/bin/sh
# Runs a script under ParaView's pvbatch; exits 77 (test skipped) when pvbatch or
# ParaView's Python modules are absent. Debian's python3-paraview conflicts with
# python3-vtk9 (needed by libvtk9-dev), so scripts/setup-deps unpacks it into
# /opt/adi3d-paraview instead; ADI3D_PARAVIEW_PYTHON overrides that location.
command -v pvbatch >/dev/null 2>&1 || { echo "run_pvbatch: pvbatch not found"; exit 77; }
prefix=${ADI3D_PARAVIEW_PYTHON:-/opt/adi3d-paraview/usr/lib/python3/dist-packages}
if [ -d "$prefix/paraview" ]; then
  PYTHONPATH="$prefix${PYTHONPATH:+:$PYTHONPATH}"
  export PYTHONPATH
elif [ ! -d /usr/lib/python3/dist-packages/paraview ]; then
  echo "run_pvbatch: ParaView's Python modules not found (scripts/setup-deps installs them)"
  exit 77
fi
# pvbatch renders through X here: use a virtual display when there is none, on a display
# number of our own (xvfb-run -a races when several test runs start at once).
if [ -z "$DISPLAY" ]; then
  command -v xvfb-run >/dev/null 2>&1 || { echo "run_pvbatch: no DISPLAY and no xvfb-run"; exit 77; }
  n=$((100 + $$ % 800))
  while [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
  exec xvfb-run -n "$n" -s "-nolisten tcp -screen 0 640x480x24" timeout 300 pvbatch "$@"
fi
exec timeout 300 pvbatch "$@"
