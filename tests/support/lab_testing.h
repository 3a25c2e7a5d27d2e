#pragma once
// Test-only support for the tests that run a LocalLab: the lab set up the way
// tests want it (probes off unless a test is about probing). Waiting for the
// lab is sim::LabClient's (sim/lab_client.h); PKIs are sim::RunMakePki's;
// directories and paths are tests/support/test_dirs.h's.
#include <string>

#include "sim/lab_client.h"
#include "sim/local_lab.h"
#include "sim/make_pki.h"
#include "tests/support/test_dirs.h"

namespace geodesic::testing {

// Lab options for the backbone in `work_dir`: the real daemons of this build,
// link health from the agents' static source (no probes: a loaded machine's
// probe flaps would re-plan under the test).
sim::LabOptions LabOptionsFor(const std::string& work_dir, const std::string& topology_path = Backbone());

}  // namespace geodesic::testing
