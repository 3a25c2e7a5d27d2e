#include "tests/cli/tectl_testing.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"

extern char** environ;

namespace geodesic::cli::tectl_testing {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string RepetitaDir() { return SourceDir() + "/../shared/data/repetita"; }
std::string Absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

std::ostream& operator<<(std::ostream& os, const TectlRun& run) {
  return os << "exit " << run.exit_code << "\n--- stdout\n" << run.out << "--- stderr\n" << run.err;
}

TectlRun Tectl(const std::vector<std::string>& args) {
  TempDir scratch("tectl-run");
  const std::string out = scratch.path() + "/out", err = scratch.path() + "/err";
  std::vector<std::string> argv = {BinaryDir() + "/bin/tectl"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = {"USER=tectl-test"};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("GEODESIC_SERVER=", 0) == 0 || entry.rfind("GEODESIC_CA=", 0) == 0 ||
        entry.rfind("GEODESIC_CERT=", 0) == 0 || entry.rfind("GEODESIC_KEY=", 0) == 0 ||
        entry.rfind("USER=", 0) == 0) {
      continue;
    }
    env.push_back(entry);
  }
  std::vector<char*> c_argv, c_env;
  for (auto& arg : argv) c_argv.push_back(arg.data());
  c_argv.push_back(nullptr);
  for (auto& entry : env) c_env.push_back(entry.data());
  c_env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  TectlRun run;
  const int spawned = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    run.err = "cannot spawn " + argv[0];
    return run;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = ReadFile(out);
  run.err = ReadFile(err);
  return run;
}

RepetitaCounts CountRepetita(const std::string& name) {
  RepetitaCounts counts;
  std::istringstream graph(ReadFile(RepetitaDir() + "/" + name + ".graph"));
  std::string line;
  while (std::getline(graph, line)) {
    if (line.rfind("NODES ", 0) == 0) counts.nodes = std::stoi(line.substr(6));
    if (line.rfind("EDGES ", 0) == 0) counts.edges = std::stoi(line.substr(6));
  }
  std::istringstream demands(ReadFile(RepetitaDir() + "/" + name + ".0000.demands"));
  while (std::getline(demands, line)) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (fields.size() == 4 && fields[0] != "label" && fields[3] != "0") ++counts.demands_with_traffic;
  }
  EXPECT_GT(counts.nodes, 0);
  EXPECT_GT(counts.edges, 0);
  return counts;
}

// The row of `kind` in import's table: ADDED CHANGED REMOVED UNCHANGED.
std::vector<int> ImportRow(const std::string& table, const std::string& kind) {
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line)) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (fields.size() == 5 && fields[0] == kind) {
      return {std::stoi(fields[1]), std::stoi(fields[2]), std::stoi(fields[3]), std::stoi(fields[4])};
    }
  }
  ADD_FAILURE() << "no row for " << kind << " in\n" << table;
  return {0, 0, 0, 0};
}

size_t LineCount(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

}  // namespace geodesic::cli::tectl_testing
