#include "topology/synthetic_wan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "topology/internal/imported_network.h"

namespace geodesic::topology {
namespace {

constexpr uint32_t kMinFacilities = 8;
constexpr uint32_t kMaxFacilities = 4096;
constexpr size_t kNearestCandidates = 8;  // near-neighbour links go to one of these
constexpr double kConduitDegrees = 10;    // links leaving a facility this close in bearing share a conduit
// The default total demand as a share of all directed link capacity: gravity
// traffic crosses many links and few cables, so this loads the busiest links
// near their capacity (3% put the maximum utilization at 6 on 200 facilities
// and 14 on 754).
constexpr double kDefaultDemandShare = 0.0025;

struct Metro {
  double lat, lon;
};

struct Continent {
  const char* code;
  double share;  // of the facilities
  std::vector<Metro> metros;
};

// Where backbones have their facilities: metro areas per continent, and each
// continent's share of the facilities.
const std::vector<Continent>& Continents() {
  static const std::vector<Continent> continents = {
      {"na", 0.30, {{40.7, -74.0}, {41.9, -87.6}, {37.4, -122.0}, {34.0, -118.2}, {32.8, -96.8},
                    {33.7, -84.4}, {47.6, -122.3}, {39.7, -105.0}, {25.8, -80.2}, {43.7, -79.4},
                    {19.4, -99.1}, {38.9, -77.0}}},
      {"sa", 0.06, {{-23.5, -46.6}, {-34.6, -58.4}, {-33.4, -70.6}, {4.7, -74.1}, {-12.0, -77.0},
                    {-22.9, -43.2}}},
      {"eu", 0.30, {{51.5, -0.1}, {50.1, 8.7}, {52.4, 4.9}, {48.9, 2.4}, {40.4, -3.7}, {45.5, 9.2},
                    {59.3, 18.1}, {52.2, 21.0}, {48.2, 16.4}, {53.3, -6.3}, {55.8, 37.6}, {41.0, 29.0}}},
      {"af", 0.04, {{-26.2, 28.0}, {-33.9, 18.4}, {6.5, 3.4}, {-1.3, 36.8}, {30.0, 31.2}, {33.6, -7.6}}},
      {"as", 0.25, {{35.7, 139.7}, {1.35, 103.8}, {22.3, 114.2}, {37.6, 127.0}, {19.1, 72.9},
                    {28.6, 77.2}, {31.2, 121.5}, {25.0, 121.5}, {13.8, 100.5}, {25.2, 55.3},
                    {34.7, 135.5}, {-6.2, 106.8}}},
      {"oc", 0.05, {{-33.9, 151.2}, {-37.8, 145.0}, {-31.9, 115.9}, {-27.5, 153.0}, {-36.8, 174.8}}},
  };
  return continents;
}

// Continent pairs joined by submarine cables (indices into Continents()).
constexpr std::array<std::pair<int, int>, 9> kCableRoutes = {
    {{0, 2}, {0, 1}, {0, 4}, {0, 5}, {2, 3}, {2, 4}, {4, 5}, {3, 4}, {1, 3}}};

class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  // [0, 1) from the raw generator (distributions are implementation-defined).
  double Unit() { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0); }
  // (0, 1]
  double OpenUnit() { return 1.0 - Unit(); }
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  // Roughly normal, mean 0, deviation ~1 (the sum of three uniforms).
  double Bell() { return (Unit() + Unit() + Unit() - 1.5) * 2.0; }

 private:
  std::mt19937_64 rng_;
};

struct Edge {
  size_t a, b;  // facility indices, a < b unless a parallel circuit says otherwise
  double capacity_gbps;
  std::vector<std::string> srlgs;
  bool parallel = false;  // the second circuit of a pair
};

class WanBuilder {
 public:
  explicit WanBuilder(const SyntheticWanOptions& options) : options_(options), random_(options.seed) {}

  Topology Build() && {
    PlaceFacilities();
    for (size_t c = 0; c < Continents().size(); ++c) SpanContinent(c);
    AddCables();
    AddLongHaul();
    AddNearLinks();
    AddParallelCircuits();
    AddConduits();
    EmitLinks();
    AddGravityFlows();
    AddChains();
    return std::move(topology_);
  }

 private:
  double Km(size_t a, size_t b) const {
    return GreatCircleKm(topology_.facilities[a].position(), topology_.facilities[b].position());
  }
  bool Linked(size_t a, size_t b) const { return linked_.count({std::min(a, b), std::max(a, b)}) > 0; }

  void AddEdge(size_t a, size_t b, uint32_t min_hundreds) {
    if (a == b || Linked(a, b)) return;
    linked_.insert({std::min(a, b), std::max(a, b)});
    const double capacity = 100.0 * static_cast<double>(min_hundreds + random_.Below(9 - min_hundreds));
    edges_.push_back(Edge{std::min(a, b), std::max(a, b), capacity, {}, false});
    ++degree_[a];
    ++degree_[b];
  }

  void PlaceFacilities() {
    const auto& continents = Continents();
    // Largest-remainder shares, at least one facility per continent.
    std::vector<uint32_t> counts(continents.size(), 1);
    uint32_t left = options_.facilities - static_cast<uint32_t>(continents.size());
    std::vector<std::pair<double, size_t>> remainders;
    uint32_t given = 0;
    for (size_t c = 0; c < continents.size(); ++c) {
      const double exact = continents[c].share * left;
      counts[c] += static_cast<uint32_t>(exact);
      given += static_cast<uint32_t>(exact);
      remainders.push_back({-(exact - std::floor(exact)), c});
    }
    std::sort(remainders.begin(), remainders.end());
    for (size_t i = 0; given < left; ++i, ++given) ++counts[remainders[i % remainders.size()].second];

    for (size_t c = 0; c < continents.size(); ++c) {
      for (uint32_t i = 0; i < counts[c]; ++i) {
        const Metro& metro = continents[c].metros[random_.Below(continents[c].metros.size())];
        const double lat = std::clamp(metro.lat + 2.5 * random_.Bell(), -85.0, 85.0);
        double lon = metro.lon + 2.5 * random_.Bell() / std::max(0.2, std::cos(lat * M_PI / 180));
        if (lon > 180) lon -= 360;
        if (lon < -180) lon += 360;
        const size_t index = topology_.facilities.size();
        v1::Facility& facility = topology_.facilities.emplace_back();
        facility.set_id(absl::StrCat(continents[c].code, "-", absl::Dec(i + 1, absl::kZeroPad4)));
        facility.set_display_name(facility.id());
        facility.set_region(continents[c].code);
        facility.mutable_position()->set_latitude_deg(std::round(lat * 1e4) / 1e4);
        facility.mutable_position()->set_longitude_deg(std::round(lon * 1e4) / 1e4);
        facility.add_prefixes(internal::SynthesizedPrefix(index));
        v1::Node& router = topology_.nodes.emplace_back();
        router.set_id(absl::StrCat(facility.id(), "-r"));
        router.set_facility_id(facility.id());
        router.set_role(v1::NODE_ROLE_BACKBONE_ROUTER);
        continent_of_.push_back(c);
        mass_.push_back(std::pow(random_.OpenUnit(), -0.6));  // Pareto-like: a few big sites
      }
    }
    members_.assign(continents.size(), {});
    for (size_t i = 0; i < continent_of_.size(); ++i) members_[continent_of_[i]].push_back(i);
    degree_.assign(continent_of_.size(), 0);
  }

  // Prim's minimum spanning tree of one continent by great-circle distance.
  void SpanContinent(size_t c) {
    const std::vector<size_t>& members = members_[c];
    if (members.size() < 2) return;
    std::vector<double> best(members.size(), INFINITY);
    std::vector<size_t> from(members.size(), 0);
    std::vector<bool> in(members.size(), false);
    best[0] = 0;
    for (size_t round = 0; round < members.size(); ++round) {
      size_t next = members.size();
      for (size_t i = 0; i < members.size(); ++i) {
        if (!in[i] && (next == members.size() || best[i] < best[next])) next = i;
      }
      in[next] = true;
      if (round > 0) AddEdge(members[from[next]], members[next], 1);
      for (size_t i = 0; i < members.size(); ++i) {
        if (in[i]) continue;
        const double km = Km(members[next], members[i]);
        if (km < best[i]) {
          best[i] = km;
          from[i] = next;
        }
      }
    }
  }

  // The facility of `to` nearest to `a`.
  size_t Nearest(size_t a, const std::vector<size_t>& to) const {
    size_t best = to.front();
    for (size_t b : to) {
      if (Km(a, b) < Km(a, best)) best = b;
    }
    return best;
  }

  // Submarine cables: per route the closest pair of facilities, then more
  // from facilities among the tenth of the continent nearest the other one.
  void AddCables() {
    const uint32_t per_route = std::max<uint32_t>(1, options_.facilities / 150);
    for (const auto& [ca, cb] : kCableRoutes) {
      const auto& from = members_[ca];
      const auto& to = members_[cb];
      std::vector<std::pair<double, size_t>> coast;  // (distance to the other continent, facility)
      for (size_t a : from) coast.push_back({Km(a, Nearest(a, to)), a});
      std::sort(coast.begin(), coast.end());
      const size_t landing_sites = std::max<size_t>(1, coast.size() / 10);
      for (uint32_t k = 0; k < per_route; ++k) {
        const size_t a = coast[k == 0 ? 0 : random_.Below(landing_sites)].second;
        AddEdge(a, Nearest(a, to), 4);
      }
    }
  }

  void AddLongHaul() {
    const uint32_t count =
        options_.long_haul_links > 0 ? options_.long_haul_links : std::max<uint32_t>(1, options_.facilities / 50);
    for (uint32_t k = 0, attempts = 0; k < count && attempts < 100 * count; ++attempts) {
      const size_t a = random_.Below(continent_of_.size());
      const auto& members = members_[continent_of_[a]];
      const size_t b = members[random_.Below(members.size())];
      if (a == b || Linked(a, b)) continue;
      AddEdge(a, b, 4);
      ++k;
    }
  }

  // Links to one of the nearest facilities of the same continent, from
  // facilities of low degree first, until the mean degree is reached.
  void AddNearLinks() {
    const size_t n = continent_of_.size();
    const size_t target = static_cast<size_t>(std::llround(options_.mean_degree * static_cast<double>(n) / 2));
    std::vector<std::vector<size_t>> nearest(n);
    for (size_t a = 0; a < n; ++a) {
      std::vector<std::pair<double, size_t>> by_distance;
      for (size_t b : members_[continent_of_[a]]) {
        if (b != a) by_distance.push_back({Km(a, b), b});
      }
      const size_t keep = std::min(kNearestCandidates, by_distance.size());
      std::partial_sort(by_distance.begin(), by_distance.begin() + static_cast<long>(keep), by_distance.end());
      for (size_t i = 0; i < keep; ++i) nearest[a].push_back(by_distance[i].second);
    }
    for (size_t attempts = 0; edges_.size() < target && attempts < 50 * n; ++attempts) {
      // Of two random facilities, the one with fewer links: degrees stay even.
      size_t a = random_.Below(n);
      const size_t other = random_.Below(n);
      if (degree_[other] < degree_[a]) a = other;
      for (size_t b : nearest[a]) {
        if (!Linked(a, b)) {
          AddEdge(a, b, 1);
          break;
        }
      }
    }
  }

  void AddParallelCircuits() {
    const size_t singles = edges_.size();
    for (size_t e = 0; e < singles; ++e) {
      if (random_.Unit() >= options_.parallel_fraction) continue;
      const std::string duct = absl::StrCat("duct-", topology_.facilities[edges_[e].a].id(), "-",
                                            topology_.facilities[edges_[e].b].id());
      edges_[e].srlgs.push_back(duct);
      Edge parallel = edges_[e];
      parallel.parallel = true;
      edges_.push_back(std::move(parallel));
    }
  }

  // The initial bearing from a to b, in degrees [0, 360).
  double Bearing(size_t a, size_t b) const {
    const auto& p = topology_.facilities[a].position();
    const auto& q = topology_.facilities[b].position();
    const double rad = M_PI / 180;
    const double dlon = (q.longitude_deg() - p.longitude_deg()) * rad;
    const double y = std::sin(dlon) * std::cos(q.latitude_deg() * rad);
    const double x = std::cos(p.latitude_deg() * rad) * std::sin(q.latitude_deg() * rad) -
                     std::sin(p.latitude_deg() * rad) * std::cos(q.latitude_deg() * rad) * std::cos(dlon);
    const double degrees = std::atan2(y, x) / rad;
    return degrees < 0 ? degrees + 360 : degrees;
  }

  // Per facility, the two links leaving it closest in bearing run in one
  // conduit when within kConduitDegrees of each other.
  void AddConduits() {
    const size_t n = continent_of_.size();
    std::vector<std::vector<size_t>> incident(n);
    for (size_t e = 0; e < edges_.size(); ++e) {
      if (edges_[e].parallel) continue;
      incident[edges_[e].a].push_back(e);
      incident[edges_[e].b].push_back(e);
    }
    for (size_t u = 0; u < n; ++u) {
      double best = kConduitDegrees;
      std::pair<size_t, size_t> pair{0, 0};
      bool found = false;
      for (size_t i = 0; i < incident[u].size(); ++i) {
        for (size_t j = i + 1; j < incident[u].size(); ++j) {
          const Edge& x = edges_[incident[u][i]];
          const Edge& y = edges_[incident[u][j]];
          double gap = std::fabs(Bearing(u, x.a == u ? x.b : x.a) - Bearing(u, y.a == u ? y.b : y.a));
          gap = std::min(gap, 360 - gap);
          if (gap < best) {
            best = gap;
            pair = {incident[u][i], incident[u][j]};
            found = true;
          }
        }
      }
      if (!found) continue;
      const std::string conduit = absl::StrCat("conduit-", topology_.facilities[u].id());
      edges_[pair.first].srlgs.push_back(conduit);
      edges_[pair.second].srlgs.push_back(conduit);
    }
    // A parallel circuit shares its twin's duct and conduits.
    for (Edge& edge : edges_) {
      if (!edge.parallel) continue;
      for (const Edge& twin : edges_) {
        if (!twin.parallel && twin.a == edge.a && twin.b == edge.b) {
          edge.srlgs = twin.srlgs;
          break;
        }
      }
    }
  }

  void EmitLinks() {
    for (const Edge& edge : edges_) {
      for (const auto& [src, dst] : {std::pair{edge.a, edge.b}, std::pair{edge.b, edge.a}}) {
        v1::Link& link = topology_.links.emplace_back();
        const v1::Facility& from = topology_.facilities[src];
        const v1::Facility& to = topology_.facilities[dst];
        link.set_id(absl::StrCat(from.id(), "-", to.id(), edge.parallel ? "-p" : ""));
        link.set_src_node_id(topology_.nodes[src].id());
        link.set_dst_node_id(topology_.nodes[dst].id());
        link.set_src_facility_id(from.id());
        link.set_dst_facility_id(to.id());
        link.set_capacity_gbps(edge.capacity_gbps);
        const uint64_t latency_us = FiberLatencyUs(Km(src, dst));
        link.set_latency_us(latency_us);
        link.set_igp_metric(static_cast<uint32_t>(std::max<uint64_t>(1, (latency_us + 500) / 1000)));
        for (const auto& srlg : edge.srlgs) link.add_srlgs(srlg);
        link.set_admin_state(v1::ADMIN_STATE_UP);
      }
    }
  }

  // Weighted sampling without replacement (Efraimidis-Spirakis): the k
  // largest log(u) / weight.
  std::vector<uint32_t> Sample(const std::vector<double>& weights, size_t k) {
    std::vector<std::pair<float, uint32_t>> keys(weights.size());
    for (size_t i = 0; i < weights.size(); ++i) {
      keys[i] = {static_cast<float>(-std::log(random_.OpenUnit()) / weights[i]), static_cast<uint32_t>(i)};
    }
    k = std::min(k, keys.size());
    std::nth_element(keys.begin(), keys.begin() + static_cast<long>(k), keys.end());
    std::vector<uint32_t> chosen(k);
    for (size_t i = 0; i < k; ++i) chosen[i] = keys[i].second;
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }

  void AddGravityFlows() {
    if (options_.elephant_flows == 0) return;
    const size_t n = continent_of_.size();
    std::vector<double> weights;
    weights.reserve(n * (n - 1));
    for (size_t src = 0; src < n; ++src) {
      for (size_t dst = 0; dst < n; ++dst) {
        if (src != dst) weights.push_back(mass_[src] * mass_[dst]);
      }
    }
    const std::vector<uint32_t> pairs = Sample(weights, options_.elephant_flows);
    double chosen_weight = 0;
    for (uint32_t pair : pairs) chosen_weight += weights[pair];
    double total_gbps = options_.total_demand_gbps;
    if (total_gbps == 0) {
      for (const auto& link : topology_.links) total_gbps += link.capacity_gbps();
      total_gbps *= kDefaultDemandShare;
    }
    topology_.workloads.reserve(topology_.workloads.size() + pairs.size() + options_.chains);
    for (size_t i = 0; i < pairs.size(); ++i) {
      const size_t src = pairs[i] / (n - 1);
      size_t dst = pairs[i] % (n - 1);
      if (dst >= src) ++dst;
      v1::Workload& workload = topology_.workloads.emplace_back();
      workload.set_id(absl::StrCat("flow-", i + 1));
      v1::ElephantFlow& flow = *workload.mutable_elephant();
      flow.set_src_facility_id(topology_.facilities[src].id());
      flow.set_dst_prefix(topology_.facilities[dst].prefixes(0));
      flow.set_demand_gbps(total_gbps * weights[pairs[i]] / chosen_weight);
      flow.set_priority(0);
    }
  }

  // A facility drawn with probability proportional to its mass.
  size_t ByMass(const std::vector<double>& cumulative) {
    const double x = random_.Unit() * cumulative.back();
    return std::min<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), x) - cumulative.begin(),
                            cumulative.size() - 1);
  }

  void AddChains() {
    if (options_.services == 0) return;
    std::vector<double> cumulative;
    for (double mass : mass_) cumulative.push_back((cumulative.empty() ? 0 : cumulative.back()) + mass);
    for (uint32_t s = 0; s < options_.services; ++s) {
      v1::Service& service = topology_.services.emplace_back();
      service.set_id(absl::StrCat("svc-", s + 1));
      service.set_service_time_us(options_.service_time_us);
      for (uint32_t replica : Sample(mass_, options_.replicas)) {
        service.add_replica_facility_ids(topology_.facilities[replica].id());
      }
    }
    for (uint32_t c = 0; c < options_.chains; ++c) {
      v1::Workload& workload = topology_.workloads.emplace_back();
      workload.set_id(absl::StrCat("chain-", c + 1));
      v1::AgentChain& chain = *workload.mutable_chain();
      chain.set_origin_facility_id(topology_.facilities[ByMass(cumulative)].id());
      const uint64_t hops = options_.min_hops + random_.Below(options_.max_hops - options_.min_hops + 1);
      for (uint64_t h = 0; h < hops; ++h) {
        chain.add_service_ids(topology_.services[random_.Below(options_.services)].id());
      }
      chain.set_latency_budget_us(options_.budget_us);
    }
  }

  const SyntheticWanOptions& options_;
  Random random_;
  Topology topology_;
  std::vector<size_t> continent_of_;
  std::vector<std::vector<size_t>> members_;  // facility indices per continent
  std::vector<double> mass_;                  // gravity weight per facility
  std::vector<uint32_t> degree_;
  std::vector<Edge> edges_;                   // undirected
  std::set<std::pair<size_t, size_t>> linked_;
};

std::vector<std::string> Problems(const SyntheticWanOptions& o) {
  std::vector<std::string> problems;
  if (o.facilities < kMinFacilities || o.facilities > kMaxFacilities) {
    problems.push_back(absl::StrCat("facilities: ", o.facilities, " is outside [", kMinFacilities, ", ",
                                    kMaxFacilities, "]"));
  }
  if (!(o.mean_degree >= 2.2 && o.mean_degree <= 8)) {
    problems.push_back(absl::StrCat("mean_degree: ", o.mean_degree, " is outside [2.2, 8]"));
  }
  if (o.long_haul_links > o.facilities) {
    problems.push_back(absl::StrCat("long_haul_links: ", o.long_haul_links, " is more than the ", o.facilities,
                                    " facilities"));
  }
  if (!(o.parallel_fraction >= 0 && o.parallel_fraction <= 1)) {
    problems.push_back(absl::StrCat("parallel_fraction: ", o.parallel_fraction, " is outside [0, 1]"));
  }
  const uint64_t pairs = uint64_t{o.facilities} * (o.facilities > 0 ? o.facilities - 1 : 0) / 2;
  if (o.elephant_flows > pairs) {
    problems.push_back(absl::StrCat("elephant_flows: ", o.elephant_flows, " is more than half the ", 2 * pairs,
                                    " ordered facility pairs"));
  }
  if (!(o.total_demand_gbps >= 0 && o.total_demand_gbps <= 1e9)) {
    problems.push_back(absl::StrCat("total_demand_gbps: ", o.total_demand_gbps, " is outside [0, 1e9]"));
  }
  if (o.services > 10'000) problems.push_back(absl::StrCat("services: ", o.services, " is more than 10000"));
  if (o.services > 0 && (o.replicas < 1 || o.replicas > o.facilities)) {
    problems.push_back(absl::StrCat("replicas: ", o.replicas, " is outside [1, facilities = ", o.facilities, "]"));
  }
  if (o.chains > 0 && o.services == 0) problems.push_back("chains: need services > 0");
  if (o.chains > 1'000'000) problems.push_back(absl::StrCat("chains: ", o.chains, " is more than 1000000"));
  if (o.min_hops < 1 || o.max_hops > 64 || o.min_hops > o.max_hops) {
    problems.push_back(absl::StrCat("min_hops, max_hops: ", o.min_hops, ", ", o.max_hops,
                                    " must satisfy 1 <= min_hops <= max_hops <= 64"));
  }
  if (o.service_time_us > 60'000'000) {
    problems.push_back(absl::StrCat("service_time_us: ", o.service_time_us, " is more than 60 s"));
  }
  if (o.budget_us < 1 || o.budget_us > 600'000'000) {
    problems.push_back(absl::StrCat("budget_us: ", o.budget_us, " is outside [1, 600000000]"));
  }
  return problems;
}

}  // namespace

absl::StatusOr<Topology> GenerateSyntheticWan(const SyntheticWanOptions& options) {
  const std::vector<std::string> problems = Problems(options);
  if (!problems.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("synthetic WAN: ", absl::StrJoin(problems, "\n")));
  }
  return WanBuilder(options).Build();
}

}  // namespace geodesic::topology
