#pragma once
// SVG charts of a drill report, self-contained (no scripts, no fonts
// fetched): what an operator opens in a browser after a drill.
// Pure: strings in, strings out.
#include <string>

#include "geodesic/v1/drill.pb.h"

namespace geodesic::sim {

// Carried demand (share of what could be carried) and the plans' maximum link
// utilization over the drill's time, as step lines, events marked.
std::string TimelineChart(const v1::DrillReport& report);

// The chains' end-to-end latency before the first event and after the last
// plan, as two cumulative distributions.
std::string ChainLatencyChart(const v1::DrillReport& report);

}  // namespace geodesic::sim
