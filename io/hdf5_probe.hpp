#pragma once
// Files a user hands to adi3d (a checkpoint to restart from, a field map) are parsed by
// HDF5, and HDF5 1.10 (Debian 12's) has memory errors on some damaged files: fuzzing found
// a use-after-free in its attribute reader within a minute (tests/fuzz). Such a file could
// crash the run, or worse, corrupt its memory. A first look at the file runs in a child
// process: if HDF5 crashes there, the caller reports the file as damaged, in one line,
// and the run's own process never parses it.
#include <functional>
#include <string>

namespace adi3d::io {

// Runs `look` in a forked child. "" when the child finished (whatever `look` threw there:
// the caller's own read reports that), else what stopped it: "a crash (signal 11)", ...
std::string crash_in_child(const std::function<void()>& look);

}  // namespace adi3d::io
