// routerd with a real FRR bgpd, driven by a real pathcomp and agents on
// loopback: FRR holds exactly the installed plan (next hops and link-bandwidth
// weights), follows it when a link fails, and keeps every route through a
// SIGKILL of routerd (graceful restart) with no withdrawal in between.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "geodesic/v1/plan.pb.h"
#include "sim/local_lab.h"

namespace geodesic {
namespace {

using sim::LocalLab;
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
    sim::LabOptions options;
    options.source_dir = std::getenv("GEODESIC_SOURCE_DIR");
    options.binary_dir = std::getenv("GEODESIC_BINARY_DIR");
    options.work_dir = (std::filesystem::temp_directory_path() / ("geodesic-bgp-" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(options.work_dir);
    options.topology_path = options.source_dir + "/deploy/examples/backbone.yaml";
    options.bgp_facilities = {kFacility};
    options.bgp_bandwidth_per_weight_mbps = 10;
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartAll().ok());
    frr_ = lab_->frr(kFacility);
    ASSERT_NE(frr_, nullptr);
  }

  void TearDown() override {
    const std::string dir = lab_ ? lab_->work_dir() : "";
    lab_.reset();
    if (!HasFailure() && !dir.empty()) std::filesystem::remove_all(dir);
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
      for (const auto& hop : route.next_hops()) {
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

  std::unique_ptr<LocalLab> lab_;
  sim::FrrRouter* frr_ = nullptr;
};

TEST_F(BgpRouterdTest, FrrHoldsThePlanFollowsItAndKeepsItThroughARouterdCrash) {
  ASSERT_TRUE(LocalLab::WaitFor([&] { return FrrMatchesInstalled(); }, seconds(60)))
      << "FRR never matched the installed plan:\n" << Describe(Installed()) << "FRR:\n" << Describe(Frr());

  // A link of iad fails: FRR follows (local repair first, then the new plan)
  // and no route of iad uses it any more.
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "down").ok());
  ASSERT_TRUE(lab_->SetLinkState("chi-iad", "down").ok());
  size_t chi_index = 0;
  for (size_t i = 0; i < lab_->topology().links.size(); ++i) {
    if (lab_->topology().links[i].id() == "iad-chi") chi_index = i;
  }
  const std::string via_chi = LocalLab::BgpNextHopV4(chi_index);
  ASSERT_TRUE(LocalLab::WaitFor(
      [&] {
        auto frr = Frr();
        if (!frr || !FrrMatchesInstalled()) return false;
        for (const auto& [prefix, hops] : *frr) {
          if (hops.contains(via_chi)) return false;
        }
        return true;
      },
      seconds(30)));
  const Table before = *Frr();
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
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  lab_->Kill(std::string("routerd/") + kFacility, SIGKILL);
  // FRR keeps our routes as stale while routerd is away (graceful restart).
  EXPECT_TRUE(LocalLab::WaitFor([&] { return stale_seen > 0; }, seconds(20)));
  std::this_thread::sleep_for(seconds(1));  // routerd stays away a while
  ASSERT_TRUE(lab_->Restart(std::string("routerd/") + kFacility).ok());
  EXPECT_TRUE(LocalLab::WaitFor([&] { return FrrMatchesInstalled(); }, seconds(30)));
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
