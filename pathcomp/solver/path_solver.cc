#include "pathcomp/solver/path_solver.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>

#include "pathcomp/solver/failure_distances.h"
#include "pathcomp/solver/internal/loop_free_backups.h"
#include "pathcomp/solver/shortest_paths.h"
#include "site_plan/site_plan_reader.h"
#include "site_plan/site_plan_writer.h"

namespace geodesic::pathcomp {
namespace {

using internal::BackupRoom;
using internal::FindLoopFreeBackup;
using internal::FlatHops;
using internal::FollowedLinks;
using internal::FollowInstalled;
using internal::InstalledHops;
using internal::ReturnedShares;

constexpr uint64_t kInfinity = kUnreachable;

// Every first-hop arc of `source` that starts a shortest path to `dst`.
std::vector<int> EqualCostFirstLinks(const Snapshot& snapshot, int source, int dst,
                                     const ShortestPaths& from_source,
                                     const std::vector<ShortestPaths>& to_dst_from_neighbor,
                                     const Exclusion& exclusion) {
  std::vector<int> links;
  for (const int link : snapshot.out_links(source)) {
    if (exclusion.Excludes(snapshot, link)) continue;
    const uint64_t rest = to_dst_from_neighbor[snapshot.link_dst(link)].distance_us[dst];
    if (rest == kInfinity) continue;
    if (snapshot.link_state(link).cost_us + rest == from_source.distance_us[dst]) {
      links.push_back(link);
    }
  }
  std::sort(links.begin(), links.end());
  return links;
}

// The facilities from `source` to `dst` along the heaviest next hop at each
// (ties: lowest link index), and the links taken. WCMP routes are loop-free,
// so this ends at dst; the bound only guards against a malformed Wcmp.
void HeaviestPath(const Snapshot& snapshot, const Wcmp& wcmp, int source, int dst, std::vector<int>* path,
                  std::vector<int>* links) {
  path->assign(1, source);
  links->clear();
  for (int at = source; at != dst && static_cast<int>(links->size()) < snapshot.facility_count();) {
    const auto& hops = wcmp.route(at, dst).next_hops;
    if (hops.empty()) break;
    const WeightedNextHop* best = &hops.front();
    for (const WeightedNextHop& hop : hops) {
      if (hop.weight > best->weight) best = &hop;  // hops are by link index: ties keep the lowest
    }
    links->push_back(best->link);
    at = snapshot.link_dst(best->link);
    path->push_back(at);
  }
}

// One site's plan tables, filled as routes come (site_plan_writer.h), with
// the snapshot's dense indices mapped to the table's: each link, facility
// and failure is turned into strings once per site, not once per use.
class SiteTables {
 public:
  SiteTables(const Snapshot& snapshot, v1::SitePlan* site)
      : snapshot_(snapshot),
        writer_(site),
        ports_(static_cast<size_t>(snapshot.link_count()), kNone),
        facilities_(static_cast<size_t>(snapshot.facility_count()), kNone),
        link_failures_(static_cast<size_t>(snapshot.link_count()), kNone),
        single_link_groups_(static_cast<size_t>(snapshot.link_count()), kNone),
        facility_failures_(static_cast<size_t>(snapshot.facility_count()), kNone) {}

  uint32_t Facility(int facility) {
    uint32_t& index = facilities_[static_cast<size_t>(facility)];
    if (index == kNone) index = writer_.Facility(snapshot_.facility_id(facility));
    return index;
  }

  // `links` with `weights` (empty: each 1).
  uint32_t Group(std::span<const int> links, std::span<const uint32_t> weights) {
    ports_scratch_.clear();
    for (const int link : links) {
      uint32_t& index = ports_[static_cast<size_t>(link)];
      if (index == kNone) {
        index = writer_.Port(snapshot_.link_id(link), snapshot_.facility_id(snapshot_.link_dst(link)),
                             snapshot_.link_dst_node(link));
      }
      ports_scratch_.push_back(index);
    }
    if (weights.empty()) {
      weights_scratch_.assign(links.size(), 1);
      return writer_.Group(ports_scratch_, weights_scratch_);
    }
    return writer_.Group(ports_scratch_, weights);
  }

  // The group of `link` alone, weight 1.
  uint32_t SingleLinkGroup(int link) {
    uint32_t& index = single_link_groups_[static_cast<size_t>(link)];
    if (index == kNone) {
      single_link_scratch_.assign(1, link);
      index = Group(single_link_scratch_, {});
    }
    return index;
  }

  // Paths asked one after the other share prefixes (a route's backups
  // leave its primary late, a detour around a later facility leaves the one
  // around an earlier late): the nodes of the longest prefix shared with the
  // last path are taken from it, the rest looked up.
  uint32_t Path(std::span<const int> facilities, uint64_t latency_us) {
    size_t shared = 0;
    while (shared < facilities.size() && shared < last_path_.size() && facilities[shared] == last_path_[shared]) {
      ++shared;
    }
    last_path_.resize(shared);
    last_nodes_.resize(shared);
    uint32_t node = shared == 0 ? 0 : last_nodes_.back();
    for (size_t i = shared; i < facilities.size(); ++i) {
      node = PathNode(node, facilities[i]);
      last_path_.push_back(facilities[i]);
      last_nodes_.push_back(node);
    }
    return PathEndingAt(node, latency_us);
  }

  // The node of `parent`'s path followed by `facility` in the site's path
  // tree, and the path that ends at a node (site_plan_writer.h).
  uint32_t PathNode(uint32_t parent, int facility) { return writer_.PathNode(parent, Facility(facility)); }
  uint32_t PathEndingAt(uint32_t node, uint64_t latency_us) { return writer_.PathEndingAt(node, latency_us); }

  uint32_t Failure(const Exclusion& failure) {
    uint32_t* index = nullptr;
    if (failure.link >= 0) {
      index = &link_failures_[static_cast<size_t>(failure.link)];
    } else if (failure.srlg >= 0) {
      if (srlg_failures_.size() <= static_cast<size_t>(failure.srlg)) {
        srlg_failures_.resize(static_cast<size_t>(failure.srlg) + 1, kNone);
      }
      index = &srlg_failures_[static_cast<size_t>(failure.srlg)];
    } else {
      index = &facility_failures_[static_cast<size_t>(failure.facility)];
    }
    if (*index != kNone) return *index;
    v1::FailureScope scope;
    if (failure.link >= 0) {
      scope.set_kind(v1::FAILURE_KIND_LINK);
      scope.set_id(snapshot_.link_id(failure.link));
    } else if (failure.srlg >= 0) {
      scope.set_kind(v1::FAILURE_KIND_SRLG);
      scope.set_id(snapshot_.srlg_name(failure.srlg));
    } else {
      scope.set_kind(v1::FAILURE_KIND_FACILITY);
      scope.set_id(snapshot_.facility_id(failure.facility));
    }
    *index = writer_.Failure(scope);
    return *index;
  }

  site_plan::SitePlanWriter& writer() { return writer_; }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  const Snapshot& snapshot_;
  site_plan::SitePlanWriter writer_;
  std::vector<uint32_t> ports_, facilities_, link_failures_, single_link_groups_, facility_failures_, srlg_failures_;
  std::vector<int> single_link_scratch_;
  std::vector<uint32_t> ports_scratch_, weights_scratch_;
  std::vector<int> last_path_;         // the facilities of the last Path()
  std::vector<uint32_t> last_nodes_;   // the tree node of each of its prefixes
};

// The path-tree node of each detour of one site and its first link. A
// detour is walked back from its destination only as far as a facility
// whose path from the site is placed already: under this failure, or,
// where the failure leaves that path as it was, under none (those stay
// placed for the whole site). A failure's detours share all but their last
// few facilities, and most with the unfailed tree.
class DetourNodes {
 public:
  explicit DetourNodes(int facility_count)
      : unfailed_(static_cast<size_t>(facility_count)), failed_(static_cast<size_t>(facility_count)) {}

  void StartSite(int source, SiteTables& tables) {
    ++site_;
    source_ = source;
    root_ = tables.PathNode(0, source);
  }
  // After FailureDistances::SetFailure.
  void StartFailure() { ++failure_; }

  // The node of the path `detours` has from the site to `dst` (reachable
  // under the current failure) and its first link.
  std::pair<uint32_t, int> NodeOf(int dst, FailureDistances& detours, SiteTables& tables) {
    climb_.clear();
    uint32_t node = root_;
    int first_link = -1;
    for (int at = dst; at != source_ && climb_.size() < unfailed_.size();) {
      const FailureDistances::LastStep step = detours.LastStepTo(source_, at);
      if (step.before < 0) break;  // not reachable after all: the caller asked Distance first
      const Placed& placed = (step.unfailed ? unfailed_ : failed_)[static_cast<size_t>(at)];
      if (placed.stamp == (step.unfailed ? site_ : failure_)) {
        node = placed.node;
        first_link = placed.first_link;
        break;
      }
      climb_.push_back({at, step.link, step.unfailed});
      at = step.before;
    }
    for (auto step = climb_.rbegin(); step != climb_.rend(); ++step) {
      node = tables.PathNode(node, step->facility);
      if (first_link < 0) first_link = step->link;  // the step out of the site
      (step->unfailed ? unfailed_ : failed_)[static_cast<size_t>(step->facility)] =
          Placed{.stamp = step->unfailed ? site_ : failure_, .node = node, .first_link = first_link};
    }
    return {node, first_link};
  }

 private:
  struct Placed {
    uint32_t stamp = 0;  // the site_ or failure_ it was placed under
    uint32_t node = 0;
    int first_link = -1;
  };
  struct Step {
    int facility, link;
    bool unfailed;
  };
  std::vector<Placed> unfailed_, failed_;  // per facility
  std::vector<Step> climb_;
  uint32_t site_ = 0, failure_ = 0;
  int source_ = -1;
  uint32_t root_ = 0;
};

}  // namespace

v1::Plan PathSolver::Solve(const Snapshot& snapshot, const PlanStamp& stamp, const Wcmp* weights,
                           int threads) const {
  v1::Plan plan;
  plan.set_generation(stamp.generation);
  plan.set_epoch(stamp.epoch);
  plan.set_replica_id(stamp.replica_id);
  plan.set_computed_at_unix_ms(stamp.computed_at_unix_ms);
  plan.set_reason(stamp.reason);

  const int n = snapshot.facility_count();
  if (weights != nullptr && (weights->facility_count != n || weights->link_count != snapshot.link_count() ||
                             weights->routes.size() != static_cast<size_t>(n))) {
    weights = nullptr;
  }
  // Shortest paths from every facility with nothing excluded; also serves as
  // "distance from a neighbor to the destination" for equal-cost first hops.
  std::vector<ShortestPaths> all;
  all.reserve(n);
  for (int source = 0; source < n; ++source) {
    all.push_back(ShortestPaths::Run(snapshot, source, Exclusion{}));
  }

  // What every facility installs toward every destination, for the backups'
  // loop-freedom (and the routes themselves).
  InstalledHops installed(static_cast<size_t>(n), std::vector<std::vector<int>>(static_cast<size_t>(n)));
  for (int dst = 0; dst < n; ++dst) {
    for (int source = 0; source < n; ++source) {
      if (source == dst || all[source].distance_us[dst] == kInfinity) continue;
      if (weights != nullptr && weights->route(source, dst).follows_allocation) {
        for (const WeightedNextHop& hop : weights->route(source, dst).next_hops) {
          if (hop.weight > 0) installed[dst][source].push_back(hop.link);
        }
      } else {
        installed[dst][source] = EqualCostFirstLinks(snapshot, source, dst, all[source], all, Exclusion{});
      }
    }
  }

  const FlatHops flat(snapshot, installed, weights);
  const std::vector<int> followed = FollowedLinks(snapshot, installed, weights);

  // Every site's plan is made from the above alone, and written into its own
  // SitePlan: sites are shared out to the threads, each taking the next
  // one left, and the plan is the same whichever thread made which.
  for (int source = 0; source < n; ++source) {
    v1::SitePlan& site = *plan.add_sites();
    site.set_facility_id(snapshot.facility_id(source));
    site.set_generation(stamp.generation);
    site.set_epoch(stamp.epoch);
    site.set_replica_id(stamp.replica_id);
    site.set_computed_at_unix_ms(stamp.computed_at_unix_ms);
    site.set_reason(stamp.reason);
  }
  std::vector<std::vector<std::string>> unreachable(static_cast<size_t>(n));  // per site
  // Sites are taken a batch at a time, and a batch's first passes go
  // destination by destination over its sites: each destination's installed
  // hops (what the backups' walks read, from all over memory) are then read
  // once per batch rather than once per site. 8 sites (fewer when there are
  // not 4 batches per thread): on wan754 (2 threads) the routes took 11 s
  // one site at a time, 9.6 s by 4, 7.9 s by 8, and now 6.2-6.6 s by 4,
  // 5.8-5.9 s by 8. Memory is what bounds it: the wan754 drill peaks at
  // 1.71 GB by 8 against 1.55 GB by 4 (the batch's own state is 1.7 MB a
  // site: the rest is how the allocator's free memory fragments); by 8 it
  // peaked at 2.1 GB when the drill still held the last plan's forwarding
  // copy through the build.
  const int sites_per_batch = std::clamp(n / (4 * std::max(threads, 1)), 1, 8);
  // Every failure a backup is for, as a dense id: links, then SRLGs, then facilities.
  int srlg_count = 0;
  for (int link = 0; link < snapshot.link_count(); ++link) {
    for (const int srlg : snapshot.link_srlgs(link)) srlg_count = std::max(srlg_count, srlg + 1);
  }
  const size_t failure_ids = static_cast<size_t>(snapshot.link_count() + srlg_count + n);
  auto failure_id = [&](const Exclusion& failure) -> size_t {
    if (failure.link >= 0) return static_cast<size_t>(failure.link);
    if (failure.srlg >= 0) return static_cast<size_t>(snapshot.link_count() + failure.srlg);
    return static_cast<size_t>(snapshot.link_count() + srlg_count + failure.facility);
  };
  std::atomic<int> next_site{0};
  auto solve_sites = [&] {
    ReturnedShares shares(snapshot, flat);
    std::vector<int> first_links, path, path_links, backup_path;
    // The site's routes as route_of made them in the first pass, for the
    // second to write: one per reachable destination, in order, each its
    // parts' ends in the flat arrays beside.
    struct SavedRoute {
      uint32_t links_end, weights_end, path_end, failures_end;
      uint64_t latency_us;
    };
    const Exclusion no_failure;
    // The path of the loop-free backup over each link toward the current
    // destination (the same whatever the failure): its table index, or
    // kNoPath; the links set for this destination, to reset.
    constexpr uint32_t kNoPath = ~uint32_t{0};
    std::vector<uint32_t> loop_free_paths(static_cast<size_t>(snapshot.link_count()), kNoPath);
    std::vector<int> loop_free_links;
    std::vector<uint32_t> weights_of_links;
    std::vector<Exclusion> failures;
    std::vector<Exclusion> columns;  // of `shares`, for the route's failures
    std::vector<size_t> column_of;   // per failure
    std::vector<uint32_t> backup_triples;
    struct DetourQuestion {
      Exclusion failure;
      int dst = -1;
      uint32_t answer = 0;  // index into answers
    };
    struct DetourAnswer {
      uint64_t latency_us = kInfinity;  // kInfinity: no path around the failure
      int first_link = -1;
      uint32_t path = 0;  // in the site's tables
    };
    // What a site's first pass leaves its second: its routes (saved), each
    // (destination, failure)'s backup link in route order (-1: no
    // neighbour is loop-free, a detour), the detours asked, by failure, and
    // their answers; and, with an allocation, what its backups took of the
    // links' room.
    struct SiteWork {
      std::vector<SavedRoute> saved;
      std::vector<int> saved_links, saved_paths;
      std::vector<uint32_t> saved_weights;  // a route's are none (equal) or one per link
      std::vector<Exclusion> saved_failures;
      std::vector<int> choices;
      std::vector<DetourQuestion> questions;
      std::vector<DetourAnswer> answers;
      std::optional<BackupRoom> room;
    };
    std::vector<SiteWork> batch(static_cast<size_t>(sites_per_batch));
    DetourNodes detour_nodes(n);
    std::vector<DetourQuestion> by_failure;
    std::vector<uint32_t> failure_counts(failure_ids + 1);
    if (weights != nullptr) {
      for (SiteWork& work : batch) work.room.emplace(snapshot, followed, *weights);
    }

    // The primary next hops, path and latency of the route from `source` to
    // `dst`, and the failures that would hit it: its first links, their
    // SRLGs, its transit facilities.
    uint64_t latency_us = 0;
    std::vector<int> srlgs;
    auto route_of = [&](int source, int dst) {
      first_links.clear();
      weights_of_links.clear();
      latency_us = 0;
      if (weights != nullptr && weights->route(source, dst).follows_allocation) {
        for (const WeightedNextHop& hop : weights->route(source, dst).next_hops) {
          first_links.push_back(hop.link);
          weights_of_links.push_back(hop.weight);
        }
        HeaviestPath(snapshot, *weights, source, dst, &path, &path_links);
        for (int link : path_links) latency_us += snapshot.link_state(link).cost_us;
      } else {
        first_links = installed[dst][source];
        path.clear();  // all[source].PathTo(dst), into the reused buffer
        for (int at = dst; at >= 0; at = all[source].parent[at]) path.push_back(at);
        std::reverse(path.begin(), path.end());
        latency_us = all[source].distance_us[dst];
      }
      failures.clear();
      srlgs.clear();
      for (int link : first_links) {
        failures.push_back(Exclusion{.link = link});
        for (int srlg : snapshot.link_srlgs(link)) srlgs.push_back(srlg);
      }
      std::sort(srlgs.begin(), srlgs.end());
      srlgs.erase(std::unique(srlgs.begin(), srlgs.end()), srlgs.end());
      for (int srlg : srlgs) failures.push_back(Exclusion{.srlg = srlg});
      for (size_t i = 1; i + 1 < path.size(); ++i) failures.push_back(Exclusion{.facility = path[i]});
    };

    for (int first = next_site.fetch_add(sites_per_batch); first < n; first = next_site.fetch_add(sites_per_batch)) {
      const int end = std::min(first + sites_per_batch, n);
      for (SiteWork& work : batch) {
        work.choices.clear();
        work.saved.clear();
        work.saved_links.clear();
        work.saved_paths.clear();
        work.saved_weights.clear();
        work.saved_failures.clear();
        work.questions.clear();
        work.answers.clear();
        if (work.room) work.room->Clear();
      }
      // First the backup of every (destination, failure): a loop-free
      // neighbour, or else the lowest-latency path around the failure, which
      // holds once the other routers have the next plan. Each site's
      // destinations in order, as if alone.
      for (int dst = 0; dst < n; ++dst) {
        for (int source = first; source < end; ++source) {
          if (dst == source || all[source].distance_us[dst] == kInfinity) continue;
          SiteWork& work = batch[static_cast<size_t>(source - first)];
          auto& [saved, saved_links, saved_paths, saved_weights, saved_failures, choices, questions, answers, room] =
              work;
          route_of(source, dst);
          saved_links.insert(saved_links.end(), first_links.begin(), first_links.end());
          saved_weights.insert(saved_weights.end(), weights_of_links.begin(), weights_of_links.end());
          saved_paths.insert(saved_paths.end(), path.begin(), path.end());
          saved_failures.insert(saved_failures.end(), failures.begin(), failures.end());
          saved.push_back(SavedRoute{.links_end = static_cast<uint32_t>(saved_links.size()),
                                     .weights_end = static_cast<uint32_t>(saved_weights.size()),
                                     .path_end = static_cast<uint32_t>(saved_paths.size()),
                                     .failures_end = static_cast<uint32_t>(saved_failures.size()),
                                     .latency_us = latency_us});
          // The shares' columns: no failure for the failures of source's own
          // links (FindLoopFreeBackup), each other failure its own.
          columns.clear();
          column_of.clear();
          constexpr size_t kNoColumn = ~size_t{0};
          size_t no_failure_column = kNoColumn;
          for (const Exclusion& exclusion : failures) {
            if (exclusion.link >= 0) {
              if (no_failure_column == kNoColumn) {
                no_failure_column = columns.size();
                columns.push_back(no_failure);
              }
              column_of.push_back(no_failure_column);
            } else {
              column_of.push_back(columns.size());
              columns.push_back(exclusion);
            }
          }
          shares.Begin(dst, source, columns);
          for (size_t f = 0; f < failures.size(); ++f) {
            const Exclusion& exclusion = failures[f];
            // What the allocation sends over the first links, when the
            // failure takes them all: otherwise routerd keeps the surviving
            // next hops and this backup carries nothing of this failure.
            double moved_gbps = 0;
            if (weights != nullptr) {
              for (const int first : first_links) {
                if (!exclusion.Excludes(snapshot, first)) {
                  moved_gbps = 0;
                  break;
                }
                moved_gbps += weights->flow_gbps[dst][first];
              }
            }
            const int link = FindLoopFreeBackup(snapshot, all, shares, column_of[f], source, dst, exclusion, moved_gbps,
                                                room ? &*room : nullptr);
            if (link >= 0 && moved_gbps > 0 && room) {
              room->Take({exclusion.link, exclusion.srlg, exclusion.facility}, link, dst, moved_gbps);
            }
            choices.push_back(link);
            if (link < 0) {
              questions.push_back(DetourQuestion{.failure = exclusion, .dst = dst,
                                                 .answer = static_cast<uint32_t>(answers.size())});
              answers.emplace_back();
            }
          }
        }
      }
      for (int source = first; source < end; ++source) {
        const ShortestPaths& primary = all[source];
        v1::SitePlan& site = *plan.mutable_sites(source);
        auto& [saved, saved_links, saved_paths, saved_weights, saved_failures, choices, questions, answers, room] =
            batch[static_cast<size_t>(source - first)];
        {  // the writer lives while the site is written
          SiteTables tables(snapshot, &site);
          // The detours, each failure's together: one repair of the site's
          // shortest-path tree per failure (the answers are ShortestPaths::Run's).
          if (!questions.empty()) {
            // By failure, in the order asked (a counting sort on the failures' dense ids).
            std::fill(failure_counts.begin(), failure_counts.end(), 0);
            for (const DetourQuestion& question : questions) ++failure_counts[failure_id(question.failure) + 1];
            for (size_t i = 1; i < failure_counts.size(); ++i) failure_counts[i] += failure_counts[i - 1];
            by_failure.resize(questions.size());
            for (const DetourQuestion& question : questions) {
              by_failure[failure_counts[failure_id(question.failure)]++] = question;
            }
            FailureDistances detours(snapshot, nullptr);
            detour_nodes.StartSite(source, tables);
            for (size_t q = 0; q < by_failure.size(); ++q) {
              const DetourQuestion& question = by_failure[q];
              if (q == 0 || failure_id(question.failure) != failure_id(by_failure[q - 1].failure)) {
                detours.SetFailure(question.failure);
                detour_nodes.StartFailure();
              }
              DetourAnswer& answer = answers[question.answer];
              answer.latency_us = detours.Distance(source, question.dst);
              if (answer.latency_us == kInfinity) continue;
              const auto [node, first_link] = detour_nodes.NodeOf(question.dst, detours, tables);
              answer.first_link = first_link;
              answer.path = tables.PathEndingAt(node, answer.latency_us);
            }
          }

          // Then the routes, in the same order, into the site's tables.
          size_t next_choice = 0;
          uint32_t next_answer = 0;
          size_t next_route = 0;
          for (int dst = 0; dst < n; ++dst) {
            if (dst == source) continue;
            if (primary.distance_us[dst] == kInfinity) {
              unreachable[static_cast<size_t>(source)].push_back(site.facility_id() + "->" + snapshot.facility_id(dst));
              continue;
            }
            const SavedRoute& route = saved[next_route];
            const SavedRoute begin = next_route == 0 ? SavedRoute{0, 0, 0, 0, 0} : saved[next_route - 1];
            ++next_route;
            const std::span<const int> route_links(saved_links.data() + begin.links_end,
                                                   route.links_end - begin.links_end);
            const std::span<const uint32_t> route_weights(saved_weights.data() + begin.weights_end,
                                                          route.weights_end - begin.weights_end);
            const std::span<const int> route_path(saved_paths.data() + begin.path_end, route.path_end - begin.path_end);
            const std::span<const Exclusion> failures(saved_failures.data() + begin.failures_end,
                                                      route.failures_end - begin.failures_end);
            const uint32_t destination = tables.Facility(dst);
            const uint32_t group = tables.Group(route_links, route_weights);
            const uint32_t path_index = tables.Path(route_path, route.latency_us);

            backup_triples.clear();
            for (const int link : loop_free_links) loop_free_paths[static_cast<size_t>(link)] = kNoPath;
            loop_free_links.clear();
            for (const Exclusion& exclusion : failures) {
              const uint32_t failure = tables.Failure(exclusion);
              if (const int link = choices[next_choice++]; link >= 0) {
                uint32_t& loop_free_path = loop_free_paths[static_cast<size_t>(link)];
                if (loop_free_path == kNoPath) {
                  const int next = snapshot.link_dst(link);
                  backup_path.assign({source, next});
                  const uint64_t backup_latency_us = snapshot.link_state(link).cost_us +
                                                     FollowInstalled(snapshot, followed, dst, next, &backup_path);
                  loop_free_path = tables.Path(backup_path, backup_latency_us);
                  loop_free_links.push_back(link);
                }
                backup_triples.insert(backup_triples.end(), {failure, tables.SingleLinkGroup(link), loop_free_path});
                continue;
              }
              const DetourAnswer& answer = answers[next_answer++];
              if (answer.latency_us == kInfinity) {  // no backup: no next hops
                backup_triples.insert(backup_triples.end(), {failure, tables.Group({}, {}), tables.Path({}, 0)});
                continue;
              }
              backup_triples.insert(backup_triples.end(),
                                    {failure, tables.SingleLinkGroup(answer.first_link), answer.path});
            }

            // One route per prefix, all sharing the tables.
            for (const std::string& prefix : snapshot.facility_prefixes(dst)) {
              v1::Route& route = tables.writer().AddRoute(prefix, destination, group, path_index);
              route.mutable_backups()->Add(backup_triples.begin(), backup_triples.end());
            }
          }
        }
        std::sort(site.mutable_routes()->pointer_begin(), site.mutable_routes()->pointer_end(),
                  [](const v1::Route* a, const v1::Route* b) { return a->prefix() < b->prefix(); });
      }
    }
  };

  {
    std::vector<std::exception_ptr> errors(static_cast<size_t>(std::max(threads, 1)));
    std::vector<std::jthread> helpers;  // joined when they go out of scope, whatever happens
    auto guarded = [&](size_t slot) {
      try {
        solve_sites();
      } catch (...) {  // std::bad_alloc: rethrown on the calling thread
        errors[slot] = std::current_exception();
        next_site = n;  // the others stop after their current site
      }
    };
    for (int t = 1; t < threads; ++t) helpers.emplace_back(guarded, static_cast<size_t>(t));
    guarded(0);
    for (std::jthread& helper : helpers) helper.join();
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  }
  for (std::vector<std::string>& pairs : unreachable) {
    for (std::string& pair : pairs) plan.add_unreachable(std::move(pair));
  }
  return plan;
}

uint32_t CountChangedRoutes(const v1::SitePlan& before, const v1::SitePlan& after) {
  // A route's next hops as (link id, weight) pairs.
  auto hops_of = [](const v1::SitePlan& site, const v1::Route& route) {
    const v1::NextHopGroup& group = site_plan::PrimaryGroup(site, route);
    std::vector<std::pair<std::string_view, uint32_t>> hops;
    for (int i = 0; i < group.ports_size(); ++i) hops.emplace_back(site_plan::LinkId(site, group, i), group.weights(i));
    return hops;
  };
  std::map<std::string_view, std::vector<std::pair<std::string_view, uint32_t>>> old_hops;
  for (const auto& route : before.routes()) old_hops[route.prefix()] = hops_of(before, route);
  uint32_t changed = 0;
  for (const auto& route : after.routes()) {
    auto it = old_hops.find(route.prefix());
    if (it == old_hops.end() || it->second != hops_of(after, route)) ++changed;
    if (it != old_hops.end()) old_hops.erase(it);
  }
  return changed + static_cast<uint32_t>(old_hops.size());
}

}  // namespace geodesic::pathcomp
