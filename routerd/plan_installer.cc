#include "routerd/plan_installer.h"

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <set>
#include <string_view>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/log.h"
#include "files/atomic_file.h"
#include "routerd/routerd_metrics.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::routerd {
namespace {

constexpr std::string_view kInstalledPlanFile = "installed-plan.pb";

absl::Status ValidatePlan(const v1::SitePlan& plan, const std::string& facility_id) {
  if (plan.facility_id() != facility_id) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan for facility \"", plan.facility_id(), "\", not ", facility_id));
  }
  if (plan.generation() == 0) return absl::InvalidArgumentError("plan generation 0");
  if (auto status = site_plan::ValidateIndices(plan); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("plan generation ", plan.generation(), ": ", status.message()));
  }
  std::set<std::string_view> prefixes;
  for (const auto& route : plan.routes()) {
    if (route.prefix().empty() || !prefixes.insert(route.prefix()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("route prefix \"", route.prefix(), "\" empty or repeated"));
    }
  }
  return absl::OkStatus();
}

// The plan stored in `state_dir`: nullopt when there is none. DataLoss when
// the file is torn, empty or invalid; FailedPrecondition when it is a valid
// plan of another facility (a state_dir shared by mistake: not ours to touch).
absl::StatusOr<std::optional<v1::SitePlan>> ReadStoredPlan(const std::filesystem::path& path,
                                                           const std::string& facility_id) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    if (error) return absl::UnavailableError(absl::StrCat(path.string(), ": ", error.message()));
    return std::nullopt;  // first start
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (!in && !in.eof()) return absl::UnavailableError(absl::StrCat(path.string(), ": cannot read"));
  const std::string contents = bytes.str();
  v1::SitePlan stored;
  if (contents.empty()) return absl::DataLossError(absl::StrCat(path.string(), ": empty file"));
  if (!stored.ParseFromString(contents)) {
    return absl::DataLossError(absl::StrCat(path.string(), ": not a plan (", contents.size(),
                                            " bytes; torn or corrupt)"));
  }
  if (!stored.facility_id().empty() && stored.facility_id() != facility_id) {
    return absl::FailedPreconditionError(absl::StrCat(path.string(), ": holds the plan of facility \"",
                                                      stored.facility_id(), "\", not ", facility_id,
                                                      " (is state_dir shared with another routerd?)"));
  }
  // Installed by an older routerd (paths a message each): its routes stand, without their paths.
  site_plan::DetachLegacyPaths(stored);
  if (auto status = ValidatePlan(stored, facility_id); !status.ok()) {
    return absl::DataLossError(absl::StrCat(path.string(), ": not a valid installed plan of ", facility_id,
                                            ": ", status.message()));
  }
  return stored;
}

}  // namespace

PlanInstaller::PlanInstaller(std::string facility_id, std::string state_dir,
                             RouteInstallerPtr installer, SuspectDownPolicy suspect_down, RouterdMetrics* metrics)
    : facility_id_(std::move(facility_id)),
      state_dir_(std::move(state_dir)),
      metrics_(metrics),
      installer_(std::move(installer)),
      suspect_filter_(suspect_down) {
  installed_.set_facility_id(facility_id_);
}

void PlanInstaller::IndexInstalled(const v1::ForwardingTable& effective) {
  std::unordered_map<std::string_view, const v1::ForwardingRoute*> by_prefix;
  by_prefix.reserve(effective.routes_size());
  for (const v1::ForwardingRoute& route : effective.routes()) by_prefix[route.prefix()] = &route;
  effective_.assign(installed_.routes_size(), std::nullopt);
  routes_by_link_.clear();
  for (int i = 0; i < installed_.routes_size(); ++i) {
    const v1::Route& route = installed_.routes(i);
    if (auto it = by_prefix.find(route.prefix()); it != by_prefix.end()) effective_[i] = *it->second;
    // Ports, not link ids, first: a plan's routes share a few of them.
    std::set<uint32_t> ports;
    for (uint32_t port : site_plan::PrimaryGroup(installed_, route).ports()) ports.insert(port);
    for (int b = 0; b < site_plan::BackupCount(route); ++b) {
      for (uint32_t port : installed_.groups(static_cast<int>(site_plan::BackupAt(route, b).group)).ports()) {
        ports.insert(port);
      }
    }
    for (uint32_t port : ports) routes_by_link_[installed_.ports(static_cast<int>(port)).link_id()].push_back(i);
  }
}

v1::ForwardingTable PlanInstaller::EffectivePlan() const {
  v1::ForwardingTable plan;
  plan.set_facility_id(installed_.facility_id());
  plan.set_generation(installed_.generation());
  plan.set_epoch(installed_.epoch());
  for (const auto& route : effective_) {
    if (route) *plan.add_routes() = *route;
  }
  return plan;
}

absl::StatusOr<std::unique_ptr<PlanInstaller>> PlanInstaller::Open(std::string facility_id,
                                                                   std::string state_dir,
                                                                   RouteInstallerPtr installer,
                                                                   SuspectDownPolicy suspect_down,
                                                                   RouterdMetrics* metrics) {
  std::error_code error;
  std::filesystem::create_directories(state_dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat(state_dir, ": cannot create the state directory: ", error.message()));
  }
  std::unique_ptr<PlanInstaller> installer_ptr(
      new PlanInstaller(std::move(facility_id), std::move(state_dir), std::move(installer), suspect_down, metrics));
  const auto path = std::filesystem::path(installer_ptr->state_dir_) / kInstalledPlanFile;
  auto read = ReadStoredPlan(path, installer_ptr->facility_id_);
  if (read.status().code() == absl::StatusCode::kDataLoss) {
    // Torn or corrupt (a power cut before this file was written durably):
    // re-announcing part of a plan, or nothing, would be worse than waiting
    // for the controller's. Kept aside for a post-mortem; start as new.
    const std::string aside = path.string() + ".corrupt";
    std::filesystem::rename(path, aside, error);
    if (error) {
      return absl::DataLossError(absl::StrCat(read.status().message(), "; and it cannot be moved aside to ",
                                              aside, ": ", error.message()));
    }
    daemon::LogError("stored installed plan refused; nothing is restored, routes come with the controller's next plan",
                     {{"error", std::string(read.status().message())}, {"kept_as", aside}});
    installer_ptr->installer_->InitialRoutesLoaded();
    return installer_ptr;
  }
  if (!read.ok()) return read.status();
  if (!read->has_value()) {  // first start
    installer_ptr->installer_->InitialRoutesLoaded();
    return installer_ptr;
  }
  const v1::SitePlan& stored = **read;
  const v1::ForwardingTable effective = RepairPlan(stored, {});
  if (auto status = installer_ptr->installer_->Apply(DiffRoutes(v1::ForwardingTable(), effective)); !status.ok()) {
    return status;
  }
  installer_ptr->installed_ = stored;
  installer_ptr->IndexInstalled(effective);
  installer_ptr->highest_epoch_ = stored.epoch();
  daemon::LogInfo("restored installed plan", {{"generation", std::to_string(stored.generation())},
                                              {"epoch", std::to_string(stored.epoch())},
                                              {"routes", std::to_string(stored.routes_size())}});
  installer_ptr->installer_->InitialRoutesLoaded();
  return installer_ptr;
}

bool PlanInstaller::HasStoredPlan(const std::string& state_dir, const std::string& facility_id) {
  auto read = ReadStoredPlan(std::filesystem::path(state_dir) / kInstalledPlanFile, facility_id);
  return read.ok() && read->has_value();
}

absl::Status PlanInstaller::Persist(const v1::SitePlan& plan) const {
  const auto path = std::filesystem::path(state_dir_) / kInstalledPlanFile;
  std::string bytes;
  if (!plan.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat(path.string(), ": cannot serialize the plan"));
  }
  // A power cut leaves the previous plan or this one, never a torn file that
  // graceful restart would re-announce.
  return files::AtomicWriteFile(path.string(), bytes);
}

absl::StatusOr<PlanVerdict> PlanInstaller::Offer(const v1::SitePlan& plan) {
  absl::StatusOr<PlanVerdict> verdict = Install(plan);
  if (metrics_ != nullptr) metrics_->PlanOffered(verdict);
  return verdict;
}

absl::StatusOr<PlanVerdict> PlanInstaller::Install(const v1::SitePlan& plan) {
  if (auto status = ValidatePlan(plan, facility_id_); !status.ok()) return status;
  std::lock_guard lock(mu_);
  if (plan.epoch() < highest_epoch_) return PlanVerdict::kFencedOff;
  if (plan.epoch() == highest_epoch_ && plan.generation() <= installed_.generation()) {
    return PlanVerdict::kStale;
  }
  const v1::ForwardingTable effective = RepairPlan(plan, down_links_);
  const RibDiff diff = DiffRoutes(EffectivePlan(), effective);
  if (auto status = installer_->Apply(diff); !status.ok()) return status;
  if (auto status = Persist(plan); !status.ok()) {
    daemon::LogError("cannot persist the installed plan", {{"error", status.ToString()}});
  }
  daemon::LogInfo("plan installed", {{"generation", std::to_string(plan.generation())},
                                     {"epoch", std::to_string(plan.epoch())},
                                     {"added", std::to_string(diff.added.size())},
                                     {"changed", std::to_string(diff.changed.size())},
                                     {"removed", std::to_string(diff.removed.size())},
                                     {"reason", plan.reason()}});
  installed_ = plan;
  IndexInstalled(effective);
  highest_epoch_ = plan.epoch();
  return PlanVerdict::kInstalled;
}

absl::StatusOr<size_t> PlanInstaller::ApplyLinkEvents(const v1::LocalLinkEvents& events) {
  return ApplyLinkEvents(events, std::chrono::steady_clock::now());
}

absl::StatusOr<size_t> PlanInstaller::ApplyLinkEvents(const v1::LocalLinkEvents& events,
                                                      std::chrono::steady_clock::time_point now) {
  // Timed on the real clock (`now` places the report for the suspect filter,
  // and tests give their own): from the events' arrival, waiting for the
  // lock included, to the repaired routes handed to the route installer.
  const auto arrived = std::chrono::steady_clock::now();
  absl::StatusOr<size_t> changed = Repair(events, now);
  if (metrics_ != nullptr) {
    if (changed.ok() && *changed > 0) {
      metrics_->LocalRepaired(*changed, std::chrono::steady_clock::now() - arrived);
    } else if (!changed.ok() && changed.status().code() != absl::StatusCode::kInvalidArgument) {
      metrics_->LocalRepairFailed();
    }
  }
  return changed;
}

absl::StatusOr<size_t> PlanInstaller::Repair(const v1::LocalLinkEvents& events,
                                             std::chrono::steady_clock::time_point now) {
  if (events.facility_id() != facility_id_) {
    return absl::InvalidArgumentError(
        absl::StrCat("link events for facility \"", events.facility_id(), "\", not ", facility_id_));
  }
  std::lock_guard lock(mu_);
  DownLinks reported = events.snapshot() ? DownLinks{} : reported_down_;
  for (const v1::LinkReport& report : events.links()) {
    if (report.link_id().empty()) return absl::InvalidArgumentError("link event without a link id");
    if (report.health().state() == v1::OPER_STATE_DOWN) {
      reported.insert(report.link_id());
    } else {
      reported.erase(report.link_id());
    }
  }
  for (const v1::LinkReport& report : events.links()) known_links_.insert(report.link_id());
  DownLinks facility_links = known_links_;
  for (const auto& [link, routes] : routes_by_link_) facility_links.insert(link);
  facility_links.insert(reported.begin(), reported.end());
  const bool was_suspect = !suspect_filter_.suspect().empty();
  SuspectDownFilter::Verdict verdict = suspect_filter_.Update(reported, facility_links, now);
  if (verdict.held_now) {
    if (metrics_ != nullptr) metrics_->SuspectDownHeld();
    daemon::LogError("link-down reports held as a suspect measurement: keeping the routes (fail static) until the "
                     "links come back or the controller's next plan",
                     {{"suspect_links", absl::StrJoin(verdict.suspect, ",")},
                      {"reported_down", std::to_string(reported.size())},
                      {"facility_links", std::to_string(facility_links.size())},
                      {"suspect_reports", std::to_string(suspect_filter_.suspect_reports())}});
  } else if (was_suspect && verdict.suspect.empty()) {
    daemon::LogInfo("the links held as suspect are reported up again");
  }
  reported_down_ = std::move(reported);
  DownLinks down = std::move(verdict.repair);
  if (down == down_links_) return 0;
  // Only routes that use a link whose state changed can change.
  std::vector<int> affected;
  for (const DownLinks* side : {&down, &down_links_}) {
    const DownLinks& other = side == &down ? down_links_ : down;
    for (const std::string& link : *side) {
      if (other.contains(link)) continue;
      if (auto it = routes_by_link_.find(link); it != routes_by_link_.end()) {
        affected.insert(affected.end(), it->second.begin(), it->second.end());
      }
    }
  }
  std::sort(affected.begin(), affected.end());
  affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
  // Routes move (not copy) into the diff and back: a repair touches every
  // prefix behind a failed link, and copies would cost it its speed.
  RibDiff diff;
  std::vector<int> added_at, changed_at, removed_at;
  for (int index : affected) {
    std::optional<v1::ForwardingRoute> next = RepairRoute(installed_, installed_.routes(index), down);
    std::optional<v1::ForwardingRoute>& current = effective_[index];
    if (current && next) {
      if (SameForwarding(*current, *next)) continue;
      diff.changed.push_back({std::move(*current), std::move(*next)});
      changed_at.push_back(index);
    } else if (next) {
      diff.added.push_back(std::move(*next));
      added_at.push_back(index);
    } else if (current) {
      diff.removed.push_back(std::move(*current));
      removed_at.push_back(index);
    }
  }
  const absl::Status applied = installer_->Apply(diff);
  for (size_t i = 0; i < changed_at.size(); ++i) {
    effective_[changed_at[i]] = std::move(applied.ok() ? diff.changed[i].after : diff.changed[i].before);
  }
  for (size_t i = 0; i < added_at.size(); ++i) {
    if (applied.ok()) effective_[added_at[i]] = std::move(diff.added[i]);
  }
  for (size_t i = 0; i < removed_at.size(); ++i) {
    if (applied.ok()) {
      effective_[removed_at[i]].reset();
    } else {
      effective_[removed_at[i]] = std::move(diff.removed[i]);
    }
  }
  if (!applied.ok()) return applied;
  std::string links;
  for (const auto& link : down) absl::StrAppend(&links, links.empty() ? "" : ",", link);
  daemon::LogInfo("local repair", {{"down_links", links.empty() ? "none" : links},
                                   {"changed", std::to_string(diff.changed.size())},
                                   {"removed", std::to_string(diff.removed.size())},
                                   {"restored", std::to_string(diff.added.size())}});
  if (!diff.removed.empty()) {
    daemon::LogError("local repair found no surviving path for some prefixes; withdrawn",
                     {{"prefixes", std::to_string(diff.removed.size())}});
  }
  down_links_ = std::move(down);
  return diff.added.size() + diff.changed.size() + diff.removed.size();
}

absl::Status PlanInstaller::ExpireAll(const std::string& why) {
  std::lock_guard lock(mu_);
  v1::ForwardingTable none;
  none.set_facility_id(facility_id_);
  const RibDiff diff = DiffRoutes(EffectivePlan(), none);
  if (auto status = installer_->Apply(diff); !status.ok()) return status;
  std::error_code error;
  std::filesystem::remove(std::filesystem::path(state_dir_) / kInstalledPlanFile, error);
  daemon::LogError("installed routes expired and withdrawn",
                   {{"why", why}, {"routes", std::to_string(diff.removed.size())},
                    {"generation", std::to_string(installed_.generation())}});
  // The epoch stays: an old leader's plans are still refused.
  v1::SitePlan empty;
  empty.set_facility_id(facility_id_);
  empty.set_epoch(installed_.epoch());
  installed_ = empty;
  effective_.clear();
  routes_by_link_.clear();
  return absl::OkStatus();
}

bool PlanInstaller::WaitSentToRouters(std::chrono::steady_clock::time_point deadline) {
  // Not under mu_: the wait must not hold up local repair (the route
  // installer is thread-safe on its own).
  return installer_->WaitSentToRouters(deadline);
}

v1::SitePlan PlanInstaller::installed() const {
  std::lock_guard lock(mu_);
  return installed_;
}

uint64_t PlanInstaller::installed_generation() const {
  std::lock_guard lock(mu_);
  return installed_.generation();
}

v1::ForwardingTable PlanInstaller::effective() const {
  std::lock_guard lock(mu_);
  return EffectivePlan();
}

DownLinks PlanInstaller::down_links() const {
  std::lock_guard lock(mu_);
  return down_links_;
}

DownLinks PlanInstaller::suspect_links() const {
  std::lock_guard lock(mu_);
  return suspect_filter_.suspect();
}

uint64_t PlanInstaller::suspect_down_reports() const {
  std::lock_guard lock(mu_);
  return suspect_filter_.suspect_reports();
}

uint64_t PlanInstaller::highest_epoch() const {
  std::lock_guard lock(mu_);
  return highest_epoch_;
}

InstalledSummary PlanInstaller::summary() const {
  std::lock_guard lock(mu_);
  InstalledSummary summary{.generation = installed_.generation(),
                           .epoch = installed_.epoch(),
                           .down_links = down_links_.size(),
                           .suspect_links = suspect_filter_.suspect().size()};
  for (const auto& route : effective_) summary.routes_on_routers += route ? 1 : 0;
  return summary;
}

}  // namespace geodesic::routerd
