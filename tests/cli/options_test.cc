// tectl's command line: what it accepts, and the one-line error for what it does not.
#include "cli/options.h"

#include "cli/command_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;

struct Env {
  std::map<std::string, std::string> values;
  std::string operator()(const char* name) const {
    auto it = values.find(name);
    return it == values.end() ? "" : it->second;
  }
};

const Env kTlsEnv{{{"GEODESIC_CA", "ca.crt"}, {"GEODESIC_CERT", "op.crt"}, {"GEODESIC_KEY", "op.key"}}};

absl::StatusOr<Options> Parse(std::vector<std::string> args, const Env& env = kTlsEnv) {
  return ParseCommandLine(args, env);
}

std::string Error(std::vector<std::string> args, const Env& env = kTlsEnv) {
  auto options = Parse(std::move(args), env);
  EXPECT_FALSE(options.ok());
  if (options.ok()) return "";
  EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(options.status().message()).find('\n'), std::string::npos) << "one line";
  return std::string(options.status().message());
}

TEST(OptionsTest, GetWithServerFlagsAndEnvironment) {
  auto options = Parse({"--server", "127.0.0.1:7000", "get", "links", "--facility", "iad", "-o", "wide"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, Command::kGet);
  EXPECT_EQ(options->kind, EntityKind::kLink);
  EXPECT_EQ(options->facility, "iad");
  EXPECT_EQ(options->output, OutputFormat::kWide);
  EXPECT_EQ(options->server, "127.0.0.1:7000");
  EXPECT_EQ(options->tls.ca_path, "ca.crt");
  EXPECT_EQ(options->tls.cert_path, "op.crt");
  EXPECT_EQ(options->tls.key_path, "op.key");
  EXPECT_TRUE(options->store_dir.empty());
}

TEST(OptionsTest, KindsAreSingularOrPlural) {
  for (const auto& [word, kind] :
       std::vector<std::pair<std::string, EntityKind>>{{"facility", EntityKind::kFacility},
                                                       {"facilities", EntityKind::kFacility},
                                                       {"node", EntityKind::kNode},
                                                       {"nodes", EntityKind::kNode},
                                                       {"link", EntityKind::kLink},
                                                       {"links", EntityKind::kLink},
                                                       {"fabric", EntityKind::kFabric},
                                                       {"fabrics", EntityKind::kFabric},
                                                       {"service", EntityKind::kService},
                                                       {"services", EntityKind::kService},
                                                       {"workload", EntityKind::kWorkload},
                                                       {"workloads", EntityKind::kWorkload},
                                                       {"intent", EntityKind::kIntent},
                                                       {"intents", EntityKind::kIntent},
                                                       {"plan", EntityKind::kPlan},
                                                       {"plans", EntityKind::kPlan}}) {
    auto options = Parse({"--store", "/s", "get", word});
    ASSERT_TRUE(options.ok()) << word << ": " << options.status();
    EXPECT_EQ(options->kind, kind) << word;
  }
  EXPECT_THAT(Error({"--store", "/s", "get", "Links"}), HasSubstr("unknown kind \"Links\""));
}

TEST(OptionsTest, FlagForms) {
  auto options = Parse({"journal", "--store=/var/lib/pc", "--limit=5", "--from", "7", "-ojson"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, Command::kJournal);
  EXPECT_EQ(options->store_dir, "/var/lib/pc");
  EXPECT_EQ(options->limit, 5u);
  EXPECT_EQ(options->from_seq, 7u);
  EXPECT_EQ(options->output, OutputFormat::kJson);
  options = Parse({"--store", "/s", "journal", "--output", "yaml"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->output, OutputFormat::kYaml);
  EXPECT_EQ(options->limit, kDefaultJournalLimit);
  EXPECT_EQ(options->from_seq, 0u);
}

TEST(OptionsTest, StoreBeatsServerFromTheEnvironmentButNotFromAFlag) {
  Env env = kTlsEnv;
  env.values["GEODESIC_SERVER"] = "pc:7000";
  auto options = Parse({"--store", "/s", "get", "links"}, env);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->store_dir, "/s");
  EXPECT_TRUE(options->server.empty());
  options = Parse({"get", "links"}, env);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->server, "pc:7000");
  EXPECT_THAT(Error({"--server", "pc:1", "--store", "/s", "get", "links"}), HasSubstr("mutually exclusive"));
}

TEST(OptionsTest, ImportFlags) {
  auto options = Parse({"--store", "/s", "import", "a.graph", "--replace-workloads", "--dry-run"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, Command::kImport);
  EXPECT_EQ(options->file, "a.graph");
  EXPECT_TRUE(options->replace_workloads);
  EXPECT_TRUE(options->dry_run);
  EXPECT_EQ(options->output, OutputFormat::kTable);
  EXPECT_THAT(Error({"--store", "/s", "import", "a.graph", "--dry-run=yes"}), HasSubstr("takes no value"));
  EXPECT_THAT(Error({"--store", "/s", "import"}), HasSubstr("one file"));
  EXPECT_THAT(Error({"--store", "/s", "import", "a", "b"}), HasSubstr("one file"));
  EXPECT_THAT(Error({"--store", "/s", "import", "a.graph", "-o", "wide"}), HasSubstr("-o must be one of"));
}

TEST(OptionsTest, PlanTakesASiteAsItsId) {
  auto options = Parse({"--store", "/s", "get", "plan", "iad"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->facility, "iad");
  EXPECT_TRUE(options->id.empty());
  options = Parse({"--store", "/s", "describe", "plan"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->output, OutputFormat::kYaml);
  options = Parse({"--store", "/s", "get", "plan", "--facility", "chi"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->facility, "chi");
  EXPECT_THAT(Error({"--store", "/s", "get", "plan", "iad", "--facility", "chi"}), HasSubstr("not both"));
}

TEST(OptionsTest, BadUsageIsOneLineNamingTheProblem) {
  const std::vector<std::string> s = {"--store", "/s"};
  auto with_store = [&](std::vector<std::string> args) {
    args.insert(args.begin(), s.begin(), s.end());
    return args;
  };
  EXPECT_THAT(Error({}), HasSubstr("no command"));
  EXPECT_THAT(Error(with_store({"frob"})), HasSubstr("unknown command \"frob\""));
  EXPECT_THAT(Error(with_store({"get", "links", "--bogus"})), HasSubstr("unknown flag --bogus"));
  EXPECT_THAT(Error(with_store({"get", "links", "-o"})), HasSubstr("-o needs a value"));
  EXPECT_THAT(Error(with_store({"get", "links", "-o", "xml"})),
              HasSubstr("-o must be one of table, wide, json, yaml"));
  EXPECT_THAT(Error(with_store({"describe", "link", "a", "-o", "table"})),
              HasSubstr("yaml, json for describe"));
  EXPECT_THAT(Error(with_store({"get", "links", "--dry-run"})), HasSubstr("--dry-run is not a flag of get"));
  EXPECT_THAT(Error(with_store({"get", "links", "-o", "json", "-o", "yaml"})), HasSubstr("given twice"));
  EXPECT_THAT(Error(with_store({"get"})), HasSubstr("needs a kind"));
  EXPECT_THAT(Error(with_store({"get", "link", "a", "b"})), HasSubstr("at most one id"));
  EXPECT_THAT(Error(with_store({"get", "link", "Not_An_Id"})), HasSubstr("is not a valid id"));
  EXPECT_THAT(Error(with_store({"describe", "link"})), HasSubstr("needs the id"));
  EXPECT_THAT(Error(with_store({"get", "links", "--facility", "-x"})), HasSubstr("is not a valid id"));
  EXPECT_THAT(Error(with_store({"get", "link", "a", "--facility", "iad"})), HasSubstr("not both"));
  EXPECT_THAT(Error(with_store({"get", "intents", "--facility", "iad"})),
              HasSubstr("does not apply to intents"));
  EXPECT_THAT(Error(with_store({"journal", "extra"})), HasSubstr("no operands"));
  EXPECT_THAT(Error(with_store({"help", "extra"})), HasSubstr("unknown command"));
  EXPECT_THAT(Error(with_store({"drain", "link", "a"})), HasSubstr("use --server"));
  EXPECT_THAT(Error(with_store({"get", "links", "--ca", "ca.crt"})), HasSubstr("--ca is for --server"));
  EXPECT_THAT(Error({"get", "links"}, Env{}), HasSubstr("--store DIR is required"));
  EXPECT_THAT(Error({"--server", "pc:7000", "get", "links"}, Env{}),
              HasSubstr("needs --ca, --cert and --key"));
  EXPECT_THAT(Error({"--server", "pc", "get", "links"}), HasSubstr("HOST:PORT"));
  EXPECT_THAT(Error({"--server", "pc:0", "get", "links"}), HasSubstr("HOST:PORT"));
  EXPECT_THAT(Error({"--server", "pc:65536", "get", "links"}), HasSubstr("HOST:PORT"));
  EXPECT_THAT(Error({"--server", "pc:http", "get", "links"}), HasSubstr("HOST:PORT"));
  EXPECT_THAT(Error({"--server", "pc:7000", "drain", "plan", "x"}), HasSubstr("link, node, facility or plane"));
  EXPECT_THAT(Error({"--server", "pc:7000", "drain", "link"}), HasSubstr("a kind and an id"));
}

TEST(OptionsTest, JournalNumbersAreCheckedForRange) {
  auto error = [](const std::string& flag, const std::string& value) {
    return Error({"--store", "/s", "journal", flag, value});
  };
  for (const char* bad : {"0", "10001", "-1", "+5", " 5", "5x", "1e3", "99999999999999999999999"}) {
    EXPECT_THAT(error("--limit", bad), HasSubstr("--limit must be a whole number from 1 to 10000")) << bad;
  }
  for (const char* bad : {"0", "-1", "x", "18446744073709551616"}) {
    EXPECT_THAT(error("--from", bad), HasSubstr("--from must be a journal seq")) << bad;
  }
  auto options = Parse({"--store", "/s", "journal", "--limit", "10000", "--from", "18446744073709551615"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->limit, 10000u);
  EXPECT_EQ(options->from_seq, UINT64_MAX);
}

TEST(OptionsTest, HelpNeedsNoServer) {
  auto options = Parse({"help"}, Env{});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, Command::kHelp);
  options = Parse({"get", "--help"}, Env{});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, Command::kHelp);
  EXPECT_EQ(options->help_topic, "get");
  EXPECT_THAT(Error({"help", "frob"}, Env{}), HasSubstr("unknown command"));
}

TEST(OptionsTest, TrafficEngineeringCommands) {
  auto options = Parse({"--server", "pc:7000", "whatif", "fail", "plane", "iad:1", "srlg", "conduit-a",
                        "--max-utilization", "0.8", "-o", "json"});
  ASSERT_TRUE(options.ok()) << options.status();
  ASSERT_EQ(options->failures.size(), 2u);
  EXPECT_EQ(options->failures[0].kind, "plane");
  EXPECT_EQ(options->failures[0].id, "iad");
  EXPECT_EQ(options->failures[0].plane, 1u);
  EXPECT_EQ(options->failures[1].id, "conduit-a");
  EXPECT_DOUBLE_EQ(options->utilization_limit, 0.8);

  options = Parse({"--server", "pc:7000", "drain", "plane", "sjc:3", "--force", "--reason", "swap"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->id, "sjc");
  EXPECT_EQ(options->plane, 3u);
  EXPECT_TRUE(options->force);

  options = Parse({"--server", "pc:7000", "override", "a-b", "--metric", "500", "--for", "4h"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->metric, 500u);
  EXPECT_EQ(options->for_s, 4 * 3600);

  options = Parse({"--server", "pc:7000", "workload", "add", "c1", "--origin", "nyc", "--services", "r,llm,r",
                   "--budget-ms", "150"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->services, (std::vector<std::string>{"r", "llm", "r"}));  // a service may be called twice
  EXPECT_EQ(options->budget_us, 150'000u);
  EXPECT_EQ(options->tenant, "");

  options = Parse({"--server", "pc:7000", "workload", "add", "c1", "--origin", "nyc", "--services", "r",
                   "--budget-ms", "150", "--tenant", "acme"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->tenant, "acme");
  EXPECT_THAT(Error({"--server", "pc:7000", "workload", "add", "w", "--src", "a", "--to", "10.0.0.0/8", "--gbps",
                     "1", "--tenant", "Acme"}),
              HasSubstr("tenant"));
  EXPECT_THAT(Error({"--server", "pc:7000", "workload", "add", "--file", "f.yaml", "--tenant", "acme"}),
              HasSubstr("--tenant does not go with --file"));
  EXPECT_THAT(Error({"--server", "pc:7000", "workload", "remove", "w", "--tenant", "acme"}),
              HasSubstr("--tenant is for workload add"));

  options = Parse({"--server", "pc:7000", "plan", "diff", "3", "7"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->generation_a, 3u);
  EXPECT_EQ(options->generation_b, 7u);

  EXPECT_THAT(Error({"--server", "pc:7000", "drain", "plane", "sjc"}), HasSubstr("FACILITY:N"));
  EXPECT_THAT(Error({"--server", "pc:7000", "drain", "link", "a", "--force"}), HasSubstr("--force needs a --reason"));
  EXPECT_THAT(Error({"--server", "pc:7000", "drain", "link", "a", "--dry-run", "--force", "--reason", "r"}),
              HasSubstr("do not go together"));
  EXPECT_THAT(Error({"--server", "pc:7000", "override", "a", "--metric", "5", "--for", "5w"}), HasSubstr("duration"));
  EXPECT_THAT(Error({"--server", "pc:7000", "pin", "c1", "--facilities", "a,a"}), HasSubstr("twice"));
  EXPECT_THAT(Error({"--server", "pc:7000", "pin", "c1"}), HasSubstr("--path or --facilities"));
  EXPECT_THAT(Error({"--server", "pc:7000", "events", "watch", "--count", "0"}), HasSubstr("--count"));
  EXPECT_THAT(Error({"--store", "/tmp/x", "whatif", "fail", "link", "a"}), HasSubstr("use --server"));
  options = Parse({"--store", "/tmp/x", "workload", "list"});
  EXPECT_TRUE(options.ok()) << options.status();
}

TEST(OptionsTest, GetStragglersNeedsAServerAndTakesALimit) {
  auto options = Parse({"--server", "pc:7000", "get", "stragglers", "--limit", "5", "-o", "json"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, Command::kGet);
  EXPECT_EQ(options->subcommand, "stragglers");
  EXPECT_EQ(options->limit, 5u);
  options = Parse({"--server", "pc:7000", "get", "straggler"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->limit, 0u);  // the server's default
  EXPECT_THAT(Error({"--store", "/tmp/x", "get", "stragglers"}), HasSubstr("use --server"));
  EXPECT_THAT(Error({"--server", "pc:7000", "get", "stragglers", "rag"}), HasSubstr("takes no id"));
  EXPECT_THAT(Error({"--server", "pc:7000", "get", "stragglers", "--limit", "0"}), HasSubstr("--limit"));
  EXPECT_THAT(Error({"--server", "pc:7000", "get", "stragglers", "--state", "up"}), HasSubstr("do not apply"));
  EXPECT_THAT(Error({"--server", "pc:7000", "get", "links", "--limit", "3"}), HasSubstr("--limit is for get stragglers"));
  // Other kinds still read a store.
  EXPECT_TRUE(Parse({"--store", "/tmp/x", "get", "links"}).ok());
}

// Flags are split from words before the command is known: a flag must take
// a value for every command that has it, or for none.
TEST(OptionsTest, EveryCommandAgreesWhetherAFlagTakesAValue) {
  for (const CommandSpec* command : CommandTable()) {
    for (const std::string& flag : command->flags) {
      EXPECT_FALSE(IsGlobalFlag(flag)) << command->name << " redefines " << flag;
      for (const CommandSpec* other : CommandTable()) {
        EXPECT_EQ(other->switches.count(flag), 0u)
            << flag << " takes a value for " << command->name << " but not for " << other->name;
      }
    }
    ASSERT_NE(command->parse, nullptr) << command->name;
    ASSERT_NE(command->access, nullptr) << command->name;
  }
}

}  // namespace
}  // namespace geodesic::cli
