#pragma once
// Keeps routerd's record of its local repairs in its state directory
// (local-repairs.pb, a LocalRepairLog: the newest kKept repairs), so a live
// drill or a test can ask when a facility repaired without reading its log.
// The record is written after the routers have the repaired routes: it never
// slows a repair. Thread-safe.
#include <cstdint>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "geodesic/v1/plan.pb.h"
#include "routerd/local_repair.h"

namespace geodesic::routerd {

class LocalRepairLog {
 public:
  static constexpr int kKept = 64;
  static constexpr char kFileName[] = "local-repairs.pb";

  LocalRepairLog(std::string facility_id, std::string state_dir);

  // Appends one repair (dropping the oldest beyond kKept) and rewrites the
  // file (temporary file, then rename). Unavailable when it cannot be written;
  // the repair itself stands either way.
  [[nodiscard]] absl::Status Record(const DownLinks& down_links, int64_t at_unix_ms, uint32_t routes_changed);

 private:
  const std::string path_;
  std::mutex mu_;
  v1::LocalRepairLog log_;  // guarded by mu_
};

}  // namespace geodesic::routerd
