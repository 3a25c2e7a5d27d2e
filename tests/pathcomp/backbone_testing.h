#pragma once
// A generated backbone for the shortest-path tests: a synthetic WAN with
// parallel links, about one link in twelve down and one in five in a
// shared-risk group (of four). Test-only.
#include <cstdint>
#include <random>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/snapshot.h"
#include "topology/synthetic_wan.h"

namespace geodesic::pathcomp::testing {

inline ModelView GeneratedBackbone(uint64_t seed, uint32_t facilities) {
  auto topology = topology::GenerateSyntheticWan({.seed = seed, .facilities = facilities, .parallel_fraction = 0.3});
  EXPECT_TRUE(topology.ok()) << topology.status();
  ModelView view;
  view.facilities = topology->facilities;
  view.nodes = topology->nodes;
  view.links = topology->links;
  std::mt19937 random(static_cast<uint32_t>(seed));
  for (auto& link : view.links) {
    link.mutable_health()->set_state(random() % 12 == 0 ? v1::OPER_STATE_DOWN : v1::OPER_STATE_UP);
    if (random() % 5 == 0) link.add_srlgs(absl::StrCat("conduit-", random() % 4));
  }
  return view;
}

}  // namespace geodesic::pathcomp::testing
