// routerd with a real FRR bgpd, driven by a real pathcomp and agents on
// loopback: FRR holds exactly the installed plan (next hops and link-bandwidth
// weights), follows it when a link fails, and keeps every route through a
// SIGKILL of routerd (graceful restart) with no withdrawal in between.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "geodesic/v1/plan.pb.h"
#include "site_plan/site_plan_reader.h"
#include "tests/support/lab_testing.h"

namespace geodesic {
namespace {

using sim::LabClient;
using sim::LocalLab;
using sim::WaitUntil;
using std::chrono::seconds;

constexpr char kFacility[] = "iad";

// prefix -> next hop -> link bandwidth (bytes/s)
using Table = std::map<std::string, std::map<std::string, double>>;

std::string Describe(const std::optional<Table>& table) {
  if (!table) return "(unreadable)";
  std::string text;
  for (const auto& [prefix, hops] : *table) {
    text += prefix + ":";
    for (const auto& [hop, bandwidth] : hops) text += " " + hop + "=" + std::to_string(bandwidth);
    text += "\n";
  }
  return text;
}

// Link bandwidth travels as an IEEE single: equal within its precision.
bool SameTable(const Table& a, const Table& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [prefix, hops] : a) {
    auto it = b.find(prefix);
    if (it == b.end() || it->second.size() != hops.size()) return false;
    for (const auto& [hop, bandwidth] : hops) {
      auto other = it->second.find(hop);
      if (other == it->second.end() || std::abs(other->second - bandwidth) > 1e-6 * bandwidth + 1) return false;
    }
  }
  return true;
}

class BgpRouterdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto status = sim::FrrAvailable(); !status.ok()) GTEST_SKIP() << status;
    // Link health is configured, not probed: this test is about BGP.
    sim::LabOptions options = testing::LabOptionsFor(work_.path());
    options.bgp_facilities = {kFacility};
    options.bgp_bandwidth_per_weight_mbps = 10;
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    client_ = std::make_unique<LabClient>(*lab_);
    ASSERT_TRUE(lab_->StartAll().ok());
    frr_ = lab_->frr(kFacility);
    ASSERT_NE(frr_, nullptr);
  }

  void TearDown() override {
    client_.reset();
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  // Waits until the controller says the plan is at every site's routers
  // (for iad: every UPDATE written to FRR), then until FRR's own table,
  // which bgpd fills as it reads them, holds exactly iad's installed plan.
  void WaitConvergedIntoFrr(uint64_t min_model_revision = 0) {
    auto converged = client_->WaitConverged({.timeout = seconds(60), .min_model_revision = min_model_revision});
    ASSERT_TRUE(converged.ok()) << converged.status();
    uint64_t installed = 0;
    Installed(&installed);
    EXPECT_EQ(installed, converged->plan().generation());
    ASSERT_EQ(WaitUntil("FRR to hold iad's installed plan", seconds(30), [&] { return FrrMatchesInstalled(); }),
              absl::OkStatus())
        << "installed:\n" << Describe(Installed()) << "FRR:\n" << Describe(Frr());
  }

  // What routerd has installed (its state file), as FRR should hold it.
  std::optional<Table> Installed(uint64_t* generation = nullptr) {
    auto installed = lab_->InstalledPlan(kFacility);
    if (!installed) return std::nullopt;
    const v1::SitePlan& plan = *installed;
    if (generation != nullptr) *generation = plan.generation();
    std::map<std::string, size_t> link_index;
    for (size_t i = 0; i < lab_->topology().links.size(); ++i) link_index[lab_->topology().links[i].id()] = i;
    Table table;
    for (const auto& route : plan.routes()) {
      const bool v6 = route.prefix().find(':') != std::string::npos;
      for (const auto& hop : site_plan::NextHops(plan, site_plan::PrimaryGroup(plan, route))) {
        const size_t index = link_index.at(hop.link_id());
        table[route.prefix()][v6 ? LocalLab::BgpNextHopV6(index) : LocalLab::BgpNextHopV4(index)] =
            hop.weight() * 10 * 125000.0;
      }
    }
    return table;
  }

  // FRR's valid paths; `stale` counts the paths kept through a graceful restart.
  std::optional<Table> Frr(size_t* stale = nullptr) {
    Table table;
    for (bool v6 : {false, true}) {
      auto routes = frr_->Routes(v6);
      if (!routes.ok()) return std::nullopt;
      for (const auto& [prefix, paths] : *routes) {
        for (const auto& path : paths) {
          if (!path.valid) continue;
          table[prefix][path.next_hop] = path.bandwidth_bytes;
          if (stale != nullptr && path.stale) ++*stale;
        }
      }
    }
    return table;
  }

  // FRR holds the installed plan, and that plan reaches every other facility.
  bool FrrMatchesInstalled() {
    size_t reachable = 0;
    for (const auto& facility : lab_->topology().facilities) {
      if (facility.id() != kFacility) reachable += facility.prefixes_size();
    }
    auto installed = Installed();
    size_t stale = 0;
    auto frr = Frr(&stale);
    return installed && frr && installed->size() == reachable && SameTable(*installed, *frr) && stale == 0;
  }

  testing::TempDir work_{"bgp"};
  std::unique_ptr<LocalLab> lab_;
  std::unique_ptr<LabClient> client_;
  sim::FrrRouter* frr_ = nullptr;
};

TEST_F(BgpRouterdTest, FrrHoldsThePlanFollowsItAndKeepsItThroughARouterdCrash) {
  WaitConvergedIntoFrr();
  if (HasFatalFailure()) return;

  // A link of iad fails: FRR follows (local repair first, then the new plan)
  // and no route of iad uses it any more.
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "down").ok());
  ASSERT_TRUE(lab_->SetLinkState("chi-iad", "down").ok());
  size_t chi_index = 0;
  for (size_t i = 0; i < lab_->topology().links.size(); ++i) {
    if (lab_->topology().links[i].id() == "iad-chi") chi_index = i;
  }
  const std::string via_chi = LocalLab::BgpNextHopV4(chi_index);
  auto revision = client_->WaitLinkStates({"iad-chi", "chi-iad"}, v1::OPER_STATE_DOWN, seconds(30));
  ASSERT_TRUE(revision.ok()) << revision.status();
  WaitConvergedIntoFrr(*revision);
  if (HasFatalFailure()) return;
  const Table before = *Frr();
  for (const auto& [prefix, hops] : before) EXPECT_FALSE(hops.contains(via_chi)) << prefix << " still via chi";
  uint64_t generation_before = 0;
  ASSERT_TRUE(Installed(&generation_before));
  const size_t prefixes = before.size();
  ASSERT_GT(prefixes, 10u);

  // Watch FRR's table throughout the crash: no prefix may disappear.
  std::atomic<bool> watching = true;
  std::atomic<size_t> fewest = prefixes, polls = 0, stale_seen = 0;
  std::thread watcher([&] {
    while (watching) {
      size_t stale = 0;
      if (auto table = Frr(&stale)) {
        fewest = std::min(fewest.load(), table->size());
        stale_seen = std::max(stale_seen.load(), stale);
        ++polls;
      }
      // Samples FRR's table every 20 ms for as long as the crash lasts (joined below).
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  // Joined however the test ends (an ASSERT returns early).
  struct Join {
    std::atomic<bool>& flag;
    std::thread& thread;
    ~Join() {
      flag = false;
      if (thread.joinable()) thread.join();
    }
  } join{watching, watcher};
  lab_->Kill(std::string("routerd/") + kFacility, SIGKILL);
  // FRR keeps our routes as stale while routerd is away (graceful restart).
  EXPECT_EQ(WaitUntil("FRR to keep iad's routes as stale", seconds(20), [&] { return stale_seen > 0; }),
            absl::OkStatus());
  std::this_thread::sleep_for(seconds(1));  // the thing tested: FRR keeps the routes while routerd stays away
  ASSERT_TRUE(lab_->Restart(std::string("routerd/") + kFacility).ok());
  // The restarted routerd re-announces its stored plan; FRR ends with it, none stale.
  EXPECT_EQ(WaitUntil("FRR to hold the installed plan again, none stale", seconds(30),
                      [&] { return FrrMatchesInstalled(); }),
            absl::OkStatus());
  watching = false;
  watcher.join();
  EXPECT_GT(polls.load(), 5u);
  EXPECT_EQ(fewest.load(), prefixes) << "FRR lost prefixes while routerd restarted";
  // FRR ends where it was, unless the controller moved the plan meanwhile
  // (then it holds the new installed plan, checked above).
  uint64_t generation_after = 0;
  ASSERT_TRUE(Installed(&generation_after));
  if (generation_after == generation_before) {
    EXPECT_TRUE(SameTable(*Frr(), before));
  }
}

}  // namespace
}  // namespace geodesic
