// tectl export: the model's inventory in the project's topology format, so a
// store can be rebuilt (`tectl import`), diffed or kept under version control.
#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "files/atomic_file.h"
#include "topology/inventory.h"
#include "topology/topology_writer.h"

namespace geodesic::cli {
namespace {

template <typename Repeated, typename T>
void Append(const Repeated& from, std::vector<T>& to) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

int RunExport(const Options& options, ModelSource& source) {
  topology::Topology inventory;
  auto facilities = source.ListFacilities();
  if (!facilities.ok()) return PrintError(facilities.status());
  auto nodes = source.ListNodes({});
  if (!nodes.ok()) return PrintError(nodes.status());
  auto links = source.ListLinks({});
  if (!links.ok()) return PrintError(links.status());
  auto fabrics = source.ListFabrics({});
  if (!fabrics.ok()) return PrintError(fabrics.status());
  auto services = source.ListServices();
  if (!services.ok()) return PrintError(services.status());
  auto workloads = source.ListWorkloads();
  if (!workloads.ok()) return PrintError(workloads.status());
  Append(facilities->facilities(), inventory.facilities);
  Append(nodes->nodes(), inventory.nodes);
  Append(links->links(), inventory.links);
  Append(fabrics->fabrics(), inventory.fabrics);
  Append(services->services(), inventory.services);
  Append(workloads->workloads(), inventory.workloads);
  if (inventory.facilities.empty()) {
    return PrintError(absl::FailedPreconditionError(
        absl::StrCat(source.where(), " holds no inventory yet: nothing to export")));
  }
  // Drains are intents, not inventory: export the links as the operator declared them.
  for (auto& link : inventory.links) link.set_admin_state(v1::ADMIN_STATE_UP);
  const std::string text = topology::WriteTopologyYaml(inventory);
  if (options.file.empty()) {
    std::cout << text;
    return std::cout.flush() ? 0 : 1;
  }
  if (auto status = files::AtomicWriteFile(options.file, text); !status.ok()) return PrintError(status);
  std::fprintf(stderr, "exported %zu facilities, %zu links, %zu workloads from %s to %s\n",
               inventory.facilities.size(), inventory.links.size(), inventory.workloads.size(),
               source.where().c_str(), options.file.c_str());
  return 0;
}

namespace {

absl::Status ParseExport(const CommandArgs& args, Options& options) {
  if (args.operands.size() > 1) return Usage("export takes at most one file");
  if (!args.operands.empty()) {
    options.file = args.operands[0];
    if (options.file.empty() || !IsOneLine(options.file)) return Usage("the file name must be one non-empty line");
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& ExportCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "export",
      .command = Command::kExport,
      .usage = "export [FILE]\n    the model's inventory in the project format (YAML), to FILE or stdout\n",
      .parse = ParseExport,
      .access = ServerOrStore,
  };
  return *spec;
}

}  // namespace geodesic::cli
