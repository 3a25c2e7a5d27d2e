#include "routerd/plan_installer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>

#include "routerd/routerd_metrics.h"
#include "site_plan/site_plan_reader.h"
#include "site_plan/site_plan_writer.h"
#include "tests/support/metrics_testing.h"
#include "tests/support/test_dirs.h"

namespace geodesic::routerd {
namespace {

// Records what it was asked to install, and how many diffs it had when told
// that the initial routes were loaded.
class RecordingInstaller final : public RouteInstaller {
 public:
  explicit RecordingInstaller(std::vector<RibDiff>* log, std::vector<size_t>* loaded_after = nullptr)
      : log_(log), loaded_after_(loaded_after) {}
  absl::Status Apply(const RibDiff& diff) override {
    log_->push_back(diff);
    return absl::OkStatus();
  }
  void InitialRoutesLoaded() override {
    if (loaded_after_ != nullptr) loaded_after_->push_back(log_->size());
  }

 private:
  std::vector<RibDiff>* log_;
  std::vector<size_t>* loaded_after_;
};

// The link "iad-nyc" leads to facility "nyc".
v1::NextHop Hop(const std::string& link, uint32_t weight = 1) {
  v1::NextHop hop;
  hop.set_link_id(link);
  hop.set_peer_facility_id(link.substr(link.find('-') + 1));
  hop.set_weight(weight);
  return hop;
}

v1::FailureScope LinkFailure(const std::string& link) {
  v1::FailureScope failure;
  failure.set_kind(v1::FAILURE_KIND_LINK);
  failure.set_id(link);
  return failure;
}

v1::SitePlan EmptyPlan(uint64_t epoch, uint64_t generation) {
  v1::SitePlan plan;
  plan.set_facility_id("iad");
  plan.set_epoch(epoch);
  plan.set_generation(generation);
  return plan;
}

v1::SitePlan MakePlan(uint64_t epoch, uint64_t generation, const std::string& link) {
  v1::SitePlan plan = EmptyPlan(epoch, generation);
  site_plan::SitePlanWriter(&plan).AddRoute("10.3.0.0/16", "dfw", {Hop(link)}, {"iad", "dfw"}, 1000);
  return plan;
}

v1::SitePlan ProtectedPlan(uint64_t generation);

class PlanInstallerTest : public ::testing::Test {
 protected:

  // `metrics`: what the installer counts into (routerd's families).
  std::unique_ptr<PlanInstaller> Open(RouterdMetrics* metrics = nullptr) {
    auto installer =
        PlanInstaller::Open("iad", dir_.string(), std::make_unique<RecordingInstaller>(&log_), {}, metrics);
    EXPECT_TRUE(installer.ok()) << installer.status();
    return installer.ok() ? *std::move(installer) : nullptr;
  }
  // One of routerd's series as /metrics shows it (nullopt: absent).
  std::optional<double> Scraped(const std::string& name, const metrics::Labels& labels = {}) {
    return testing::SeriesValue(registry_.Scrape(), "geodesic_routerd_" + name, labels);
  }

  metrics::Registry registry_{"routerd", {}};

  const testing::TempDir temp_{"plan-installer"};
  const std::filesystem::path dir_ = temp_.path();
  std::vector<RibDiff> log_;
};

TEST_F(PlanInstallerTest, InstallsNewerPlansAndIgnoresStaleOnes) {
  auto installer = Open();
  EXPECT_EQ(*installer->Offer(MakePlan(1, 5, "a")), PlanVerdict::kInstalled);
  EXPECT_EQ(*installer->Offer(MakePlan(1, 5, "b")), PlanVerdict::kStale);
  EXPECT_EQ(*installer->Offer(MakePlan(1, 4, "b")), PlanVerdict::kStale);
  EXPECT_EQ(*installer->Offer(MakePlan(1, 6, "b")), PlanVerdict::kInstalled);
  ASSERT_EQ(log_.size(), 2u);
  EXPECT_EQ(log_[1].changed.size(), 1u);
  EXPECT_EQ(installer->installed().generation(), 6u);
}

TEST_F(PlanInstallerTest, FencesOffPlansFromAnOlderEpoch) {
  auto installer = Open();
  EXPECT_EQ(*installer->Offer(MakePlan(2, 1, "a")), PlanVerdict::kInstalled);
  // The old leader still publishes, with higher generations: refused.
  EXPECT_EQ(*installer->Offer(MakePlan(1, 99, "b")), PlanVerdict::kFencedOff);
  const v1::SitePlan installed = installer->installed();
  EXPECT_EQ(site_plan::Primary(installed, installed.routes(0)).next_hops(0).link_id(), "a");
  // A newer epoch wins even with a lower generation.
  EXPECT_EQ(*installer->Offer(MakePlan(3, 1, "c")), PlanVerdict::kInstalled);
  EXPECT_EQ(installer->highest_epoch(), 3u);
}

TEST_F(PlanInstallerTest, RefusesPlansForAnotherFacilityOrMalformed) {
  auto installer = Open();
  v1::SitePlan other = MakePlan(1, 1, "a");
  other.set_facility_id("chi");
  EXPECT_EQ(installer->Offer(other).status().code(), absl::StatusCode::kInvalidArgument);
  v1::SitePlan repeated = MakePlan(1, 1, "a");
  *repeated.add_routes() = repeated.routes(0);
  EXPECT_EQ(installer->Offer(repeated).status().code(), absl::StatusCode::kInvalidArgument);
  v1::SitePlan zero_weight = MakePlan(1, 1, "a");
  zero_weight.mutable_groups(0)->set_weights(0, 0);
  EXPECT_EQ(installer->Offer(zero_weight).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(log_.empty());
  EXPECT_EQ(installer->installed().generation(), 0u);
}

// A compact plan refers to its tables by index: one out of range anywhere is
// refused with what and where, and nothing of it reaches the routers, not
// even its valid routes; the installed plan stays.
TEST_F(PlanInstallerTest, RefusesAPlanWithAnIndexOutOfRangeAndInstallsNothing) {
  auto installer = Open();
  ASSERT_EQ(*installer->Offer(ProtectedPlan(1)), PlanVerdict::kInstalled);
  log_.clear();
  const auto with_second_route = [] {
    v1::SitePlan plan = ProtectedPlan(2);
    site_plan::SitePlanWriter writer(&plan);
    // A new writer starts with empty tables: add by index into the existing ones.
    v1::Route& route = writer.AddRoute("10.4.0.0/16", 0, 0, 0);
    site_plan::SitePlanWriter::AddBackup(route, 0, 1, 1);
    return plan;
  };
  ASSERT_TRUE(site_plan::ValidateIndices(with_second_route()).ok());
  struct Broken {
    std::string what;
    std::function<void(v1::SitePlan&)> damage;
    std::string says;
  };
  const std::vector<Broken> broken = {
      {"primary group", [](v1::SitePlan& plan) { plan.mutable_routes(1)->set_next_hops(7); },
       "route 10.4.0.0/16: next-hop group index 7 is out of range"},
      {"primary path", [](v1::SitePlan& plan) { plan.mutable_routes(1)->set_path(9); }, "path index 9"},
      {"destination", [](v1::SitePlan& plan) { plan.mutable_routes(1)->set_destination(40); },
       "destination facility index 40"},
      {"backup failure", [](v1::SitePlan& plan) { plan.mutable_routes(1)->set_backups(0, 3); },
       "route 10.4.0.0/16 backup 0: failure index 3"},
      {"backup group", [](v1::SitePlan& plan) { plan.mutable_routes(1)->set_backups(1, 2); },
       "backup 0: next-hop group index 2"},
      {"a torn triple", [](v1::SitePlan& plan) { plan.mutable_routes(1)->add_backups(0); }, "triples"},
      {"group port", [](v1::SitePlan& plan) { plan.mutable_groups(0)->set_ports(1, 5); },
       "next-hop group 0: port index 5"},
      {"weights", [](v1::SitePlan& plan) { plan.mutable_groups(0)->mutable_weights()->RemoveLast(); },
       "2 ports but 1 weights"},
      {"path facility", [](v1::SitePlan& plan) { plan.set_path_node_facilities(1, 99); },
       "path node 2: facility index 99"},
      {"path tree", [](v1::SitePlan& plan) { plan.set_path_node_parents(0, 1); },
       "path node 1: parent 1 is not an earlier node"},
  };
  for (const Broken& case_ : broken) {
    v1::SitePlan plan = with_second_route();
    case_.damage(plan);
    const absl::StatusOr<PlanVerdict> verdict = installer->Offer(plan);
    EXPECT_EQ(verdict.status().code(), absl::StatusCode::kInvalidArgument) << case_.what;
    EXPECT_THAT(verdict.status().message(), ::testing::HasSubstr(case_.says)) << case_.what;
  }
  EXPECT_TRUE(log_.empty()) << "nothing of a refused plan reaches the routers";
  EXPECT_EQ(installer->installed().generation(), 1u);
  EXPECT_EQ(installer->effective().routes_size(), 1);
  // The same plan whole installs.
  EXPECT_EQ(*installer->Offer(with_second_route()), PlanVerdict::kInstalled);
  EXPECT_EQ(installer->effective().routes_size(), 2);
}

TEST_F(PlanInstallerTest, RestoresTheInstalledPlanAfterRestart) {
  {
    auto installer = Open();
    ASSERT_EQ(*installer->Offer(MakePlan(4, 9, "a")), PlanVerdict::kInstalled);
  }
  log_.clear();
  auto restarted = Open();
  EXPECT_EQ(restarted->installed().generation(), 9u);
  EXPECT_EQ(restarted->highest_epoch(), 4u);
  ASSERT_EQ(log_.size(), 1u);  // re-announced at start
  EXPECT_EQ(log_[0].added.size(), 1u);
  EXPECT_EQ(*restarted->Offer(MakePlan(3, 10, "b")), PlanVerdict::kFencedOff);
}

TEST_F(PlanInstallerTest, ATornOrEmptyStoredPlanIsRefusedAndSetAside) {
  std::string whole;
  {
    auto installer = Open();
    ASSERT_EQ(*installer->Offer(MakePlan(4, 9, "a")), PlanVerdict::kInstalled);
    std::ifstream in(dir_ / "installed-plan.pb", std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(whole.size(), 4u);
  // What a power cut could leave of a file renamed into place without fsync.
  for (const std::string& torn : {std::string(), whole.substr(0, whole.size() - 3), std::string("garbage")}) {
    SCOPED_TRACE(torn.size());
    std::ofstream(dir_ / "installed-plan.pb", std::ios::binary | std::ios::trunc) << torn;
    std::filesystem::remove(dir_ / "installed-plan.pb.corrupt");
    // Graceful restart is not announced for a plan that cannot be re-announced.
    EXPECT_FALSE(PlanInstaller::HasStoredPlan(dir_.string(), "iad"));
    log_.clear();
    auto installer = Open();
    ASSERT_NE(installer, nullptr);
    EXPECT_TRUE(log_.empty()) << "nothing of a torn plan reaches the routers";
    EXPECT_EQ(installer->installed().generation(), 0u);
    EXPECT_EQ(installer->highest_epoch(), 0u);
    EXPECT_FALSE(std::filesystem::exists(dir_ / "installed-plan.pb"));
    std::ifstream aside(dir_ / "installed-plan.pb.corrupt", std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(aside), std::istreambuf_iterator<char>()), torn)
        << "kept for a post-mortem";
    // The controller's next plan installs as on a first start.
    EXPECT_EQ(*installer->Offer(MakePlan(4, 10, "b")), PlanVerdict::kInstalled);
    EXPECT_TRUE(PlanInstaller::HasStoredPlan(dir_.string(), "iad"));
  }
}

TEST_F(PlanInstallerTest, AnotherFacilitysStoredPlanIsAClearErrorAndLeftAlone) {
  {
    auto chi = PlanInstaller::Open("chi", dir_.string(), std::make_unique<RecordingInstaller>(&log_));
    ASSERT_TRUE(chi.ok());
    v1::SitePlan plan = MakePlan(1, 3, "a");
    plan.set_facility_id("chi");
    ASSERT_EQ(*(*chi)->Offer(plan), PlanVerdict::kInstalled);
  }
  EXPECT_FALSE(PlanInstaller::HasStoredPlan(dir_.string(), "iad"));
  EXPECT_TRUE(PlanInstaller::HasStoredPlan(dir_.string(), "chi"));
  auto installer =
      PlanInstaller::Open("iad", dir_.string(), std::make_unique<RecordingInstaller>(&log_));
  ASSERT_FALSE(installer.ok());
  EXPECT_EQ(installer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(installer.status().message()), ::testing::HasSubstr("installed-plan.pb"));
  EXPECT_THAT(std::string(installer.status().message()), ::testing::HasSubstr("chi"));
  EXPECT_TRUE(PlanInstaller::HasStoredPlan(dir_.string(), "chi"));
}

// A BGP speaker coming back with graceful restart connects only once told
// that its stored routes are in: told once, after the restore's Apply.
TEST_F(PlanInstallerTest, TheInitialRoutesAreLoadedBeforeTheRoutersAreTold) {
  std::vector<size_t> loaded_after;
  {
    auto first = PlanInstaller::Open("iad", dir_.string(), std::make_unique<RecordingInstaller>(&log_, &loaded_after));
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(loaded_after, std::vector<size_t>{0}) << "a first start has nothing to restore";
    ASSERT_EQ(*(*first)->Offer(MakePlan(1, 3, "a")), PlanVerdict::kInstalled);
  }
  log_.clear();
  loaded_after.clear();
  auto restarted = PlanInstaller::Open("iad", dir_.string(), std::make_unique<RecordingInstaller>(&log_, &loaded_after));
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0].added.size(), 1u) << "the stored plan's route";
  EXPECT_EQ(loaded_after, std::vector<size_t>{1}) << "told once, after the stored routes were applied";
}

TEST_F(PlanInstallerTest, PersistingLeavesNoTemporaryFiles) {
  auto installer = Open();
  for (uint64_t generation = 1; generation <= 3; ++generation) {
    ASSERT_EQ(*installer->Offer(MakePlan(1, generation, "a")), PlanVerdict::kInstalled);
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) names.push_back(entry.path().filename());
  EXPECT_THAT(names, ::testing::ElementsAre("installed-plan.pb"));
}

// Two weighted primaries out of iad; a link backup for one.
v1::SitePlan ProtectedPlan(uint64_t generation) {
  v1::SitePlan plan = EmptyPlan(1, generation);
  site_plan::SitePlanWriter writer(&plan);
  v1::Route& route =
      writer.AddRoute("10.3.0.0/16", "dfw", {Hop("iad-nyc"), Hop("iad-chi", 3)}, {"iad", "nyc", "dfw"}, 1000);
  writer.AddBackup(route, LinkFailure("iad-nyc"), {Hop("iad-atl", 2)}, {"iad", "atl", "dfw"}, 1500);
  return plan;
}

v1::LocalLinkEvents Events(bool snapshot, std::vector<std::pair<std::string, v1::OperState>> links) {
  v1::LocalLinkEvents events;
  events.set_facility_id("iad");
  events.set_snapshot(snapshot);
  for (const auto& [link, state] : links) {
    v1::LinkReport* report = events.add_links();
    report->set_link_id(link);
    report->mutable_health()->set_state(state);
  }
  return events;
}

// One primary next hop out of iad, a link backup for it.
v1::SitePlan SingleHopPlan(uint64_t generation) {
  v1::SitePlan plan = EmptyPlan(1, generation);
  site_plan::SitePlanWriter writer(&plan);
  v1::Route& route = writer.AddRoute("10.3.0.0/16", "dfw", {Hop("iad-nyc")}, {"iad", "nyc", "dfw"}, 1000);
  writer.AddBackup(route, LinkFailure("iad-nyc"), {Hop("iad-atl", 2)}, {"iad", "atl", "dfw"}, 1500);
  return plan;
}

TEST_F(PlanInstallerTest, LocalRepairSwitchesToTheBackupAndBack) {
  auto installer = Open();
  ASSERT_EQ(*installer->Offer(SingleHopPlan(1)), PlanVerdict::kInstalled);
  log_.clear();
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-nyc", v1::OPER_STATE_DOWN}})), 1u);
  ASSERT_EQ(log_.size(), 1u);
  ASSERT_EQ(log_[0].changed.size(), 1u);
  EXPECT_EQ(DescribeNextHops(log_[0].changed[0].after), "iad-atl(w2)");
  EXPECT_THAT(installer->effective().routes(0).path_facility_ids(), ::testing::ElementsAre("iad", "atl", "dfw"));
  EXPECT_EQ(installer->effective().routes(0).path_latency_us(), 1500u);
  // The installed plan is unchanged; a degraded report changes nothing.
  const v1::SitePlan installed = installer->installed();
  EXPECT_EQ(DescribeNextHops(site_plan::Primary(installed, installed.routes(0))), "iad-nyc(w1)");
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-atl", v1::OPER_STATE_DEGRADED}})), 0u);
  // A new plan that still uses the down link is repaired too.
  ASSERT_EQ(*installer->Offer(SingleHopPlan(2)), PlanVerdict::kInstalled);
  EXPECT_EQ(DescribeNextHops(installer->effective().routes(0)), "iad-atl(w2)");
  // Recovery restores the primary.
  log_.clear();
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-nyc", v1::OPER_STATE_UP}})), 1u);
  EXPECT_EQ(DescribeNextHops(log_[0].changed[0].after), "iad-nyc(w1)");
}

// A weighted route loses a member as a router's group does: the survivors
// keep their weights (they follow the allocation's loop-free flow), and the
// backup is for when none survives.
TEST_F(PlanInstallerTest, LocalRepairKeepsTheSurvivingMembersOfAWeightedRoute) {
  auto installer = Open();
  v1::SitePlan plan = EmptyPlan(1, 1);
  site_plan::SitePlanWriter writer(&plan);
  v1::Route& route =
      writer.AddRoute("10.3.0.0/16", "dfw", {Hop("iad-nyc"), Hop("iad-chi", 3)}, {"iad", "nyc", "dfw"}, 1000);
  writer.AddBackup(route, LinkFailure("iad-nyc"), {Hop("iad-atl", 2)}, {"iad", "atl", "dfw"}, 1500);
  v1::FailureScope conduit;
  conduit.set_kind(v1::FAILURE_KIND_SRLG);
  conduit.set_id("conduit-7");
  writer.AddBackup(route, conduit, {Hop("iad-chi")}, {"iad", "chi", "dfw"}, 1300);
  ASSERT_EQ(*installer->Offer(plan), PlanVerdict::kInstalled);
  // The primary path's first hop (nyc) is gone: the path named is the one a
  // backup takes from the heaviest survivor's peer.
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-nyc", v1::OPER_STATE_DOWN}})), 1u);
  EXPECT_EQ(DescribeNextHops(installer->effective().routes(0)), "iad-chi(w3)");
  EXPECT_THAT(installer->effective().routes(0).path_facility_ids(), ::testing::ElementsAre("iad", "chi", "dfw"));
  EXPECT_EQ(installer->effective().routes(0).path_latency_us(), 1300u);
  // The other member down instead: the primary path still leaves over a survivor.
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(true, {{"iad-chi", v1::OPER_STATE_DOWN}})), 1u);
  EXPECT_EQ(DescribeNextHops(installer->effective().routes(0)), "iad-nyc(w1)");
  EXPECT_THAT(installer->effective().routes(0).path_facility_ids(), ::testing::ElementsAre("iad", "nyc", "dfw"));
  EXPECT_EQ(installer->effective().routes(0).path_latency_us(), 1000u);
  // Both down: the link backup that avoids them.
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(true, {{"iad-chi", v1::OPER_STATE_DOWN},
                                                      {"iad-nyc", v1::OPER_STATE_DOWN},
                                                      {"iad-atl", v1::OPER_STATE_UP}})),
            1u);
  EXPECT_EQ(DescribeNextHops(installer->effective().routes(0)), "iad-atl(w2)");
  // Without a backup leaving toward the survivor, the path is only what the
  // site knows: itself and that peer, latency unknown (0).
  ASSERT_EQ(*installer->Offer(ProtectedPlan(2)), PlanVerdict::kInstalled);
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(true, {{"iad-nyc", v1::OPER_STATE_DOWN}})), 1u);
  EXPECT_EQ(DescribeNextHops(installer->effective().routes(0)), "iad-chi(w3)");
  EXPECT_THAT(installer->effective().routes(0).path_facility_ids(), ::testing::ElementsAre("iad", "chi"));
  EXPECT_EQ(installer->effective().routes(0).path_latency_us(), 0u);
}

TEST_F(PlanInstallerTest, MetricsCountLocalRepairsAndTimeThem) {
  RouterdMetrics metrics(registry_);
  auto installer = Open(&metrics);
  ASSERT_EQ(*installer->Offer(ProtectedPlan(1)), PlanVerdict::kInstalled);
  EXPECT_EQ(Scraped("local_repairs_total"), 0.0);
  EXPECT_EQ(Scraped("local_repair_duration_seconds_count"), 0.0);
  // Down onto the backup, a report that changes nothing, back onto the primary.
  ASSERT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-nyc", v1::OPER_STATE_DOWN}})), 1u);
  ASSERT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-chi", v1::OPER_STATE_DEGRADED}})), 0u);
  ASSERT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-nyc", v1::OPER_STATE_UP}})), 1u);
  EXPECT_EQ(Scraped("local_repairs_total"), 2.0);
  EXPECT_EQ(Scraped("local_repair_routes_total"), 2.0);
  EXPECT_EQ(Scraped("local_repair_failures_total"), 0.0);
  EXPECT_EQ(Scraped("local_repair_duration_seconds_count"), 2.0);
  const double took_s = *Scraped("local_repair_duration_seconds_sum");
  EXPECT_GT(took_s, 0.0);
  EXPECT_LT(took_s, 10.0);
  EXPECT_EQ(Scraped("local_repair_duration_seconds_bucket", {{"le", "+Inf"}}), 2.0);
  // Another facility's events are refused, not a failed repair.
  v1::LocalLinkEvents other = Events(false, {{"iad-nyc", v1::OPER_STATE_DOWN}});
  other.set_facility_id("chi");
  EXPECT_FALSE(installer->ApplyLinkEvents(other).ok());
  EXPECT_EQ(Scraped("local_repair_failures_total"), 0.0);
}

TEST_F(PlanInstallerTest, MetricsCountInstallsAndEveryRefusal) {
  RouterdMetrics metrics(registry_);
  auto installer = Open(&metrics);
  ASSERT_EQ(*installer->Offer(MakePlan(2, 5, "a")), PlanVerdict::kInstalled);
  ASSERT_EQ(*installer->Offer(MakePlan(2, 5, "b")), PlanVerdict::kStale);
  ASSERT_EQ(*installer->Offer(MakePlan(1, 9, "b")), PlanVerdict::kFencedOff);
  v1::SitePlan chi = MakePlan(2, 6, "a");
  chi.set_facility_id("chi");
  ASSERT_FALSE(installer->Offer(chi).ok());
  ASSERT_EQ(*installer->Offer(MakePlan(3, 1, "b")), PlanVerdict::kInstalled);
  EXPECT_EQ(Scraped("plan_installs_total"), 2.0);
  EXPECT_EQ(Scraped("plans_refused_total", {{"reason", "stale"}}), 1.0);
  EXPECT_EQ(Scraped("plans_refused_total", {{"reason", "fenced_off"}}), 1.0);
  EXPECT_EQ(Scraped("plans_refused_total", {{"reason", "invalid"}}), 1.0);
  EXPECT_EQ(Scraped("plans_refused_total", {{"reason", "install_failed"}}), 0.0);
  // The installed plan at a glance, as routerd binds it.
  metrics.BindInstalledPlan([&] { return installer->summary(); });
  EXPECT_EQ(Scraped("installed_plan_generation"), 1.0);
  EXPECT_EQ(Scraped("installed_plan_epoch"), 3.0);
  EXPECT_EQ(Scraped("routes_on_routers"), 1.0);
  metrics.Unbind();
}

TEST_F(PlanInstallerTest, LocalRepairWithoutBackupDropsTheFailedHopOrWithdraws) {
  auto installer = Open();
  v1::SitePlan plan = ProtectedPlan(1);
  plan.mutable_routes(0)->clear_backups();
  ASSERT_EQ(*installer->Offer(plan), PlanVerdict::kInstalled);
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(true, {{"iad-nyc", v1::OPER_STATE_DOWN}})), 1u);
  EXPECT_EQ(DescribeNextHops(installer->effective().routes(0)), "iad-chi(w3)");
  log_.clear();
  // A snapshot replaces the whole set: both down now (iad keeps a third link,
  // iad-atl, so this is not every link of the facility at once).
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(true, {{"iad-nyc", v1::OPER_STATE_DOWN},
                                                      {"iad-chi", v1::OPER_STATE_DOWN},
                                                      {"iad-atl", v1::OPER_STATE_UP}})),
            1u);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0].removed.size(), 1u);
  EXPECT_EQ(installer->effective().routes_size(), 0);
  // An empty snapshot: everything is up again.
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(true, {})), 1u);
  EXPECT_EQ(installer->effective().routes_size(), 1);
  EXPECT_TRUE(installer->down_links().empty());
}

TEST_F(PlanInstallerTest, LinkEventsOfAnotherFacilityChangeNothing) {
  auto installer = Open();
  ASSERT_EQ(*installer->Offer(ProtectedPlan(1)), PlanVerdict::kInstalled);
  v1::LocalLinkEvents events = Events(false, {{"iad-nyc", v1::OPER_STATE_DOWN}});
  events.set_facility_id("chi");
  EXPECT_EQ(installer->ApplyLinkEvents(events).status().code(), absl::StatusCode::kInvalidArgument);
  v1::LocalLinkEvents unnamed = Events(false, {{"", v1::OPER_STATE_DOWN}});
  EXPECT_EQ(installer->ApplyLinkEvents(unnamed).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(installer->down_links().empty());
}

// Four links out of iad, one prefix behind each, each protected by the next link.
v1::SitePlan FourLinkPlan(uint64_t generation) {
  const std::vector<std::string> links = {"iad-nyc", "iad-chi", "iad-atl", "iad-dfw"};
  v1::SitePlan plan;
  plan.set_facility_id("iad");
  plan.set_epoch(1);
  plan.set_generation(generation);
  site_plan::SitePlanWriter writer(&plan);
  for (size_t i = 0; i < links.size(); ++i) {
    v1::Route& route = writer.AddRoute("10." + std::to_string(i) + ".0.0/16", "dfw", {Hop(links[i])}, {}, 0);
    writer.AddBackup(route, LinkFailure(links[i]), {Hop(links[(i + 1) % links.size()])}, {}, 0);
  }
  return plan;
}

std::vector<std::string> Forwarding(const v1::ForwardingTable& plan) {
  std::vector<std::string> routes;
  for (const auto& route : plan.routes()) routes.push_back(route.prefix() + " " + DescribeNextHops(route));
  return routes;
}

const std::vector<std::string> kFourLinkPrimaries = {"10.0.0.0/16 iad-nyc(w1)", "10.1.0.0/16 iad-chi(w1)",
                                                    "10.2.0.0/16 iad-atl(w1)", "10.3.0.0/16 iad-dfw(w1)"};

TEST_F(PlanInstallerTest, EveryLinkReportedDownTogetherKeepsEveryRoute) {
  RouterdMetrics metrics(registry_);
  auto installer = Open(&metrics);
  metrics.BindInstalledPlan([&] { return installer->summary(); });
  ASSERT_EQ(*installer->Offer(FourLinkPlan(1)), PlanVerdict::kInstalled);
  log_.clear();
  // A starved agent's snapshot: all four links down at once.
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(true, {{"iad-nyc", v1::OPER_STATE_DOWN},
                                                      {"iad-chi", v1::OPER_STATE_DOWN},
                                                      {"iad-atl", v1::OPER_STATE_DOWN},
                                                      {"iad-dfw", v1::OPER_STATE_DOWN}})),
            0u);
  EXPECT_TRUE(log_.empty()) << "nothing withdrawn or moved";
  EXPECT_EQ(Forwarding(installer->effective()), kFourLinkPrimaries);
  EXPECT_TRUE(installer->down_links().empty());
  EXPECT_EQ(installer->suspect_links().size(), 4u);
  EXPECT_EQ(installer->suspect_down_reports(), 1u);
  EXPECT_EQ(Scraped("suspect_down_holds_total"), 1.0);
  EXPECT_EQ(Scraped("suspect_down_links"), 4.0);
  EXPECT_EQ(Scraped("local_repair_down_links"), 0.0);
  EXPECT_EQ(Scraped("local_repairs_total"), 0.0) << "held, not repaired";
  EXPECT_EQ(Scraped("routes_on_routers"), 4.0);
  // The controller's next plan installs as it was computed.
  ASSERT_EQ(*installer->Offer(FourLinkPlan(2)), PlanVerdict::kInstalled);
  EXPECT_EQ(Forwarding(installer->effective()), kFourLinkPrimaries);
  // The links come back: nothing to undo.
  log_.clear();
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(true, {{"iad-nyc", v1::OPER_STATE_UP}, {"iad-chi", v1::OPER_STATE_UP},
                                                      {"iad-atl", v1::OPER_STATE_UP}, {"iad-dfw", v1::OPER_STATE_UP}})),
            0u);
  EXPECT_TRUE(log_.empty());
  EXPECT_TRUE(installer->suspect_links().empty());
  // And a real cut afterwards repairs at once.
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-chi", v1::OPER_STATE_DOWN}})), 1u);
  EXPECT_EQ(DescribeNextHops(installer->effective().routes(1)), "iad-atl(w1)");
  EXPECT_EQ(installer->suspect_down_reports(), 1u);
  EXPECT_EQ(Scraped("suspect_down_holds_total"), 1.0);
  EXPECT_EQ(Scraped("local_repairs_total"), 1.0);
  EXPECT_EQ(Scraped("local_repair_down_links"), 1.0);
  metrics.Unbind();
}

TEST_F(PlanInstallerTest, LinksFailingOneByOneWithinTheWindowAreHeldTogether) {
  auto installer = Open();
  ASSERT_EQ(*installer->Offer(FourLinkPlan(1)), PlanVerdict::kInstalled);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> links = {"iad-nyc", "iad-chi", "iad-atl"};
  for (size_t i = 0; i < links.size(); ++i) {
    EXPECT_GT(*installer->ApplyLinkEvents(Events(false, {{links[i], v1::OPER_STATE_DOWN}}),
                                          start + std::chrono::milliseconds(100 * i)),
              0u);
  }
  EXPECT_EQ(installer->down_links().size(), 3u);  // three cuts, repaired as they came
  // The fourth within a second of the first: the whole burst is suspect, the
  // repairs it caused are undone and the plan's routes are back.
  EXPECT_GT(*installer->ApplyLinkEvents(Events(false, {{"iad-dfw", v1::OPER_STATE_DOWN}}),
                                        start + std::chrono::milliseconds(300)),
            0u);
  EXPECT_EQ(Forwarding(installer->effective()), kFourLinkPrimaries);
  EXPECT_TRUE(installer->down_links().empty());
  EXPECT_EQ(installer->suspect_down_reports(), 1u);
}

TEST_F(PlanInstallerTest, OneLinkDownRepairsAtOnceEvenAfterOthersFailedLongAgo) {
  auto installer = Open();
  ASSERT_EQ(*installer->Offer(FourLinkPlan(1)), PlanVerdict::kInstalled);
  const auto start = std::chrono::steady_clock::now();
  log_.clear();
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-nyc", v1::OPER_STATE_DOWN}}), start), 1u);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(DescribeNextHops(log_[0].changed.at(0).after), "iad-chi(w1)");
  // Two more real cuts, each well apart: repaired, none suspect.
  EXPECT_GT(*installer->ApplyLinkEvents(Events(false, {{"iad-chi", v1::OPER_STATE_DOWN}}),
                                        start + std::chrono::seconds(10)),
            0u);
  EXPECT_GT(*installer->ApplyLinkEvents(Events(false, {{"iad-atl", v1::OPER_STATE_DOWN}}),
                                        start + std::chrono::seconds(20)),
            0u);
  EXPECT_EQ(installer->down_links().size(), 3u);
  EXPECT_EQ(installer->suspect_down_reports(), 0u);
  // Only iad-dfw is left: local repair could only withdraw what still uses it.
  // Held instead; the routers' next-hop tracking drops a link that is really dead.
  const std::vector<std::string> before = Forwarding(installer->effective());
  ASSERT_FALSE(before.empty());
  EXPECT_EQ(*installer->ApplyLinkEvents(Events(false, {{"iad-dfw", v1::OPER_STATE_DOWN}}),
                                        start + std::chrono::seconds(30)),
            0u);
  EXPECT_EQ(Forwarding(installer->effective()), before);
  EXPECT_EQ(installer->suspect_links(), DownLinks{"iad-dfw"});
  EXPECT_EQ(installer->suspect_down_reports(), 1u);
}

TEST_F(PlanInstallerTest, TwoLinksOfAConduitRepairUnlessTheShareSaysSuspect) {
  const v1::LocalLinkEvents conduit =
      Events(false, {{"iad-nyc", v1::OPER_STATE_DOWN}, {"iad-chi", v1::OPER_STATE_DOWN}});
  {
    auto installer = Open();  // default: only every link at once is suspect
    ASSERT_EQ(*installer->Offer(FourLinkPlan(1)), PlanVerdict::kInstalled);
    EXPECT_EQ(*installer->ApplyLinkEvents(conduit), 2u);
    EXPECT_EQ(installer->down_links().size(), 2u);
    EXPECT_EQ(installer->suspect_down_reports(), 0u);
  }
  std::filesystem::remove_all(dir_);
  auto strict = PlanInstaller::Open("iad", dir_.string(), std::make_unique<RecordingInstaller>(&log_),
                                    SuspectDownPolicy{.share = 0.5, .window = std::chrono::milliseconds(1000)});
  ASSERT_TRUE(strict.ok());
  ASSERT_EQ(*(*strict)->Offer(FourLinkPlan(1)), PlanVerdict::kInstalled);
  EXPECT_EQ(*(*strict)->ApplyLinkEvents(conduit), 0u);
  EXPECT_EQ((*strict)->suspect_links().size(), 2u);
  EXPECT_EQ(Forwarding((*strict)->effective()), kFourLinkPrimaries);
}

TEST_F(PlanInstallerTest, ExpiryWithdrawsEverythingAndSurvivesRestart) {
  {
    auto installer = Open();
    ASSERT_EQ(*installer->Offer(ProtectedPlan(7)), PlanVerdict::kInstalled);
    log_.clear();
    ASSERT_TRUE(installer->ExpireAll("test").ok());
    ASSERT_EQ(log_.size(), 1u);
    EXPECT_EQ(log_[0].removed.size(), 1u);
    EXPECT_EQ(installer->installed().routes_size(), 0);
    EXPECT_FALSE(PlanInstaller::HasStoredPlan(dir_.string(), "iad"));
    // The next plan installs normally, even with an older generation.
    EXPECT_EQ(*installer->Offer(ProtectedPlan(3)), PlanVerdict::kInstalled);
    ASSERT_TRUE(installer->ExpireAll("test").ok());
  }
  log_.clear();
  auto restarted = Open();
  EXPECT_EQ(restarted->installed().routes_size(), 0);
  EXPECT_TRUE(log_.empty());
}

}  // namespace
}  // namespace geodesic::routerd
