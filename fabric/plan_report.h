#pragma once
// Text reports of fabric plans for terminals (fabric-plan).
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <string>

#include "fabric/fabric_planner.h"

namespace geodesic::fabric {

// 2048 -> "2,048".
std::string FormatCount(uint64_t value);

// A title line and an aligned table with one column per design (two tiers, three
// tiers), one row per quantity; a tier a design lacks shows "-". Both plans are
// expected to share radix, planes and nics_per_gpu.
std::string FormatPlanTable(const PlanResult& two_tier, const PlanResult& three_tier);

// The answer of CompareTierVsPlanes as a title, an aligned table (one row per
// design: planes, GPUs, switches, links, hops, whether it reaches the target) and
// a one-line verdict.
std::string FormatComparison(const TierVsPlanes& comparison);

}  // namespace geodesic::fabric
