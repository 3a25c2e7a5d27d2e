// tectl restore --from DIR --store STORE [--force]: makes a store directory
// the backup `tectl backup` wrote, offline, through the store's own restore
// (state/backup/restore.h): every checksum and the schema are checked first,
// and a refused restore changes nothing.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/option_values.h"
#include "cli/output.h"
#include "state/backup/restore.h"

namespace geodesic::cli {

int RunRestore(const Options& options) {
  auto restored = state::backup::RestoreStore(options.backup_dir, options.store_dir, {.force = options.force});
  if (!restored.ok()) return PrintError(restored.status());
  const v1::BackupManifest& manifest = restored->manifest;
  std::printf("restored %s into %s%s: pathcomp %s at journal seq %llu (schema %u), backed up %s by %s\n",
              options.backup_dir.c_str(), options.store_dir.c_str(), restored->replaced ? " (replaced)" : "",
              manifest.pathcomp_replica().c_str(), static_cast<unsigned long long>(manifest.last_journal_seq()),
              manifest.schema_version(), FormatUnixMs(manifest.created_at_unix_ms()).c_str(),
              manifest.requested_by().c_str());
  return 0;
}

namespace {

absl::Status ParseRestore(const CommandArgs& args, Options& options) {
  if (!args.operands.empty()) return Usage("restore takes no operands: restore --from DIR --store STORE");
  const std::string* from = args.flag("--from");
  if (from == nullptr) return Usage("restore needs --from DIR (a directory tectl backup wrote)");
  if (!IsOneLine(*from)) return Usage("--from must be one line");
  options.backup_dir = *from;
  options.force = args.flag("--force") != nullptr;
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& RestoreCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "restore",
      .command = Command::kRestore,
      .flags = {"--from"},
      .switches = {"--force"},
      .usage = "restore --from DIR --store STORE [--force]\n"
               "    offline: STORE becomes the backup in DIR after its checksums and schema are checked;\n"
               "    a non-empty STORE is replaced only with --force, never while a pathcomp has it open\n",
      .parse = ParseRestore,
      .access = StoreOnly,
  };
  return *spec;
}

}  // namespace geodesic::cli
