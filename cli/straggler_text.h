#pragma once
// How tectl words a chain's straggler (explain chain, get stragglers). Hops
// are shown 1-based as in explain's HOP column; the API's `hop` (and a
// service report's) is 0-based.
#include <string>

#include "geodesic/v1/operator.pb.h"

namespace geodesic::cli {

// "measured by link probes", "measured by the caller", ...
std::string NetworkSourceText(v1::NetworkSource source);
// "hop 2 retriever@chi, network +14.2 ms over plan (measured by link probes)"
std::string StragglerText(const v1::Straggler& straggler);

}  // namespace geodesic::cli
