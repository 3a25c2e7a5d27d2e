#pragma once
// Protected classes (McfClassPolicy::protection): the check that proves a
// plan failure-safe and the model that makes the next allocation so.
//
// The check forwards, for every single failure of the class's kind, the
// demands of the class and of the classes before it (strict priority: lower
// classes queue behind) through the plan's own routes, each site repairing
// its own down links the way routerd does (forwarded_loads.h), and compares
// every link's load with protection_limit x its capacity. Exhaustive: every
// failure of the kind that takes down a usable link.
//
// What a check finds broken becomes McfFailureLimits, and the failures a
// McfFailure with the plan's repair in linear form: for each site whose
// route toward a destination the failure changes, what one unit of traffic
// entering it there loads on each link as forwarded. The planner re-solves
// with them, rebuilds the plan and checks again (plan_builder.cc).
//
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/forwarded_loads.h"
#include "pathcomp/solver/mcf_problem.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

// One failure a class may be protected against.
struct ProtectionFailure {
  std::string name;        // "link iad-dfw", "srlg conduit-7", "facility ord"
  std::vector<int> links;  // snapshot link indices it takes down, ascending
  int facility = -1;       // a facility failure: the facility (its demands leave with it)
};

// The failures of `kind` that take down at least one usable link: each
// fiber (a link and its reverse: the link back between the same facilities,
// parallel ones paired in order), each SRLG, each facility (its links both
// ways; the facility's own demands leave with it).
std::vector<ProtectionFailure> ProtectionFailures(const Snapshot& snapshot, ProtectionKind kind);

// What the check found for one protected class.
struct ClassProtectionCheck {
  uint32_t priority = 0;
  ProtectionKind kind = ProtectionKind::kNone;
  double limit = 1;
  uint32_t failures_checked = 0;
  double worst_utilization = 0;  // after the worst failure, on its most loaded link
  std::string worst_failure;
  std::string worst_link;
  // Every (failure, link) over the limit: failure indexes the check's failures.
  struct Broken {
    int failure = 0;
    int link = 0;
  };
  std::vector<Broken> broken;
  bool failure_safe() const { return broken.empty(); }
};

// The tightest facility cut of one protected class: after `failure`, the
// traffic `facility` sends (or receives) of the class and the classes before
// it, toward (from) the facilities it still reaches, against what its
// remaining links carry at the class's limit. Over room, no allocation and
// no repair protects the class against that failure: every unit of it must
// cross those links.
struct FacilityCut {
  uint32_t priority = 0;
  int failure = -1;  // index into ProtectionChecker::failures(); -1: none constrains
  int facility = -1;
  bool sending = true;
  double gbps = 0;
  double room_gbps = 0;  // limit x the capacity of its links the failure leaves
  bool shortfall() const;
  // "after link a-b, facility a sends 120 Gbps of class 0 and the classes before it, and its other
  // links carry 100 Gbps at the limit".
  std::string Describe(const Snapshot& snapshot, const std::vector<ProtectionFailure>& failures) const;
};

class ProtectionChecker {
 public:
  // The snapshot's protected classes (those with demand) and their failures.
  ProtectionChecker(const Snapshot& snapshot, const McfClassPolicies& policies);

  bool empty() const { return classes_.empty(); }
  // Every failure any protected class is checked against.
  const std::vector<ProtectionFailure>& failures() const { return failures_; }

  // Checks `plan` (built from the snapshot), class by class, priority order.
  std::vector<ClassProtectionCheck> Check(const v1::Plan& plan) const;

  // Per protected class, its facility cut with the least room for its
  // traffic (the largest gbps / room_gbps) over every failure of its kind.
  std::vector<FacilityCut> TightestFacilityCuts() const;

  // The linear model of `plan`'s repair for `failures` (indices into
  // failures()), as McfProblem::protection failures in that order.
  std::vector<McfFailure> RepairModel(const v1::Plan& plan, const std::vector<int>& failures) const;

 private:
  struct ProtectedClass {
    uint32_t priority;
    ProtectionKind kind;
    double limit;
    std::vector<int> failures;  // indices into failures_
  };
  // The demands of the classes up to `priority`, as forwarded flows, without
  // those of facilities the failure takes down.
  std::vector<FlowDemand> FlowsUpTo(uint32_t priority, const std::set<int>& lost_facilities) const;
  ForwardingPlan Forwarding(const v1::Plan& plan) const;

  const Snapshot& snapshot_;
  std::vector<ProtectedClass> classes_;
  std::vector<ProtectionFailure> failures_;
  std::vector<std::set<int>> lost_facilities_;  // per failure: facilities it takes out whole
  std::set<std::string> prefixes_;             // the destination prefixes of the demands checked
};

}  // namespace geodesic::pathcomp
