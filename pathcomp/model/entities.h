#pragma once
// The entities the model holds, keyed by id (fabrics by their facility's id):
// one consistent set, as the store has it. A value: the model keeps the
// current one, and an import builds the next beside it and checks it with
// entity_rules.h before it replaces the current one.
#include <map>
#include <string>

#include "geodesic/v1/model.pb.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

struct Entities {
  std::map<std::string, v1::Facility> facilities;
  std::map<std::string, v1::Node> nodes;
  std::map<std::string, v1::Link> links;  // with their measured health
  std::map<std::string, v1::Fabric> fabrics;  // key: facility id
  std::map<std::string, v1::Service> services;
  std::map<std::string, v1::Workload> workloads;
  std::map<std::string, v1::Intent> intents;

  // The solver's input: every entity, in key order.
  ModelView View() const {
    ModelView view;
    view.facilities = Values(facilities);
    view.nodes = Values(nodes);
    view.links = Values(links);
    view.intents = Values(intents);
    view.workloads = Values(workloads);
    view.services = Values(services);
    view.fabrics = Values(fabrics);
    return view;
  }

  template <typename T>
  static std::vector<T> Values(const std::map<std::string, T>& items) {
    std::vector<T> values;
    values.reserve(items.size());
    for (const auto& [id, item] : items) values.push_back(item);
    return values;
  }
};

}  // namespace geodesic::pathcomp
