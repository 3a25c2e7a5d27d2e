// Chain backups placed on several threads (ChainPlacer(snapshot, threads),
// pathcomp/solver/chain_placer.h): the plan one thread makes, stored alike.
// Runs under TSan (label threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/chain_placer.h"
#include "tests/pathcomp/chain_model_testing.h"

namespace geodesic::pathcomp {
namespace {

using testing::FirstDifference;
using testing::ModelBuilder;
using testing::RandomPin;

// A wider random backbone than RandomModel's, with enough chains that a
// plan has the backups to share out to three threads: 40 facilities on a
// ring with random chords (ties, SRLGs, some links down), services with 1
// to 4 replicas (one nowhere known), 1,200 chains of 1 to 8 calls, some
// pinned to a facility set or to replicas.
ModelView WideModel(std::mt19937& random) {
  ModelBuilder model;
  const int n = 40;
  auto f = [](int i) { return absl::StrCat("f", i); };
  for (int i = 0; i < n; ++i) model.Facility(f(i));
  for (int i = 0; i < n; ++i) model.Fiber(f(i), f((i + 1) % n), 100 * (1 + random() % 3));
  for (int chord = 0; chord < 50; ++chord) {
    const int a = static_cast<int>(random() % n), b = static_cast<int>(random() % n);
    if (a == b) continue;
    const std::string srlg = random() % 3 == 0 ? absl::StrCat("conduit-", random() % 6) : "";
    model.Link(f(a), f(b), 100 * (1 + random() % 6), srlg);
    if (random() % 12 == 0) model.view().links.back().mutable_health()->set_state(v1::OPER_STATE_DOWN);
  }
  const int services = 8;
  for (int s = 0; s < services; ++s) {
    std::vector<std::string> replicas;
    const int count = 1 + static_cast<int>(random() % 4);
    for (int r = 0; r < count; ++r) replicas.push_back(f(random() % n));
    if (s == services - 1) replicas = {"nowhere"};
    model.Service(absl::StrCat("s", s), replicas, 50 * (random() % 5));
  }
  const uint64_t budgets[] = {2000, 5000, 100'000};
  for (int c = 0; c < 1200; ++c) {
    std::vector<std::string> calls;
    const int length = 1 + static_cast<int>(random() % 8);
    // The service known nowhere rarely: most chains have backups to place.
    for (int i = 0; i < length; ++i) calls.push_back(absl::StrCat("s", random() % (random() % 50 == 0 ? services : services - 1)));
    const std::string id = absl::StrCat("c", c);
    model.ChainWorkload(id, f(random() % n), calls, budgets[random() % 3]);
    RandomPin(random, model, id, length, n, 10, 4, 20);
  }
  for (int e = 0; e < 20; ++e) model.Elephant(absl::StrCat("e", e), f(random() % n), static_cast<int>(random() % n));
  return model.view();
}

// The first difference between how two plans are stored (backups in the
// same places, the same changed hops and facilities, the same path ids),
// in words; empty when stored alike.
std::string StorageDifference(const ChainPlan& a, const ChainPlan& b) {
  if (!(a.primary == b.primary) || a.call_begin != b.call_begin) return "primaries";
  if (a.backups.size() != b.backups.size()) return absl::StrCat(a.backups.size(), " backups stored, want ", b.backups.size());
  for (size_t i = 0; i < a.backups.size(); ++i) {
    const ChainPlan::CompactBackup& p = a.backups[i];
    const ChainPlan::CompactBackup& q = b.backups[i];
    if (!(p.failure == q.failure) || p.chain != q.chain || p.first != q.first || p.count != q.count ||
        p.total_us != q.total_us || p.failed_call != q.failed_call || p.placed != q.placed ||
        p.within_budget != q.within_budget || p.why != q.why) {
      return absl::StrCat("stored backup ", i, " (chain ", q.chain, ")");
    }
  }
  if (a.changed != b.changed) return "changed hops";
  if (a.unreached_from != b.unreached_from) return "unreached facilities";
  if (a.paths.size() != b.paths.size()) return absl::StrCat(a.paths.size(), " paths, want ", b.paths.size());
  for (int path = 0; path < b.paths.size(); ++path) {
    const auto x = a.paths.Links(path), y = b.paths.Links(path);
    if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) return absl::StrCat("path ", path);
  }
  if (a.dependencies != b.dependencies) return "dependencies";
  return "";
}

// Backups placed on several threads: the plan one thread makes, stored
// alike down to its path ids (the wire form and its digest follow from
// them), for PlanAll and for re-plans after a link goes down or slows.
TEST(ChainPlanTest, ThreadsPlaceTheSamePlan) {
  std::mt19937 random(6122026);
  for (int instance = 0; instance < 3; ++instance) {
    const Snapshot snapshot = Snapshot::Build(WideModel(random));
    ChainPlacer one(snapshot, 1);
    const ChainPlan plan = one.PlanAll();
    ASSERT_EQ(one.backup_threads(), 1);
    ASSERT_GT(plan.total_backups(), 3 * 4096u) << "too few backups to share out to three threads";
    if (instance == 0) {
      ASSERT_EQ(FirstDifference(snapshot, plan, ChainPlacer(snapshot).PlanAllReference()), "");
    }
    for (int threads : {2, 3}) {
      ChainPlacer many(snapshot, threads);
      const ChainPlan shared = many.PlanAll();
      EXPECT_EQ(many.backup_threads(), threads);
      ASSERT_EQ(StorageDifference(shared, plan), "") << "instance " << instance << ", " << threads << " threads";
    }
    // A placer asked again interns into the new plan's paths, not the last one's.
    ASSERT_EQ(StorageDifference(one.PlanAll(), plan), "") << "instance " << instance << ", planned again";
    // The link most primaries use down, then slower: re-plans from the
    // same plan, with many chains and backups to place again.
    std::vector<int> users(snapshot.link_count(), 0);
    for (const ChainPlacement& primary : plan.primary) {
      for (int link : primary.Links()) ++users[link];
    }
    const int link = static_cast<int>(std::max_element(users.begin(), users.end()) - users.begin());
    for (int step = 0; step < 2; ++step) {
      v1::LinkHealth health;
      health.set_state(v1::OPER_STATE_UP);
      if (step == 0) health.set_state(v1::OPER_STATE_DOWN);
      if (step == 1) health.set_rtt_us(2 * 100 * 7);  // slower than any link
      auto after = snapshot.WithLinkHealth({{snapshot.link_id(link), health}});
      ASSERT_TRUE(after.ok()) << after.status();
      const ChainPlan alone = ChainPlacer(*after, 1).Replan(plan, snapshot);
      ChainPlacer many(*after, 3);
      const ChainPlan shared = many.Replan(plan, snapshot);
      EXPECT_GE(many.backup_threads(), 2) << "instance " << instance << " step " << step;
      ASSERT_EQ(StorageDifference(shared, alone), "") << "instance " << instance << " step " << step;
      ASSERT_EQ(FirstDifference(*after, shared, ChainPlacer(*after).PlanAll()), "");
    }
  }
}

// ChainPlan::Finish lists the backups by chain on several threads as on one:
// a plan with storage enough for several parts, some of it dropped (both
// with and without the compaction that many dropped backups bring).
TEST(ChainPlanTest, FinishListsBackupsAlikeOnAnyThreads) {
  std::mt19937 random(7122026);
  for (const int dropped_in_8 : {1, 6}) {
    ChainPlan plan;
    const int chains = 5000;
    for (int c = 0; c < chains; ++c) {
      plan.AddPrimary(Chain{.origin = 0, .services = {0}, .budget_us = 1, .workload = c}, ChainPlacement{});
    }
    for (int i = 0; i < 400'000; ++i) {
      ChainPlan::CompactBackup& backup = plan.backups.emplace_back();
      backup.failure = {ChainFailure::Kind::kLink, i / 1000};
      backup.chain = static_cast<int>(random() % 8) < dropped_in_8 ? -1 : static_cast<int>(random() % chains);
    }
    ChainPlan alone = plan;
    alone.Finish(1);
    for (int threads : {2, 3, 5}) {
      ChainPlan shared = plan;
      shared.Finish(threads);
      ASSERT_EQ(shared.total_backups(), alone.total_backups());
      ASSERT_EQ(shared.backups.size(), alone.backups.size()) << threads << " threads: compacted alike";
      for (int c = 0; c < chains; ++c) {
        ASSERT_EQ(shared.backup_count(c), alone.backup_count(c)) << "chain " << c << ", " << threads << " threads";
        for (int i = 0; i < alone.backup_count(c); ++i) {
          ASSERT_EQ(shared.backup_position(c, i), alone.backup_position(c, i))
              << "chain " << c << " backup " << i << ", " << threads << " threads";
        }
      }
    }
  }
}

}  // namespace
}  // namespace geodesic::pathcomp
