#pragma once
// Writes a topology in the project's own format (see topology/project_reader.h).
#include <string>

#include "topology/inventory.h"

namespace geodesic::topology {

// Renders `topology` as project-format YAML, one flow-style entry per line.
// Every directed link is its own entry (no `reverse`) with latency_us
// explicit; numbers are written in their shortest exact form, so
// ParseTopology(WriteTopologyYaml(t)) == t for every t that ParseTopology
// returns (and for what the importers return). Runtime state the format does
// not carry (link health, admin state other than up, fabric plane health) is
// not written. Pure; thread-compatible.
std::string WriteTopologyYaml(const Topology& topology);

}  // namespace geodesic::topology
