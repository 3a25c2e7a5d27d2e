#pragma once
// What drills add to a topology, seeded: elephant flows from a gravity model,
// agent chains over generated services, and DC fabrics for facilities that
// have none. The same seed
// gives the same workloads on every machine (the generator draws from
// std::mt19937_64 directly, whose sequence the standard fixes).
// Pure: no I/O, no clock.
#include <cstdint>

#include "sim/drill/drill_spec.h"
#include "topology/inventory.h"

namespace geodesic::sim {

// Multiplies every elephant flow's demand by `scale`.
void ScaleDemands(double scale, topology::Topology& topology);

// `flows` elephant flows "grav-<n>" between facilities with prefixes, pairs
// drawn with probability proportional to the product of the facilities'
// backbone capacity, `total_gbps` shared in the same proportion.
void AddGravityFlows(const GravityFlows& gravity, uint64_t seed, topology::Topology& topology);

// `services` services "svc-<n>" with `replicas` distinct facilities each, and
// `count` chains "chain-<n>" from a random facility calling min_hops..max_hops
// random services.
void AddChains(const GeneratedChains& chains, uint64_t seed, topology::Topology& topology);

// A fabric for every facility without one: `planes` identical two-layer
// leaf-spine planes, one leaf per rail with 32 servers each (non-blocking),
// 400G ports; the backbone uplink `uplink_gbps`, or when 0 the facility's
// backbone link capacity.
void AddFabrics(const GeneratedFabrics& fabrics, topology::Topology& topology);

}  // namespace geodesic::sim
