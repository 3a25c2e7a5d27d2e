#pragma once
// What the chain placer's tests share: a model built by hand, a chain
// plan compared with another in words, and random pins. Test-only.
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/chain_placer.h"
#include "tests/pathcomp/link_testing.h"

namespace geodesic::pathcomp::testing {

class ModelBuilder {
 public:
  void Facility(const std::string& id) {
    v1::Facility facility;
    facility.set_id(id);
    facility.add_prefixes(absl::StrCat("10.", view_.facilities.size(), ".0.0/16"));
    view_.facilities.push_back(facility);
  }
  // One directed link.
  void Link(const std::string& src, const std::string& dst, uint64_t latency_us,
            const std::string& srlg = "") {
    v1::Link link = UpLink(absl::StrCat(src, "-", dst, "-", view_.links.size()), src, dst, latency_us);
    link.set_capacity_gbps(100);
    if (!srlg.empty()) link.add_srlgs(srlg);
    view_.links.push_back(link);
  }
  void Fiber(const std::string& a, const std::string& b, uint64_t latency_us,
             const std::string& srlg = "") {
    Link(a, b, latency_us, srlg);
    Link(b, a, latency_us, srlg);
  }
  void Service(const std::string& id, std::vector<std::string> replicas, uint64_t time_us) {
    v1::Service service;
    service.set_id(id);
    for (const auto& replica : replicas) service.add_replica_facility_ids(replica);
    service.set_service_time_us(time_us);
    view_.services.push_back(service);
  }
  void ChainWorkload(const std::string& id, const std::string& origin,
                     std::vector<std::string> services, uint64_t budget_us) {
    v1::Workload workload;
    workload.set_id(id);
    workload.mutable_chain()->set_origin_facility_id(origin);
    for (const auto& service : services) workload.mutable_chain()->add_service_ids(service);
    workload.mutable_chain()->set_latency_budget_us(budget_us);
    view_.workloads.push_back(workload);
  }
  void Elephant(const std::string& id, const std::string& src, int dst_facility) {
    v1::Workload workload;
    workload.set_id(id);
    workload.mutable_elephant()->set_src_facility_id(src);
    workload.mutable_elephant()->set_dst_prefix(view_.facilities[dst_facility].prefixes(0));
    workload.mutable_elephant()->set_demand_gbps(10);
    view_.workloads.push_back(workload);
  }
  // A pin intent on a chain: its facility set, and/or the replica of every call.
  void Pin(const std::string& workload_id, std::vector<std::string> allowed, std::vector<std::string> path) {
    v1::Intent intent;
    intent.set_id(absl::StrCat("pin-", workload_id));
    intent.mutable_pin()->set_workload_id(workload_id);
    for (const auto& id : allowed) intent.mutable_pin()->add_allowed_facility_ids(id);
    for (const auto& id : path) intent.mutable_pin()->add_path_facility_ids(id);
    view_.intents.push_back(intent);
  }
  ModelView& view() { return view_; }

 private:
  ModelView view_;
};

// The first difference between two chain plans, in words; empty when equal.
inline std::string FirstDifference(const Snapshot& snapshot, const ChainPlan& got, const ChainPlan& want) {
  auto describe = [&](const ChainPlacement& p, const Chain& c) {
    std::ostringstream out;
    out << (p.placed ? "placed" : "unplaced") << " total=" << p.total_us << " within=" << p.within_budget
        << " failed_call=" << p.failed_call << " reason='" << p.Reason(snapshot, c) << "' hops:";
    for (const ChainHop& hop : p.hops) {
      out << " [" << hop.service << "@" << hop.replica << " rtt=" << hop.network_rtt_us << " there=";
      for (int l : hop.links_there) out << l << ",";
      out << " back=";
      for (int l : hop.links_back) out << l << ",";
      out << "]";
    }
    return out.str();
  };
  if (got.primary.size() != want.primary.size()) return "different chain counts";
  for (size_t c = 0; c < want.primary.size(); ++c) {
    const std::string chain = snapshot.workload_id(snapshot.chains()[c].workload);
    const Chain& spec = snapshot.chains()[c];
    if (!(got.primary[c] == want.primary[c])) {
      return absl::StrCat("primary of ", chain, ": got ", describe(got.primary[c], spec), " want ",
                          describe(want.primary[c], spec));
    }
    const std::vector<ChainBackup> got_backups = got.backups_of(static_cast<int>(c));
    const std::vector<ChainBackup> want_backups = want.backups_of(static_cast<int>(c));
    if (got_backups.size() != want_backups.size()) {
      return absl::StrCat(chain, ": ", got_backups.size(), " backups, want ", want_backups.size());
    }
    for (size_t i = 0; i < want_backups.size(); ++i) {
      const ChainBackup& g = got_backups[i];
      const ChainBackup& w = want_backups[i];
      if (!(g.failure == w.failure)) return absl::StrCat(chain, ": backup ", i, " protects something else");
      if (!(g.placement == w.placement)) {
        return absl::StrCat("backup of ", chain, " for failure kind ", static_cast<int>(w.failure.kind), " index ",
                            w.failure.index, ": got ", describe(g.placement, spec), " want ", describe(w.placement, spec));
      }
    }
  }
  for (size_t i = 0; i < std::max(got.dependencies.size(), want.dependencies.size()); ++i) {
    if (i >= got.dependencies.size() || i >= want.dependencies.size() ||
        !(got.dependencies[i] == want.dependencies[i])) {
      auto text = [&](const std::vector<FacilityDependency>& list) {
        if (i >= list.size()) return std::string("(none)");
        return absl::StrCat(snapshot.workload_id(list[i].workload), "@", snapshot.facility_id(list[i].facility), ": ",
                            list[i].Reason(snapshot));
      };
      return absl::StrCat("dependency ", i, ": got ", text(got.dependencies), " want ", text(want.dependencies));
    }
  }
  return "";
}

// Pins chain `id` (of `length` calls) at random: to a facility set (one
// chain in `set_one_in`, each of the `facilities` kept unless one in
// `leave_one_out`), or else to a replica per call (one in `path_one_in`).
inline void RandomPin(std::mt19937& random, ModelBuilder& model, const std::string& id, int length, int facilities,
                      int set_one_in, int leave_one_out, int path_one_in) {
  auto f = [](int i) { return absl::StrCat("f", i); };
  if (random() % set_one_in == 0) {
    std::vector<std::string> allowed;
    for (int i = 0; i < facilities; ++i) {
      if (random() % leave_one_out != 0) allowed.push_back(f(i));
    }
    model.Pin(id, allowed, {});
  } else if (random() % path_one_in == 0) {
    std::vector<std::string> path;
    for (int i = 0; i < length; ++i) path.push_back(f(random() % facilities));
    model.Pin(id, {}, path);
  }
}

}  // namespace geodesic::pathcomp::testing
