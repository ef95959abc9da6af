#!/bin/sh
# Runs a script under ParaView's pvbatch, headless (scripts/pvbatch); exits 77 (test
# skipped) when pvbatch or ParaView's Python modules are absent.
exec "$(dirname "$0")/../../scripts/pvbatch" "$@"
