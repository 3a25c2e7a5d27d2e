#include "daemon/command_line.h"

#include <iostream>
#include <string_view>
#include <vector>

namespace geodesic::daemon {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInvalidConfig = 1;
constexpr int kExitUsage = 2;

void PrintUsage(const DaemonDescription& daemon, std::ostream& stream) {
  stream << "usage: " << daemon.name << " --config FILE\n"
         << "       " << daemon.name << " --check-config FILE\n"
         << "       " << daemon.name << " --version | --help\n";
}

CommandLine Exit(int code) { return CommandLine{.config_path = {}, .exit_code = code}; }

CommandLine BadUsage(const DaemonDescription& daemon, std::ostream& err, std::string_view problem) {
  err << daemon.name << ": " << problem << "\n";
  PrintUsage(daemon, err);
  return Exit(kExitUsage);
}

}  // namespace

CommandLine ParseCommandLine(const DaemonDescription& daemon, int argc, const char* const* argv,
                             std::ostream& out, std::ostream& err) {
  enum class Mode { kNone, kRun, kCheck, kVersion, kHelp };
  Mode mode = Mode::kNone;
  std::string file;
  std::string mode_flag;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string flag(arg);
    std::optional<std::string> value;
    if (const size_t equals = arg.find('='); arg.starts_with("--") && equals != std::string_view::npos) {
      flag = std::string(arg.substr(0, equals));
      value = std::string(arg.substr(equals + 1));
    }
    Mode wanted = Mode::kNone;
    bool takes_file = false;
    if (flag == "--config") {
      wanted = Mode::kRun;
      takes_file = true;
    } else if (flag == "--check-config") {
      wanted = Mode::kCheck;
      takes_file = true;
    } else if (flag == "--version") {
      wanted = Mode::kVersion;
    } else if (flag == "--help" || flag == "-h") {
      wanted = Mode::kHelp;
    } else if (flag.starts_with("-")) {
      return BadUsage(daemon, err, "unknown flag " + flag);
    } else {
      return BadUsage(daemon, err, "unexpected argument \"" + flag + "\"");
    }
    if (mode != Mode::kNone) {
      return BadUsage(daemon, err, flag + " cannot be combined with " + mode_flag);
    }
    mode = wanted;
    mode_flag = flag;
    if (takes_file) {
      if (!value) {
        if (i + 1 >= argc) return BadUsage(daemon, err, flag + " needs a FILE");
        value = argv[++i];
      }
      if (value->empty()) return BadUsage(daemon, err, flag + " needs a FILE");
      file = *value;
    } else if (value) {
      return BadUsage(daemon, err, flag + " takes no value");
    }
  }
  switch (mode) {
    case Mode::kNone:
      return BadUsage(daemon, err, "--config FILE is required");
    case Mode::kHelp:
      out << daemon.name << ": " << daemon.summary << "\n";
      PrintUsage(daemon, out);
      out << "exit codes: 0 ok, 1 invalid configuration or failed start, 2 bad usage\n";
      return Exit(kExitOk);
    case Mode::kVersion:
      out << daemon.name << " " << daemon.version << "\n";
      return Exit(kExitOk);
    case Mode::kCheck: {
      const absl::Status status = daemon.check_config(file);
      if (!status.ok()) {
        err << daemon.name << ": " << file << ": invalid configuration:\n" << status.message() << "\n";
        return Exit(kExitInvalidConfig);
      }
      out << file << ": configuration is valid\n";
      return Exit(kExitOk);
    }
    case Mode::kRun:
      break;
  }
  return CommandLine{.config_path = file, .exit_code = std::nullopt};
}

CommandLine ParseCommandLine(const DaemonDescription& daemon, int argc, const char* const* argv) {
  return ParseCommandLine(daemon, argc, argv, std::cout, std::cerr);
}

}  // namespace geodesic::daemon
