#pragma once
// The command line every daemon shares:
//
//   NAME --config FILE          run with the configuration FILE
//   NAME --check-config FILE    validate FILE as the daemon would at start, print
//                               every problem (file:line: key: message), exit
//   NAME --version              print "NAME VERSION" and exit
//   NAME --help                 print the usage and exit
//
// `--flag=VALUE` is the same as `--flag VALUE`. Exit codes: 0 ok, 1 an invalid
// configuration (--check-config), 2 bad usage (an unknown or repeated flag, a
// missing value, a stray argument, no mode), with the usage on stderr.
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"

namespace geodesic::daemon {

struct DaemonDescription {
  std::string name;     // "pathcomp"
  std::string summary;  // one line for --help
  std::string version;  // for --version: daemon::Version() (daemon/version.h)
  // Loads and validates a configuration file exactly as the daemon does at
  // start, without acting on it. A non-OK status lists every problem, one per
  // line, each naming the file and the key.
  std::function<absl::Status(const std::string& path)> check_config;
};

// What main() does after the command line.
struct CommandLine {
  std::string config_path;       // --config: run with this file
  std::optional<int> exit_code;  // set: everything is printed; exit with this code
};

// Parses argv[1..argc); for --version, --help, --check-config and bad usage it
// prints to `out`/`err` and sets exit_code. Thread-compatible.
[[nodiscard]] CommandLine ParseCommandLine(const DaemonDescription& daemon, int argc, const char* const* argv,
                                           std::ostream& out, std::ostream& err);
// The same on std::cout / std::cerr.
[[nodiscard]] CommandLine ParseCommandLine(const DaemonDescription& daemon, int argc, const char* const* argv);

}  // namespace geodesic::daemon
