// The chain placer (pathcomp/solver/chain_placer.h): optimal against brute
// force on random small backbones, backups that avoid what they protect, and
// the single-facility audit with its reasons.
#include "pathcomp/solver/chain_placer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "pathcomp/solver/chain_plan_proto.h"
#include "pathcomp/solver/plan_builder.h"
#include "site_plan/chain_paths.h"
#include "tests/pathcomp/chain_model_testing.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;
using testing::FirstDifference;
using testing::ModelBuilder;
using testing::RandomPin;

constexpr uint64_t kInf = std::numeric_limits<uint64_t>::max();

// All-pairs distances by Floyd-Warshall: independent of the placer's Dijkstra.
std::vector<std::vector<uint64_t>> AllPairs(const Snapshot& snapshot, int excluded_facility) {
  const int n = snapshot.facility_count();
  std::vector<std::vector<uint64_t>> d(n, std::vector<uint64_t>(n, kInf));
  for (int i = 0; i < n; ++i) d[i][i] = 0;
  for (int l = 0; l < snapshot.link_count(); ++l) {
    if (!snapshot.link_state(l).usable) continue;
    const int s = snapshot.link_src(l), t = snapshot.link_dst(l);
    if (s == excluded_facility || t == excluded_facility) continue;
    d[s][t] = std::min(d[s][t], snapshot.link_state(l).cost_us);
  }
  for (int k = 0; k < n; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (d[i][k] != kInf && d[k][j] != kInf) d[i][j] = std::min(d[i][j], d[i][k] + d[k][j]);
  return d;
}

// The least latency sum over every assignment of replicas, by enumeration.
uint64_t BruteForce(const Snapshot& snapshot, const Chain& chain, int excluded_facility) {
  const auto d = AllPairs(snapshot, excluded_facility);
  uint64_t best = kInf;
  std::function<void(size_t, int, uint64_t)> walk = [&](size_t call, int at, uint64_t total) {
    if (call == chain.services.size()) {
      best = std::min(best, total);
      return;
    }
    const ServiceReplicas& replicas = snapshot.service(chain.services[call]);
    for (int replica : replicas.facilities) {
      if (replica == excluded_facility) continue;
      if (d[at][replica] == kInf || d[replica][at] == kInf) continue;
      walk(call + 1, replica, total + d[at][replica] + d[replica][at] + replicas.service_time_us);
    }
  };
  if (chain.origin != excluded_facility) walk(0, chain.origin, 0);
  return best;
}

// The latency the placement claims, recomputed from its links.
uint64_t Recomputed(const Snapshot& snapshot, const ChainPlacement& placement) {
  uint64_t total = 0;
  for (const ChainHop& hop : placement.hops) {
    for (int link : hop.links_there) total += snapshot.link_state(link).cost_us;
    for (int link : hop.links_back) total += snapshot.link_state(link).cost_us;
    total += hop.service_time_us;
  }
  return total;
}

TEST(ChainPlacerTest, MatchesBruteForceOnRandomBackbones) {
  std::mt19937 random(20261203);
  int compared = 0, unplaceable = 0;
  for (int instance = 0; instance < 60; ++instance) {
    ModelBuilder model;
    const int n = 4 + static_cast<int>(random() % 5);
    for (int f = 0; f < n; ++f) model.Facility(absl::StrCat("f", f));
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        // Sparse, asymmetric: some links only one way.
        if (a != b && random() % 3 == 0) {
          model.Link(absl::StrCat("f", a), absl::StrCat("f", b), 100 + random() % 5000);
        }
      }
    }
    const int services = 2 + static_cast<int>(random() % 4);
    for (int s = 0; s < services; ++s) {
      std::vector<std::string> replicas;
      for (int f = 0; f < n; ++f) {
        if (random() % 3 == 0) replicas.push_back(absl::StrCat("f", f));
      }
      if (replicas.empty()) replicas.push_back(absl::StrCat("f", random() % n));
      model.Service(absl::StrCat("s", s), replicas, random() % 2000);
    }
    for (int c = 0; c < 5; ++c) {
      std::vector<std::string> calls;
      const int length = 1 + static_cast<int>(random() % 5);
      for (int i = 0; i < length; ++i) calls.push_back(absl::StrCat("s", random() % services));
      model.ChainWorkload(absl::StrCat("c", c), absl::StrCat("f", random() % n), calls, 20000);
    }
    const Snapshot snapshot = Snapshot::Build(model.view());
    ChainPlacer placer(snapshot);
    for (const Chain& chain : snapshot.chains()) {
      for (int excluded = -1; excluded < n; ++excluded) {
        SCOPED_TRACE(absl::StrCat("instance ", instance, " chain ", snapshot.workload_id(chain.workload),
                                  " without ", excluded));
        const ChainPlacement placement = placer.Place(chain, Exclusion{.facility = excluded});
        const uint64_t best = BruteForce(snapshot, chain, excluded);
        ASSERT_EQ(placement.placed, best != kInf) << placement.Reason(snapshot, chain);
        if (!placement.placed) {
          ++unplaceable;
          EXPECT_FALSE(placement.Reason(snapshot, chain).empty());
          continue;
        }
        ++compared;
        EXPECT_EQ(placement.total_us, best);
        EXPECT_EQ(Recomputed(snapshot, placement), best);
        EXPECT_EQ(placement.within_budget, best <= chain.budget_us);
        for (int facility : placement.Facilities(snapshot, chain)) EXPECT_NE(facility, excluded);
      }
    }
  }
  // The random instances exercise both outcomes.
  EXPECT_GT(compared, 100);
  EXPECT_GT(unplaceable, 10);
}

// a - b - c in a line, d hanging off b and c; retriever only in c, model in b and d.
class ChainAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* id : {"a", "b", "c", "d"}) model_.Facility(id);
    model_.Fiber("a", "b", 1000, "conduit-ab");
    model_.Fiber("b", "c", 1000);
    model_.Fiber("b", "d", 500);
    model_.Fiber("c", "d", 4000);
    model_.Service("retriever", {"c"}, 100);
    model_.Service("model", {"b", "d"}, 300);
  }
  ModelBuilder model_;
};

TEST_F(ChainAuditTest, PlacesBackupsAndNamesSingleFacilityDependencies) {
  model_.ChainWorkload("ask", "a", {"retriever", "model"}, 100'000);
  model_.Elephant("bulk", "a", 2);  // a -> c: b is the only transit
  const Snapshot snapshot = Snapshot::Build(model_.view());
  ChainPlacer placer(snapshot);
  const ChainPlan plan = placer.PlanAll();
  ASSERT_EQ(plan.primary.size(), 1u);
  const ChainPlacement& primary = plan.primary[0];
  ASSERT_TRUE(primary.placed);
  // a->c->b: rtt(a,c) = 4000, retriever 100; rtt(c,b) = 2000, model 300.
  EXPECT_EQ(primary.total_us, 6400u);
  EXPECT_EQ(snapshot.facility_id(primary.hops[0].replica), "c");
  EXPECT_EQ(snapshot.facility_id(primary.hops[1].replica), "b");

  // Every backup avoids what it protects.
  ASSERT_GT(plan.backup_count(0), 0);
  for (const ChainBackup& backup : plan.backups_of(0)) {
    if (!backup.placement.placed) continue;
    const Chain& chain = snapshot.chains()[0];
    if (backup.failure.kind == ChainFailure::Kind::kFacility) {
      for (int f : backup.placement.Facilities(snapshot, chain)) EXPECT_NE(f, backup.failure.index);
    } else if (backup.failure.kind == ChainFailure::Kind::kLink) {
      for (int l : backup.placement.Links()) EXPECT_NE(l, backup.failure.index);
    }
  }

  std::map<std::string, std::string> reasons;  // "workload@facility" -> reason
  for (const auto& dependency : plan.dependencies) {
    reasons[snapshot.workload_id(dependency.workload) + "@" +
            snapshot.facility_id(dependency.facility)] = dependency.Reason(snapshot);
  }
  EXPECT_THAT(reasons["ask@c"], HasSubstr("service retriever has one replica, in c"));
  EXPECT_THAT(reasons["ask@b"], HasSubstr("facility b is the only transit between a and"));
  EXPECT_THAT(reasons["bulk@b"], HasSubstr("facility b is the only transit between a and c"));
  EXPECT_EQ(reasons.count("ask@d"), 0u);  // the model runs in b or d
  EXPECT_EQ(reasons.size(), 3u);
}

TEST_F(ChainAuditTest, BudgetOnlyMetThroughOneFacilityIsADependency) {
  // Without b, the model runs in d: a->c goes a-b... b is down, so the chain
  // cannot even start; use an origin with two ways out instead.
  model_.Fiber("a", "d", 200);
  model_.Service("tool", {"b", "c"}, 0);
  model_.ChainWorkload("fast", "a", {"tool"}, 2100);  // a<->b rtt 2000 fits; a<->c via d does not
  const Snapshot snapshot = Snapshot::Build(model_.view());
  const ChainPlan plan = ChainPlacer(snapshot).PlanAll();
  ASSERT_TRUE(plan.primary[0].placed);
  EXPECT_TRUE(plan.primary[0].within_budget);
  bool found = false;
  for (const auto& dependency : plan.dependencies) {
    if (snapshot.facility_id(dependency.facility) == "b") {
      found = true;
      EXPECT_THAT(dependency.Reason(snapshot), HasSubstr("over its budget of 2100 us"));
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(ChainAuditTest, ServiceWithoutKnownReplicaCannotBePlaced) {
  model_.Service("ghost", {"nowhere"}, 0);
  model_.ChainWorkload("lost", "a", {"ghost"}, 1000);
  const Snapshot snapshot = Snapshot::Build(model_.view());
  ChainPlacer placer(snapshot);
  const ChainPlacement placement = placer.Place(snapshot.chains()[0]);
  EXPECT_FALSE(placement.placed);
  EXPECT_THAT(placement.Reason(snapshot, snapshot.chains()[0]), HasSubstr("service ghost has no replica in a known facility"));
}

// A pin naming a facility the inventory no longer has (it was removed after
// the pin): no replica the pin allows, said as such, in the primary and in
// PlanAll as in the reference (it once read as "pinned to the failed
// facility" with no failure, naming facility -1).
TEST_F(ChainAuditTest, PinToAFacilityNoLongerKnownBlocksThePlacement) {
  model_.ChainWorkload("pinned", "a", {"retriever", "model"}, 100'000);
  model_.Pin("pinned", {}, {"c", "gone"});
  const Snapshot snapshot = Snapshot::Build(model_.view());
  ASSERT_EQ(snapshot.chains().size(), 1u);
  ChainPlacer placer(snapshot);
  const ChainPlacement placement = placer.Place(snapshot.chains()[0]);
  EXPECT_FALSE(placement.placed);
  EXPECT_EQ(placement.why, ChainUnplacedWhy::kPinBlocks);
  EXPECT_EQ(placement.failed_facility, -1);
  EXPECT_FALSE(placement.Reason(snapshot, snapshot.chains()[0]).empty());
  const ChainPlan plan = placer.PlanAll();
  EXPECT_EQ(plan.primary[0].why, ChainUnplacedWhy::kPinBlocks);
  EXPECT_TRUE(plan == ChainPlacer(snapshot).PlanAllReference());
}

// A random backbone with everything the plan handles: asymmetric links with
// tied latencies, SRLGs, links down, services with unreachable or unknown
// replicas, pinned chains, tight and loose budgets, elephant flows. Chains
// have 1 to `max_calls` calls; links 1 to 4 times `latency_unit_us`.
ModelView RandomModel(std::mt19937& random, int max_calls = 4, uint64_t latency_unit_us = 100) {
  ModelBuilder model;
  const int n = 5 + static_cast<int>(random() % 8);
  auto f = [](int i) { return absl::StrCat("f", i); };
  for (int i = 0; i < n; ++i) model.Facility(f(i));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b || random() % 3 != 0) continue;
      const std::string srlg = random() % 4 == 0 ? absl::StrCat("conduit-", random() % 3) : "";
      model.Link(f(a), f(b), latency_unit_us * (1 + random() % 4), srlg);  // few latencies: many ties
      if (random() % 10 == 0) model.view().links.back().mutable_health()->set_state(v1::OPER_STATE_DOWN);
    }
  }
  const int services = 2 + static_cast<int>(random() % 4);
  for (int s = 0; s < services; ++s) {
    std::vector<std::string> replicas;
    for (int i = 0; i < n; ++i) {
      if (random() % 4 == 0) replicas.push_back(f(i));
    }
    if (replicas.empty()) replicas.push_back(random() % 5 == 0 ? "nowhere" : f(random() % n));
    model.Service(absl::StrCat("s", s), replicas, 50 * (random() % 5));
  }
  const uint64_t budgets[] = {600, 1500, 3000, 100'000};
  for (int c = 0; c < 8; ++c) {
    std::vector<std::string> calls;
    const int length = 1 + static_cast<int>(random() % max_calls);
    for (int i = 0; i < length; ++i) calls.push_back(absl::StrCat("s", random() % services));
    const std::string id = absl::StrCat("c", c);
    model.ChainWorkload(id, f(random() % n), calls, budgets[random() % 4]);
    RandomPin(random, model, id, length, n, 5, 3, 8);
  }
  for (int e = 0; e < 6; ++e) model.Elephant(absl::StrCat("e", e), f(random() % n), static_cast<int>(random() % n));
  return model.view();
}

TEST(ChainPlanTest, PlanAllEqualsTheReferenceOnRandomInstances) {
  std::mt19937 random(20261205);
  size_t backups = 0, unplaced = 0, srlg_backups = 0, pinned = 0, dependencies = 0;
  for (int instance = 0; instance < 150; ++instance) {
    const Snapshot snapshot = Snapshot::Build(RandomModel(random));
    const ChainPlan fast = ChainPlacer(snapshot).PlanAll();
    const ChainPlan reference = ChainPlacer(snapshot).PlanAllReference();
    ASSERT_EQ(FirstDifference(snapshot, fast, reference), "") << "instance " << instance;
    EXPECT_TRUE(fast == reference);
    // What the elephant allocation is given when the backups are placed beside it.
    EXPECT_TRUE(ChainPlacer(snapshot).PlacePrimaries() == reference.primary) << "instance " << instance;
    for (size_t c = 0; c < reference.primary.size(); ++c) {
      pinned += !snapshot.chains()[c].allowed.empty() || !snapshot.chains()[c].pinned_replicas.empty();
      for (const ChainBackup& backup : reference.backups_of(static_cast<int>(c))) {
        ++backups;
        unplaced += !backup.placement.placed;
        srlg_backups += backup.failure.kind == ChainFailure::Kind::kSrlg;
      }
    }
    dependencies += reference.dependencies.size();
  }
  // The instances exercise what they are meant to.
  EXPECT_GT(backups, 2000u);
  EXPECT_GT(unplaced, 100u);
  EXPECT_GT(srlg_backups, 100u);
  EXPECT_GT(pinned, 100u);
  EXPECT_GT(dependencies, 300u);
}

// PlanAll against PlanAllReference on `instances` random backbones with
// chains of up to `max_calls` calls; counted for the chains of at least
// `min_calls` calls: the chains, their backups, the placed ones.
struct ChainCounts {
  size_t chains = 0, backups = 0, placed = 0;
};
void ExpectPlanAllEqualsTheReference(uint32_t seed, int instances, int max_calls, size_t min_calls,
                                     ChainCounts& counts, uint64_t latency_unit_us = 100) {
  std::mt19937 random(seed);
  for (int instance = 0; instance < instances; ++instance) {
    const Snapshot snapshot = Snapshot::Build(RandomModel(random, max_calls, latency_unit_us));
    const ChainPlan fast = ChainPlacer(snapshot).PlanAll();
    const ChainPlan reference = ChainPlacer(snapshot).PlanAllReference();
    ASSERT_EQ(FirstDifference(snapshot, fast, reference), "") << "instance " << instance;
    EXPECT_TRUE(fast == reference);
    for (int c = 0; c < reference.chain_count(); ++c) {
      if (snapshot.chains()[c].services.size() < min_calls) continue;
      ++counts.chains;
      for (int i = 0; i < reference.backup_count(c); ++i) {
        ++counts.backups;
        counts.placed += reference.compact_backup(c, i).placed;
      }
    }
  }
}

// Longer chains: a backup has many layers, and most of their entries are
// kept from the primary's layered graph or left out by the bound the
// primary's surviving hops give (latencies tie often, so a bound or a kept
// entry that ignored a tie would show).
TEST(ChainPlanTest, PlanAllEqualsTheReferenceOnLongChains) {
  ChainCounts counts;
  ExpectPlanAllEqualsTheReference(20261206, 120, 8, 0, counts);
  EXPECT_GT(counts.backups, 3000u);
  EXPECT_GT(counts.placed, 1500u);
}

// Chains of up to 40 calls: past the 32 calls a backup task names one by
// one (`on_path`), where the bound walks every call instead of the named
// ones, and at exactly 32.
TEST(ChainPlanTest, PlanAllEqualsTheReferenceOnChainsPastThirtyTwoCalls) {
  ChainCounts past_32;
  ExpectPlanAllEqualsTheReference(7122026, 25, 40, 32, past_32);
  EXPECT_GT(past_32.chains, 20u);
  EXPECT_GT(past_32.placed, 200u);
}

// Latencies so long that a chain's sums pass 2^62: the backups' searches
// cannot mark "no way" with a sum no chain reaches (RoundTripBlocks::usable),
// and search the primaries' layered graphs instead. A chain whose backup
// detours past 2^62, then random backbones with links of 2^55 us.
TEST(ChainPlanTest, PlanAllEqualsTheReferenceWhereSumsComeNearTheirLimit) {
  // The call runs at b (a round trip of 2^61); with a -> b down, at d
  // (2^62 + 2^58) rather than at b by way of c (2^62 + 2^59).
  ModelBuilder model;
  for (const char* id : {"a", "b", "c", "d"}) model.Facility(id);
  model.Fiber("a", "b", uint64_t{1} << 60);
  model.Fiber("a", "c", uint64_t{7} << 58);
  model.Fiber("c", "b", uint64_t{7} << 58);
  model.Fiber("a", "d", (uint64_t{1} << 61) + (uint64_t{1} << 57));
  model.Service("at-b-or-d", {"b", "d"}, 10);
  model.ChainWorkload("chain", "a", {"at-b-or-d"}, 100);
  const Snapshot snapshot = Snapshot::Build(model.view());
  const ChainPlan plan = ChainPlacer(snapshot).PlanAll();
  ASSERT_EQ(FirstDifference(snapshot, plan, ChainPlacer(snapshot).PlanAllReference()), "");
  size_t past_2_62 = 0;
  for (const ChainBackup& backup : plan.backups_of(0)) {
    past_2_62 += backup.placement.placed && backup.placement.total_us > uint64_t{1} << 62;
  }
  EXPECT_GT(past_2_62, 0u);

  ChainCounts counts;
  ExpectPlanAllEqualsTheReference(20261207, 60, 4, 0, counts, uint64_t{1} << 55);
  EXPECT_GT(counts.backups, 1000u);
  EXPECT_GT(counts.placed, 500u);
}

TEST(ChainPlanTest, ReplanEqualsPlanAllAfterRandomLinkChanges) {
  std::mt19937 random(5122026);
  int incremental = 0, steps = 0;
  for (int instance = 0; instance < 60; ++instance) {
    Snapshot before = Snapshot::Build(RandomModel(random));
    if (before.link_count() == 0) continue;
    ChainPlan plan = ChainPlacer(before).PlanAll();
    for (int step = 0; step < 10; ++step) {
      const int link = static_cast<int>(random() % before.link_count());
      v1::LinkHealth health;
      switch (random() % 5) {
        case 0: case 1: health.set_state(v1::OPER_STATE_DOWN); break;
        case 2: health.set_state(v1::OPER_STATE_UP); break;
        case 3: health.set_state(v1::OPER_STATE_DEGRADED); break;
        default:
          health.set_state(v1::OPER_STATE_UP);
          health.set_rtt_us(2 * 100 * (1 + random() % 6));  // slower or faster than the inventory
      }
      auto after = before.WithLinkHealth({{before.link_id(link), health}});
      ASSERT_TRUE(after.ok()) << after.status();
      const LinkState& was = before.link_state(link);
      const LinkState& now = after->link_state(link);
      incremental += was.usable && (!now.usable || now.cost_us > was.cost_us);
      ++steps;
      ChainPlan replanned = ChainPlacer(*after).Replan(plan, before);
      const ChainPlan full = ChainPlacer(*after).PlanAll();
      ASSERT_EQ(FirstDifference(*after, replanned, full), "")
          << "instance " << instance << " step " << step << ": link " << before.link_id(link) << " "
          << was.usable << "/" << was.cost_us << " -> " << now.usable << "/" << now.cost_us;
      if (step % 3 == 0) {
        ASSERT_EQ(FirstDifference(*after, replanned, ChainPlacer(*after).PlanAllReference()), "");
      }
      plan = std::move(replanned);
      before = *std::move(after);
    }
  }
  EXPECT_GT(incremental, steps / 4);  // most of them link failures or slowdowns
}

// Re-plans place some backups again where they are and drop whole chains'
// others; storage holds at most twice what the plan lists, and the plan
// stays the one a full PlanAll makes, through many link failures in a row.
TEST(ChainPlanTest, ReplansInARowKeepStorageBoundedAndEqualToPlanAll) {
  std::mt19937 random(9122026);
  int compacted = 0, steps = 0;
  for (int instance = 0; instance < 20; ++instance) {
    Snapshot before = Snapshot::Build(RandomModel(random));
    if (before.link_count() == 0) continue;
    ChainPlan plan = ChainPlacer(before).PlanAll();
    for (int step = 0; step < 25; ++step) {
      v1::LinkHealth health;
      health.set_state(step % 6 == 5 ? v1::OPER_STATE_UP : v1::OPER_STATE_DOWN);
      auto after = before.WithLinkHealth({{before.link_id(static_cast<int>(random() % before.link_count())), health}});
      ASSERT_TRUE(after.ok()) << after.status();
      const size_t stored = plan.backups.size();
      ChainPlan replanned = ChainPlacer(*after).Replan(std::move(plan), before);
      ASSERT_EQ(FirstDifference(*after, replanned, ChainPlacer(*after).PlanAll()), "")
          << "instance " << instance << " step " << step;
      EXPECT_LE(replanned.backups.size(), 2 * replanned.total_backups());
      size_t live_changed = 0;
      for (int c = 0; c < replanned.chain_count(); ++c) {
        for (int i = 0; i < replanned.backup_count(c); ++i) {
          const auto& backup = replanned.compact_backup(c, i);
          live_changed += backup.placed ? backup.count : 0;
        }
      }
      EXPECT_LE(replanned.changed.size(), 2 * live_changed);
      compacted += replanned.backups.size() == replanned.total_backups() && stored > replanned.total_backups();
      ++steps;
      plan = std::move(replanned);
      before = *std::move(after);
    }
  }
  EXPECT_GT(steps, 300);
  EXPECT_GT(compacted, 0);  // storage was compacted at least once
}

// Interned paths: one id per distinct link list, 0 for the empty one, ids
// that stay what they were as the table grows.
TEST(ChainPathTableTest, InternsEachPathOnce) {
  ChainPathTable paths;
  EXPECT_EQ(paths.Intern({}), 0);
  std::vector<std::vector<int>> lists;
  std::mt19937 random(3);
  for (int i = 0; i < 500; ++i) {
    std::vector<int> links(1 + random() % 6);
    for (int& link : links) link = static_cast<int>(random() % 40);
    lists.push_back(links);
  }
  std::vector<int> ids;
  for (const auto& links : lists) ids.push_back(paths.Intern(links));
  for (size_t i = 0; i < lists.size(); ++i) {
    EXPECT_EQ(paths.Intern(lists[i]), ids[i]);
    const auto stored = paths.Links(ids[i]);
    EXPECT_EQ(std::vector<int>(stored.begin(), stored.end()), lists[i]);
    for (size_t j = 0; j < i; ++j) EXPECT_EQ(ids[i] == ids[j], lists[i] == lists[j]);
  }
  EXPECT_TRUE(paths.Links(0).empty());
  EXPECT_EQ(paths.Intern(std::vector<int>{1, 2}) == paths.Intern(std::vector<int>{2, 1}), false);
}

// On the wire a backup lists only the calls that differ from the primary;
// with the primary's other hops it is the placer's backup, every failure is
// protected by exactly one entry, and entries are distinct.
TEST(ChainPlanProtoTest, WireBackupsListChangedCallsAndExpandToThePlacersBackups) {
  std::mt19937 random(1552026);
  size_t compared = 0, listed_hops = 0, whole_hops = 0;
  for (int instance = 0; instance < 40; ++instance) {
    const Snapshot snapshot = Snapshot::Build(RandomModel(random));
    const ChainPlan plan = ChainPlacer(snapshot).PlanAll();
    v1::Plan wire;
    AddChainPlan(snapshot, plan, wire);
    ASSERT_EQ(wire.chains_size(), plan.chain_count());
    auto facility_path = [&](const std::vector<int>& links) {
      std::vector<std::string> ids;
      if (!links.empty()) ids.push_back(snapshot.facility_id(snapshot.link_src(links.front())));
      for (int link : links) ids.push_back(snapshot.facility_id(snapshot.link_dst(link)));
      return ids;
    };
    for (int c = 0; c < plan.chain_count(); ++c) {
      const std::string id = snapshot.workload_id(snapshot.chains()[c].workload);
      const v1::ChainPlan* chain = nullptr;
      for (const auto& candidate : wire.chains()) {
        if (candidate.workload_id() == id) chain = &candidate;
      }
      ASSERT_NE(chain, nullptr) << id;
      ASSERT_TRUE(site_plan::ValidateChainPaths(*chain).ok()) << site_plan::ValidateChainPaths(*chain);
      std::set<std::vector<std::string>> paths;  // each once in the chain's table
      for (int p = 1; p < site_plan::ChainPathCount(*chain); ++p) {
        EXPECT_TRUE(paths.insert(site_plan::ChainPathIds(*chain, static_cast<uint32_t>(p))).second)
            << id << ": path " << p << " repeated";
      }
      std::map<std::string, int> backup_of;  // "kind:id" -> backup index
      for (int i = 0; i < plan.backup_count(c); ++i) {
        const ChainFailure failure = plan.compact_backup(c, i).failure;
        const std::string scope = failure.kind == ChainFailure::Kind::kFacility ? snapshot.facility_id(failure.index)
                                  : failure.kind == ChainFailure::Kind::kLink   ? snapshot.link_id(failure.index)
                                                                                : snapshot.srlg_name(failure.index);
        backup_of[absl::StrCat(static_cast<int>(failure.kind), ":", scope)] = i;
      }
      auto kind_of = [](v1::FailureKind kind) {
        return static_cast<int>(kind == v1::FAILURE_KIND_FACILITY ? ChainFailure::Kind::kFacility
                                : kind == v1::FAILURE_KIND_LINK   ? ChainFailure::Kind::kLink
                                                                  : ChainFailure::Kind::kSrlg);
      };
      size_t protects = 0;
      std::set<std::string> entries;
      for (const auto& entry : chain->backups()) {
        EXPECT_TRUE(entries.insert(entry.assignment().SerializeAsString()).second) << id << ": a repeated entry";
        for (const auto& scope : entry.protects()) {
          ++protects;
          auto it = backup_of.find(absl::StrCat(kind_of(scope.kind()), ":", scope.id()));
          ASSERT_NE(it, backup_of.end()) << id << " protects " << scope.id();
          const ChainPlacement want = plan.backup(c, it->second).placement;
          const v1::ChainAssignment& got = entry.assignment();
          ASSERT_EQ(got.placed(), want.placed);
          EXPECT_EQ(got.reason(), want.Reason(snapshot, snapshot.chains()[c]));
          if (!want.placed) continue;
          EXPECT_EQ(got.total_latency_us(), want.total_us);
          EXPECT_EQ(got.within_budget(), want.within_budget);
          std::vector<const v1::ChainHop*> whole;
          for (const auto& hop : chain->primary().hops()) whole.push_back(&hop);
          ASSERT_EQ(whole.size(), want.hops.size());
          for (const auto& hop : got.hops()) {
            ASSERT_LT(hop.call(), whole.size());
            whole[hop.call()] = &hop;
          }
          for (size_t k = 0; k < want.hops.size(); ++k) {
            EXPECT_EQ(whole[k]->replica_facility_id(), snapshot.facility_id(want.hops[k].replica));
            EXPECT_THAT(site_plan::ChainPathIds(*chain, whole[k]->path_there()),
                        ::testing::ElementsAreArray(facility_path(want.hops[k].links_there)));
            EXPECT_THAT(site_plan::ChainPathIds(*chain, whole[k]->path_back()),
                        ::testing::ElementsAreArray(facility_path(want.hops[k].links_back)));
            EXPECT_EQ(whole[k]->network_rtt_us(), want.hops[k].network_rtt_us);
          }
          listed_hops += got.hops_size();
          whole_hops += want.hops.size();
          ++compared;
        }
      }
      EXPECT_EQ(protects, static_cast<size_t>(plan.backup_count(c))) << id;
    }
  }
  EXPECT_GT(compared, 500u);
  // What the compact form is for: these chains have 1 to 4 calls, and a
  // backup lists about half of them.
  EXPECT_LT(listed_hops * 10, whole_hops * 6);
}

TEST(ChainPlanTest, ReplanOfAnotherInventoryIsAFullPlan) {
  std::mt19937 random(77);
  const ModelView view = RandomModel(random);
  const Snapshot first = Snapshot::Build(view);
  const Snapshot second = Snapshot::Build(view);  // same content, separate build
  ChainPlan stale = ChainPlacer(first).PlanAll();
  for (auto& placement : stale.primary) placement.total_us += 1;  // a plan Replan must not trust
  EXPECT_EQ(FirstDifference(second, ChainPlacer(second).Replan(stale, first), ChainPlacer(second).PlanAll()), "");
}

// The planner keeps a ChainPlanCache between plans; its plans must be the
// ones it would build without.
TEST(ChainPlanTest, PlanBuildsWithTheChainCacheEqualThoseWithout) {
  std::mt19937 random(424242);
  int compared = 0;
  for (int instance = 0; instance < 12; ++instance) {
    Snapshot snapshot = Snapshot::Build(RandomModel(random));
    if (snapshot.link_count() == 0) continue;
    ChainPlanCache cache;
    ElephantAllocator cached_allocator(0.1), plain_allocator(0.1);
    for (int step = 0; step < 6; ++step) {
      const BuiltPlan cached = BuildPlan(snapshot, PlanStamp{}, cached_allocator, nullptr, &cache);
      const BuiltPlan plain = BuildPlan(snapshot, PlanStamp{}, plain_allocator, nullptr);
      ASSERT_TRUE(cache.snapshot.has_value());
      ASSERT_EQ(FirstDifference(snapshot, cache.plan, plain.chains), "") << "instance " << instance << " step " << step;
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(cached.plan, plain.plan));
      ++compared;
      v1::LinkHealth health;
      health.set_state(random() % 4 == 0 ? v1::OPER_STATE_UP : v1::OPER_STATE_DOWN);
      auto next = snapshot.WithLinkHealth({{snapshot.link_id(static_cast<int>(random() % snapshot.link_count())), health}});
      ASSERT_TRUE(next.ok()) << next.status();
      snapshot = *std::move(next);
    }
  }
  EXPECT_GT(compared, 50);
}

}  // namespace
}  // namespace geodesic::pathcomp
