#include "routerd/local_repair_log.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace geodesic::routerd {

LocalRepairLog::LocalRepairLog(std::string facility_id, std::string state_dir)
    : path_(absl::StrCat(state_dir, "/", kFileName)) {
  log_.set_facility_id(std::move(facility_id));
  // A restart starts a new record: what was repaired before is in the old one's past.
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

absl::Status LocalRepairLog::Record(const DownLinks& down_links, int64_t at_unix_ms, uint32_t routes_changed) {
  std::lock_guard lock(mu_);
  v1::LocalRepair& repair = *log_.add_repairs();
  repair.set_at_unix_ms(at_unix_ms);
  for (const std::string& link : down_links) repair.add_down_links(link);
  repair.set_routes_changed(routes_changed);
  if (log_.repairs_size() > kKept) log_.mutable_repairs()->DeleteSubrange(0, log_.repairs_size() - kKept);
  const std::string temp = path_ + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out || !log_.SerializeToOstream(&out)) return absl::UnavailableError(absl::StrCat(temp, ": cannot write"));
  }
  std::error_code error;
  std::filesystem::rename(temp, path_, error);
  if (error) return absl::UnavailableError(absl::StrCat(path_, ": ", error.message()));
  return absl::OkStatus();
}

}  // namespace geodesic::routerd
