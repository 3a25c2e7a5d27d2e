#pragma once
// The elephant classes' policies as pathcomp's config and drill files write
// them (pathcomp/service/pathcomp_config.h shows the keys):
//   elephant_objectives: [{priority, objective, utilization_target, mlu_slack,
//                          protection, protection_limit}, ...]
//   elephant_default: {objective, ...}   # every class not listed
// Errors go to the reader (with their lines); nothing is read twice.
#include "config/config_reader.h"
#include "pathcomp/solver/mcf_problem.h"

namespace geodesic::pathcomp {

// Reads both keys of `root` into `policies` (absent: the defaults).
void ReadClassPolicies(config::ConfigReader& root, McfClassPolicies& policies);

}  // namespace geodesic::pathcomp
