#include "sim/make_pki.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/process.h"

namespace geodesic::sim {

absl::Status RunMakePki(const std::string& out_dir, const std::vector<std::string>& args,
                        const std::string& source_dir) {
  std::string source = source_dir;
  if (source.empty()) {
    const char* env = std::getenv("GEODESIC_SOURCE_DIR");
    if (env == nullptr || *env == '\0') {
      return absl::FailedPreconditionError("make-pki.sh: no source dir given and GEODESIC_SOURCE_DIR is not set");
    }
    source = env;
  }
  std::vector<std::string> argv = {source + "/deploy/pki/make-pki.sh", "--out", out_dir};
  argv.insert(argv.end(), args.begin(), args.end());
  auto run = RunCommand(argv);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(absl::StrCat("`", absl::StrJoin(argv, " "), "` exited with ", run->exit_code, ": ",
                                            run->output));
  }
  return absl::OkStatus();
}

}  // namespace geodesic::sim
