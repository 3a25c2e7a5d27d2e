#include "topology/import.h"

#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "topology/graphml.h"
#include "topology/project_reader.h"
#include "topology/repetita.h"

namespace geodesic::topology {

absl::StatusOr<Topology> ImportTopology(const std::string& path, std::vector<std::string>* warnings) {
  const std::filesystem::path file(path);
  const std::string extension = absl::AsciiStrToLower(file.extension().string());
  if (extension == ".yaml" || extension == ".yml" || extension == ".json") {
    return LoadTopologyFile(path);
  }
  if (extension == ".graphml") return LoadGraphml(path);
  if (extension == ".graph") {
    std::filesystem::path demands = file;
    demands.replace_extension(".0000.demands");
    std::error_code error;
    return LoadRepetita(path,
                        std::filesystem::is_regular_file(demands, error) ? demands.string() : std::string(),
                        warnings);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": unknown topology format \"", extension,
                   "\" (expected .yaml, .yml, .json, .graph or .graphml)"));
}

}  // namespace geodesic::topology
