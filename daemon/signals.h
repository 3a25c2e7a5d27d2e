#pragma once
// Orderly shutdown on SIGTERM / SIGINT for daemons that run threads.
namespace geodesic::daemon {

// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts
// afterwards. Call first thing in main().
void BlockTerminationSignals();
// Waits until SIGTERM or SIGINT arrives; returns the signal number.
int WaitForTerminationSignal();

}  // namespace geodesic::daemon
