#pragma once
// How tectl shows the impact of a change (operator.proto Impact), for
// `whatif` and the drain pre-check: a summary, then one section per kind of
// consequence, each only when there is something in it.
#include <string>

#include "geodesic/v1/operator.pb.h"

namespace geodesic::cli {

std::string ImpactText(const v1::Impact& impact);

}  // namespace geodesic::cli
