// RoundTripBlocks answers as shortest paths computed afresh under each
// failure: every block (from each facility as an origin, and from each
// service to each service) of generated backbones with parallel links,
// links down, shared-risk groups and services sharing replicas, under every
// facility, link and SRLG failure in turn. A block the failure is said to
// leave alone must keep every unfailed round trip, so this also checks the
// failures each block is marked with. And blocks are not used where a
// chain's sums could reach their "no way" value.
#include "pathcomp/solver/internal/round_trip_blocks.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/pathcomp/backbone_testing.h"

namespace geodesic::pathcomp::internal {
namespace {

constexpr uint64_t kFar = RoundTripBlocks::kFar;

// A generated backbone (its link latencies times `latency_scale`) with six
// services and a chain calling them all.
ModelView Backbone(uint64_t seed, uint64_t latency_scale) {
  ModelView view = testing::GeneratedBackbone(seed, 20);
  for (auto& link : view.links) link.set_latency_us(link.latency_us() * latency_scale);
  std::mt19937 random(static_cast<uint32_t>(seed) + 1);
  // Services of one to four replicas, often at the same facilities.
  for (int s = 0; s < 6; ++s) {
    v1::Service& service = view.services.emplace_back();
    service.set_id(absl::StrCat("svc-", s));
    service.set_service_time_us(100 * (1 + random() % 5));
    const int replicas = 1 + static_cast<int>(random() % 4);
    for (int r = 0; r < replicas; ++r) {
      service.add_replica_facility_ids(view.facilities[random() % 8].id());
    }
  }
  v1::Workload& chain = view.workloads.emplace_back();
  chain.set_id("chain");
  chain.mutable_chain()->set_origin_facility_id(view.facilities[0].id());
  for (int s = 0; s < 6; ++s) chain.mutable_chain()->add_service_ids(absl::StrCat("svc-", s));
  chain.mutable_chain()->set_latency_budget_us(1'000'000);
  return view;
}

// The round trip between two facilities under `failure`, from shortest
// paths computed afresh; kFar with no way, or at a failed facility.
uint64_t ExpectedRoundTrip(const Snapshot& snapshot, const Exclusion& failure, int a, int b) {
  if (a == failure.facility || b == failure.facility) return kFar;
  if (a == b) return 0;
  const uint64_t there = ShortestPaths::Run(snapshot, a, failure).distance_us[b];
  const uint64_t back = ShortestPaths::Run(snapshot, b, failure).distance_us[a];
  return there == kUnreachable || back == kUnreachable ? kFar : there + back;
}

TEST(RoundTripBlocksTest, AnswersAsShortestPathsUnderEveryFailure) {
  size_t changed = 0, kept = 0;
  for (uint64_t seed : {3u, 11u, 29u}) {
    const Snapshot snapshot = Snapshot::Build(Backbone(seed, 1));
    const FailureIds ids(snapshot);
    RoundTripBlocks blocks(snapshot, ids);
    ASSERT_TRUE(blocks.usable());
    // Every block, with the facilities of its rows and columns.
    struct Numbered {
      int block;
      std::vector<int> rows, columns;
    };
    std::vector<Numbered> all;
    for (int service = 0; service < snapshot.service_count(); ++service) {
      const std::vector<int>& columns = snapshot.service(service).facilities;
      for (int origin = 0; origin < snapshot.facility_count(); ++origin) {
        all.push_back({blocks.FirstCall(origin, service), {origin}, columns});
      }
      for (int previous = 0; previous < snapshot.service_count(); ++previous) {
        all.push_back({blocks.LaterCall(previous, service), snapshot.service(previous).facilities, columns});
      }
    }
    FailureDistances paths(snapshot, nullptr);
    blocks.Prepare(paths, 2);
    for (const Numbered& block : all) {
      const uint64_t* unfailed = blocks.Unfailed(block.block);
      for (size_t i = 0; i < block.rows.size(); ++i) {
        for (size_t j = 0; j < block.columns.size(); ++j) {
          ASSERT_EQ(unfailed[i * block.columns.size() + j],
                    ExpectedRoundTrip(snapshot, Exclusion{}, block.rows[i], block.columns[j]));
        }
      }
    }
    RoundTripBlocks::UnderFailure under;
    for (int id = 0; id < ids.size(); ++id) {
      const Exclusion failure = ids.At(id).AsExclusion();
      paths.SetFailure(failure);
      under.Start(blocks, paths, id, failure.facility, static_cast<uint32_t>(id + 1));
      for (const Numbered& block : all) {
        const uint64_t* got = under.RoundTrips(block.block);
        (under.MayChange(block.block) ? changed : kept) += 1;
        for (size_t i = 0; i < block.rows.size(); ++i) {
          for (size_t j = 0; j < block.columns.size(); ++j) {
            ASSERT_EQ(got[i * block.columns.size() + j],
                      ExpectedRoundTrip(snapshot, failure, block.rows[i], block.columns[j]))
                << "seed " << seed << ", failure " << id << ", block " << block.block << ", pair " << i << " " << j;
          }
        }
      }
    }
  }
  // Both kinds of blocks are exercised, most of them left alone.
  EXPECT_GT(changed, 1000u);
  EXPECT_GT(kept, 3 * changed);
}

TEST(RoundTripBlocksTest, NotUsableWhereSumsCouldReachNoWay) {
  // Link latencies near 2^56 microseconds: a chain of six calls could add up
  // past kFar.
  const Snapshot huge = Snapshot::Build(Backbone(3, uint64_t{1} << 48));
  const FailureIds ids(huge);
  RoundTripBlocks blocks(huge, ids);
  EXPECT_FALSE(blocks.usable());
  FailureDistances paths(huge, nullptr);
  blocks.FirstCall(0, 0);
  blocks.Prepare(paths, 1);  // nothing to work out: never read

  const Snapshot usual = Snapshot::Build(Backbone(3, 1));
  const FailureIds usual_ids(usual);
  EXPECT_TRUE(RoundTripBlocks(usual, usual_ids).usable());
}

TEST(RoundTripBlocksTest, NotUsableWhereTheyWouldTakeTooMuchMemory) {
  const Snapshot snapshot = Snapshot::Build(Backbone(3, 1));
  const FailureIds ids(snapshot);
  FailureDistances paths(snapshot, nullptr);
  // Each block's marks take a bit per failure id twice, its round trips 8
  // bytes a pair three times: two blocks fit in this much, every block not.
  RoundTripBlocks blocks(snapshot, ids, 4096);
  blocks.FirstCall(0, 0);
  blocks.LaterCall(0, 1);
  blocks.Prepare(paths, 1);
  EXPECT_TRUE(blocks.usable());
  for (int previous = 0; previous < snapshot.service_count(); ++previous) {
    for (int service = 0; service < snapshot.service_count(); ++service) blocks.LaterCall(previous, service);
  }
  blocks.Prepare(paths, 1);
  EXPECT_FALSE(blocks.usable());
}

}  // namespace
}  // namespace geodesic::pathcomp::internal
