#pragma once
// Why the planner solves, as a small fixed set (the `cause` label of
// geodesic_pathcomp_solves_total). The free-text reason of a solve says which
// link or intent; the cause is its kind, so the metric's label values stay few.
#include <array>
#include <bitset>
#include <string_view>

namespace geodesic::pathcomp {

enum class SolveCause {
  kStartup,    // the first plan of a start
  kTelemetry,  // a link's state or a fabric plane's health changed, as an agent reported
  kIntent,     // an operator intent was added, removed or expired (here or through etcd)
  kWorkload,   // a workload was added or removed (here or through etcd)
  kInventory,  // the inventory changed (an import, or a release from etcd)
  kLeader,     // this replica was elected leader
};

inline constexpr std::array<SolveCause, 6> kSolveCauses = {SolveCause::kStartup,  SolveCause::kTelemetry,
                                                           SolveCause::kIntent,   SolveCause::kWorkload,
                                                           SolveCause::kInventory, SolveCause::kLeader};

// "startup", "telemetry", "intent", "workload", "inventory", "leader".
constexpr std::string_view SolveCauseName(SolveCause cause) {
  switch (cause) {
    case SolveCause::kStartup: return "startup";
    case SolveCause::kTelemetry: return "telemetry";
    case SolveCause::kIntent: return "intent";
    case SolveCause::kWorkload: return "workload";
    case SolveCause::kInventory: return "inventory";
    case SolveCause::kLeader: return "leader";
  }
  return "unknown";
}

// The causes one solve served (requests within a debounce window are one solve).
class SolveCauses {
 public:
  SolveCauses() = default;
  explicit SolveCauses(SolveCause cause) { Add(cause); }
  void Add(SolveCause cause) { bits_.set(static_cast<size_t>(cause)); }
  bool Has(SolveCause cause) const { return bits_.test(static_cast<size_t>(cause)); }
  bool empty() const { return bits_.none(); }

 private:
  std::bitset<kSolveCauses.size()> bits_;
};

}  // namespace geodesic::pathcomp
