#pragma once
// Reads a topology from any format the project knows, chosen by the file's
// extension (case-insensitive):
//   .yaml .yml .json  the project format (topology/project_reader.h)
//   .graph            REPETITA (topology/repetita.h), with the demands of
//                     "<stem>.0000.demands" beside it when that file exists
//   .graphml          Internet Topology Zoo GraphML (topology/graphml.h)
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "topology/inventory.h"

namespace geodesic::topology {

// Errors are those of the chosen reader; InvalidArgument for another extension.
// What a reader skipped (see its header) is appended to `warnings`, one line
// each, when not null.
[[nodiscard]] absl::StatusOr<Topology> ImportTopology(const std::string& path,
                                                      std::vector<std::string>* warnings = nullptr);

}  // namespace geodesic::topology
