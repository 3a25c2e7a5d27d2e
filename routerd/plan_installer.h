#pragma once
// Decides which plans routerd installs and keeps the installed one on disk.
//  - Fencing: a plan is applied only when its epoch is the highest seen, and
//    within that epoch only when its generation is newer than the installed one.
//  - Fail-static: nothing is withdrawn because a controller went away; only a
//    newer plan changes the routes.
//  - The installed plan is written to `state_dir` (atomically) and restored at start.
// Thread-safe.
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/plan.pb.h"
#include "routerd/route_installer.h"

namespace geodesic::routerd {

enum class PlanVerdict { kInstalled, kStale, kFencedOff };

class PlanInstaller {
 public:
  // Restores the installed plan from `state_dir` (and re-applies it through
  // `installer`); DataLoss when the stored plan is corrupt.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PlanInstaller>> Open(
      std::string facility_id, std::string state_dir, RouteInstallerPtr installer);

  // Validates and, if it passes fencing, installs `plan`.
  // InvalidArgument for a plan of another facility or with malformed routes.
  [[nodiscard]] absl::StatusOr<PlanVerdict> Offer(const v1::SitePlan& plan);

  // The installed plan (empty SitePlan with generation 0 when none).
  v1::SitePlan installed() const;
  uint64_t highest_epoch() const;

 private:
  PlanInstaller(std::string facility_id, std::string state_dir, RouteInstallerPtr installer);
  absl::Status Persist(const v1::SitePlan& plan) const;

  const std::string facility_id_;
  const std::string state_dir_;
  mutable std::mutex mu_;
  RouteInstallerPtr installer_;
  v1::SitePlan installed_;
  uint64_t highest_epoch_ = 0;
};

}  // namespace geodesic::routerd
