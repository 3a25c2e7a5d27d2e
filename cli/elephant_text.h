#pragma once
// How tectl shows a plan's elephant allocation (get plan): a line for the
// whole, a table row per priority class (objective, load, and protection),
// and for each protected class that is not failure-safe, why. Pure.
#include <string>

#include "geodesic/v1/plan.pb.h"

namespace geodesic::cli {

// Empty when the plan allocated no elephant flows.
std::string ElephantAllocationText(const v1::ElephantAllocation& elephants);

}  // namespace geodesic::cli
