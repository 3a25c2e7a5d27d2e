#pragma once
// Allocates elephant flows: a splittable multi-commodity flow solved by path
// column generation, class by class in priority order (McfProblem says what
// each class optimizes). Commodities with the same source, destination and
// priority are routed together and share their paths in proportion to demand.
//
// Quality: a class's result is optimal for its LP (paths over all simple
// paths) within McfSolverConfig::relative_gap, proven by a Lagrangian lower
// bound for kMinMaxUtilization classes (and the MLU step of kMinLatency);
// the throughput and latency LPs stop when no path prices out, which is
// their exact optimum. With failure limits (McfProblem::protection) a path's
// load after a failure is not a sum over its arcs: pricing searches with the
// rows' prices on their arcs, then, for a path a failure diverts, again with
// the failed arcs priced at what the diversion puts on the rows, and admits
// a path only when its exact reduced cost improves. The limits always hold
// when the result says so, but that search is not an exact oracle: on small
// random networks it misses the protected optimum rarely (1 in 87, 6.7%
// above it; tests/pathcomp/mcf_protection_test.cc).
//
// Warm re-solve: the solver keeps the paths and the LP bases of its last
// solve. Resolve() after capacities changed (a link failed, was drained or
// came back) drops the paths that cross a dead arc, restarts each LP from its
// last basis and prices only what changed, which is far cheaper than Solve().
// Most single failures need no LP at all: what they broke is routed at a
// utilization already proven optimal (internal/failure_absorber.h). After
// demands changed, or flows came and went, each (priority, src, dst) that
// was there before starts from its paths, their flows scaled to its new
// demand: the traffic matrix moves all the time, and a cold solve of a large
// backbone takes seconds.
//
// Pure: no I/O, no clock, no threads. Not thread-safe (it holds the warm
// state); use one solver per thread.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "pathcomp/solver/mcf_problem.h"

namespace geodesic::pathcomp {
namespace internal {
struct SolverState;
}  // namespace internal

struct McfSolverConfig {
  // A kMinMaxUtilization class stops when its utilization is within this
  // fraction of the proven lower bound, or when no path can improve it.
  double relative_gap = 1e-5;
  // Bounds the work per class and phase; the result then reports a larger gap.
  int max_pricing_rounds = 1000;
  // Paths added to a master per pricing round, the most improving first
  // (cold, on Cogentco's 37,805 flows: 100 took 48 rounds and 700-740 ms,
  // 200 29 rounds and 575-590 ms, 300 550-600 ms, 500 620-680 ms; on 200
  // generated facilities 200 was as fast as 100, on 754 all the same).
  int max_new_paths_per_round = 200;
  // The same for the latency phase, which starts from the MLU flows and
  // moves thousands of groups to shorter paths (on Cogentco, 1,000 per
  // round solved the latency class in 1.6-1.9 s, 100 in 2.7-3.6 s, 300 in
  // 1.8-2.3 s, 3,000 in 2.4-2.9 s, all of them at once in 5.6-6.2 s).
  int max_new_paths_per_latency_round = 1000;
  // Threads a pricing round may use (ColumnGenerationLimits::threads): the
  // allocation is the same whatever the number.
  int threads = 1;
};

// One path of a commodity: a view into the McfPaths it came from.
struct McfPathFlow {
  std::span<const int> arcs;  // arc indices from the commodity's src to its dst
  double gbps = 0;
};

// The paths with flow of every commodity, held in one block of memory: a
// re-solve of a small network would otherwise spend most of its time
// allocating a vector per commodity and path. Copies are independent.
class McfPaths {
 public:
  // The paths of one commodity, in the order they were added.
  class Range {
   public:
    class Iterator {
     public:
      using iterator_category = std::forward_iterator_tag;
      using value_type = McfPathFlow;
      using difference_type = std::ptrdiff_t;
      using pointer = void;
      using reference = McfPathFlow;
      Iterator() = default;
      McfPathFlow operator*() const { return paths_->At(entry_); }
      Iterator& operator++() { ++entry_; return *this; }
      Iterator operator++(int) { Iterator before = *this; ++entry_; return before; }
      bool operator==(const Iterator&) const = default;

     private:
      friend class Range;
      Iterator(const McfPaths* paths, size_t entry) : paths_(paths), entry_(entry) {}
      const McfPaths* paths_ = nullptr;
      size_t entry_ = 0;
    };
    Iterator begin() const { return {paths_, begin_}; }
    Iterator end() const { return {paths_, end_}; }
    size_t size() const { return end_ - begin_; }
    bool empty() const { return begin_ == end_; }
    McfPathFlow operator[](size_t i) const { return paths_->At(begin_ + i); }

   private:
    friend class McfPaths;
    Range(const McfPaths* paths, size_t begin, size_t end) : paths_(paths), begin_(begin), end_(end) {}
    const McfPaths* paths_;
    size_t begin_, end_;
  };

  McfPaths() = default;
  // `commodities` commodities, none with a path yet.
  explicit McfPaths(size_t commodities) : first_(commodities + 1, 0) {}

  size_t size() const { return first_.empty() ? 0 : first_.size() - 1; }  // commodities
  Range operator[](size_t commodity) const;
  // Appends a path to `commodity` (< size()); paths are added commodity by
  // commodity in increasing order (anything else aborts: a caller's bug).
  void Add(size_t commodity, std::span<const int> arcs, double gbps);
  void Reserve(size_t paths, size_t arcs);
  size_t path_count() const { return entries_.size(); }  // over every commodity
  size_t arc_count() const { return arcs_.size(); }

 private:
  struct Entry {
    size_t first_arc;
    size_t arc_count;
    double gbps;
  };
  McfPathFlow At(size_t entry) const {
    const Entry& e = entries_[entry];
    return {std::span<const int>(arcs_).subspan(e.first_arc, e.arc_count), e.gbps};
  }
  std::vector<int> arcs_;
  std::vector<Entry> entries_;
  // first_[c]: c's first entry, for c up to last_ (the last commodity with a
  // path); the commodities after it have none yet.
  std::vector<size_t> first_;
  size_t last_ = 0;
};

struct McfClassResult {
  uint32_t priority = 0;
  McfObjective objective = McfObjective::kMinMaxUtilization;
  double demand_gbps = 0;   // of the routable commodities
  double carried_gbps = 0;
  // Highest arc utilization with this class and those before it on the
  // network; under kMinMaxUtilization, what the class minimized.
  double max_utilization = 0;
  // kMinMaxUtilization: a proven lower bound on the optimal max_utilization.
  double utilization_lower_bound = 0;
  // kMaxFairThroughput: the common fraction of demand every routable flow
  // of the class got at least (1 when everything fits).
  double fair_fraction = 1;
  // kMinLatency: the utilization no link exceeds (LatencyUtilizationCap of
  // the class's MLU optimum); utilization_lower_bound bounds that optimum.
  double utilization_cap = 0;
  // Protected classes (McfProblem::protection): how many failure limits the
  // class was held to, and the largest excess over one (0 when every limit
  // holds), with its failure (index) and arc.
  int failure_limits = 0;
  double failure_limit_excess_gbps = 0;
  int failure_limit_excess_failure = -1;
  int failure_limit_excess_arc = -1;
};

struct McfSolveStats {
  bool warm = false;        // Resolve() reused the previous state
  int pricing_rounds = 0;   // over every class and phase
  int lp_solves = 0;
  // Phases a re-solve finished without an LP: what the failure broke fit
  // below a utilization proven optimal (the old optimum, or the one the
  // last link prices prove without the failed arcs).
  int absorbed_phases = 0;
  int columns = 0;          // paths held at the end
  int pricing_threads = 1;  // the most threads a pricing round shared its sources out to
  // McfProtection::stop ended a protected class's phase: the failure limits
  // may not hold, and failure_limit_excess_gbps proves nothing.
  bool stopped = false;
};

struct McfAllocation {
  // Per commodity of the problem, same index.
  McfPaths paths;  // paths with flow > 0
  std::vector<double> carried_gbps;
  // Per arc: the load of every class.
  std::vector<double> arc_load_gbps;
  // load / capacity over the arcs with capacity > 0.
  double max_utilization = 0;
  std::vector<McfClassResult> classes;  // by priority, 0 first
  // Commodities with no path over usable arcs (carried 0).
  std::vector<int> unroutable;
  McfSolveStats stats;
};

class McfSolver {
 public:
  explicit McfSolver(McfSolverConfig config = {});
  ~McfSolver();
  McfSolver(const McfSolver&) = delete;
  McfSolver& operator=(const McfSolver&) = delete;

  // Solves from scratch and keeps the state for Resolve(). InvalidArgument
  // for an invalid problem; Internal when the LP solver fails.
  [[nodiscard]] absl::StatusOr<McfAllocation> Solve(const McfProblem& problem);

  // Solves `problem` starting from the last solve's state. Warm on the same
  // network (nodes and arc endpoints), whatever else changed: capacities,
  // costs, fabric limits, class objectives, commodities and their demands;
  // otherwise it is Solve(). The optimum is Solve()'s (within the gap).
  [[nodiscard]] absl::StatusOr<McfAllocation> Resolve(const McfProblem& problem);

  // McfSolverConfig::threads from the next solve on (at least 1).
  void set_threads(int threads);

 private:
  McfSolverConfig config_;
  std::unique_ptr<internal::SolverState> state_;
};

}  // namespace geodesic::pathcomp
