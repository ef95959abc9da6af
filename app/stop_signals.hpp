#pragma once
// SIGTERM and SIGINT as a request to stop: a batch scheduler sends SIGTERM before its
// wall-time kill, a user presses Ctrl-C. The first signal only sets a flag, which the run
// loop reads once per step (stop_agreement.hpp) so that the run ends at a step boundary
// with a checkpoint; a second signal ends the process at once (_exit), leaving the last
// complete checkpoint, because checkpoints are replaced by rename (io/checkpoint.hpp).

namespace adi3d::app {

// Installs the handlers (idempotent). Until then the signals keep their default action.
void install_stop_handlers();

// The first stop signal received (SIGTERM or SIGINT), 0 while none came.
int stop_signal();

// The shell's code for a process ended by `signal`: 128 + signal (143 SIGTERM, 130 SIGINT).
int exit_code_for(int signal);

// "SIGTERM", "SIGINT", else "a signal".
const char* signal_name(int signal);

}  // namespace adi3d::app
