#pragma once
// The topology component: the inventory model and the project's own format.
// Importers and the writer have their own headers:
//   topology/topology_writer.h  WriteTopologyYaml
//   topology/repetita.h         LoadRepetita (REPETITA .graph + .demands)
//   topology/graphml.h          LoadGraphml (Internet Topology Zoo)
//   topology/import.h           ImportTopology (any of the above, by extension)
#include "topology/inventory.h"       // IWYU pragma: export
#include "topology/project_reader.h"  // IWYU pragma: export
