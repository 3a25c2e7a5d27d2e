#pragma once
// Work shared out to threads, for the solvers asked to use more than one.
// Internal to pathcomp/solver.
#include <functional>

namespace geodesic::pathcomp::internal {

// Calls work(t) for every t in [0, threads): t = 0 on the calling thread,
// each other on a thread of its own, all joined before it returns (at least
// work(0) runs). What a call throws (std::bad_alloc) is caught on its thread
// and rethrown on the calling one once all have joined: the lowest t's.
void OnThreads(int threads, const std::function<void(int)>& work);

}  // namespace geodesic::pathcomp::internal
