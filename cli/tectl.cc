// tectl: the operator CLI for Geodesic traffic engineering.
//
//   tectl [global flags] get facilities|nodes|links|plan|intents|workloads [--facility F] [-o table|json]
//   tectl [global flags] drain link|node|facility ID [--reason TEXT]
//   tectl [global flags] undrain link|node|facility ID
//
// Global flags (or the environment variable in brackets):
//   --server HOST:PORT [GEODESIC_SERVER]   a pathcomp replica
//   --ca FILE [GEODESIC_CA] --cert FILE [GEODESIC_CERT] --key FILE [GEODESIC_KEY]
//                                           the operator's certificate (mTLS)
// Exit codes: 0 ok, 1 the server refused or failed, 2 bad usage.
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/table.h"
#include "geodesic/v1/operator.grpc.pb.h"
#include "google/protobuf/util/json_util.h"
#include "state/entity_id.h"
#include "state/oper_state_name.h"
#include "tls/credentials.h"

namespace geodesic::cli {
namespace {

constexpr const char* kUsage =
    "usage: tectl [--server HOST:PORT] [--ca FILE --cert FILE --key FILE] COMMAND\n"
    "commands:\n"
    "  get facilities|nodes|links|plan|intents|workloads [--facility F] [-o table|json]\n"
    "  drain link|node|facility ID [--reason TEXT]\n"
    "  undrain link|node|facility ID\n";

struct Options {
  std::string server, ca, cert, key;
  std::string facility;
  std::string output = "table";
  std::string reason;
  std::vector<std::string> words;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "tectl: %s\n%s", message.c_str(), kUsage);
  return 2;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::optional<Options> ParseFlags(int argc, char** argv, std::string& error) {
  Options options;
  options.server = Env("GEODESIC_SERVER");
  options.ca = Env("GEODESIC_CA");
  options.cert = Env("GEODESIC_CERT");
  options.key = Env("GEODESIC_KEY");
  const std::map<std::string, std::string*> valued = {
      {"--server", &options.server}, {"--ca", &options.ca},         {"--cert", &options.cert},
      {"--key", &options.key},       {"--facility", &options.facility}, {"-o", &options.output},
      {"--output", &options.output}, {"--reason", &options.reason}};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto it = valued.find(arg);
    if (it != valued.end()) {
      if (i + 1 >= argc) {
        error = arg + " needs a value";
        return std::nullopt;
      }
      *it->second = argv[++i];
    } else if (arg.rfind("-", 0) == 0) {
      error = "unknown flag " + arg;
      return std::nullopt;
    } else {
      options.words.push_back(arg);
    }
  }
  if (options.output != "table" && options.output != "json") {
    error = "-o must be table or json";
    return std::nullopt;
  }
  return options;
}

int Fail(const grpc::Status& status) {
  std::fprintf(stderr, "tectl: %s\n", status.error_message().c_str());
  return 1;
}

std::string Json(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}


int Get(v1::Operator::Stub& stub, const Options& options) {
  if (options.words.size() != 2) return UsageError("get takes one kind");
  const std::string& kind = options.words[1];
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  const bool json = options.output == "json";
  if (kind == "facilities") {
    v1::ListFacilitiesResponse response;
    if (auto s = stub.ListFacilities(&context, {}, &response); !s.ok()) return Fail(s);
    if (json) return std::cout << Json(response), 0;
    Table table({"ID", "NAME", "REGION", "LAT", "LON", "PREFIXES"});
    for (const auto& f : response.facilities()) {
      table.Add({f.id(), f.display_name(), f.region(), absl::StrCat(f.position().latitude_deg()),
                 absl::StrCat(f.position().longitude_deg()), absl::StrJoin(f.prefixes(), ",")});
    }
    std::cout << table.Render();
  } else if (kind == "nodes") {
    v1::ListNodesRequest request;
    request.set_facility_id(options.facility);
    v1::ListNodesResponse response;
    if (auto s = stub.ListNodes(&context, request, &response); !s.ok()) return Fail(s);
    if (json) return std::cout << Json(response), 0;
    Table table({"ID", "FACILITY"});
    for (const auto& n : response.nodes()) table.Add({n.id(), n.facility_id()});
    std::cout << table.Render();
  } else if (kind == "links") {
    v1::ListLinksRequest request;
    request.set_facility_id(options.facility);
    v1::ListLinksResponse response;
    if (auto s = stub.ListLinks(&context, request, &response); !s.ok()) return Fail(s);
    if (json) return std::cout << Json(response), 0;
    Table table({"ID", "FROM", "TO", "GBPS", "LATENCY_US", "STATE", "RTT_US", "ADMIN", "SRLGS"});
    for (const auto& l : response.links()) {
      table.Add({l.id(), l.src_facility_id(), l.dst_facility_id(),
                 absl::StrCat(l.capacity_gbps()), absl::StrCat(l.latency_us()),
                 state::OperStateName(l.health().state()), absl::StrCat(l.health().rtt_us()),
                 l.admin_state() == v1::ADMIN_STATE_DRAINED ? "drained" : "up",
                 absl::StrJoin(l.srlgs(), ",")});
    }
    std::cout << table.Render();
  } else if (kind == "plan") {
    v1::GetPlanRequest request;
    request.set_facility_id(options.facility);
    v1::GetPlanResponse response;
    if (auto s = stub.GetPlan(&context, request, &response); !s.ok()) return Fail(s);
    if (json) return std::cout << Json(response), 0;
    std::cout << "generation " << response.plan().generation() << "  epoch "
              << response.plan().epoch() << "  reason: " << response.plan().reason() << "\n";
    Table table({"SITE", "PREFIX", "TO", "VIA", "PATH", "LATENCY_US", "BACKUPS"});
    for (const auto& site : response.plan().sites()) {
      for (const auto& r : site.routes()) {
        std::vector<std::string> via;
        for (const auto& hop : r.next_hops()) via.push_back(hop.link_id());
        table.Add({site.facility_id(), r.prefix(), r.destination_facility_id(),
                   absl::StrJoin(via, ","), absl::StrJoin(r.path_facility_ids(), ">"),
                   absl::StrCat(r.path_latency_us()), absl::StrCat(r.backups_size())});
      }
    }
    std::cout << table.Render();
    Table sites({"SITE", "INSTALLED_GENERATION", "EPOCH", "OK", "ERROR"});
    for (const auto& s : response.sites()) {
      sites.Add({s.facility_id(), absl::StrCat(s.generation()), absl::StrCat(s.epoch()),
                 s.installed() ? "yes" : "no", s.error()});
    }
    std::cout << "\n" << sites.Render();
  } else if (kind == "intents") {
    v1::ListIntentsResponse response;
    if (auto s = stub.ListIntents(&context, {}, &response); !s.ok()) return Fail(s);
    if (json) return std::cout << Json(response), 0;
    Table table({"ID", "ACTION", "TARGET", "BY", "REASON"});
    for (const auto& i : response.intents()) {
      table.Add({i.id(), "drain", i.drain().target().ShortDebugString(), i.created_by(),
                 i.reason()});
    }
    std::cout << table.Render();
  } else if (kind == "workloads") {
    v1::ListWorkloadsResponse response;
    if (auto s = stub.ListWorkloads(&context, {}, &response); !s.ok()) return Fail(s);
    std::cout << Json(response);
  } else {
    return UsageError("unknown kind \"" + kind + "\"");
  }
  return 0;
}

// drain/undrain: the intent id is derived from the target so undrain can find it.
int Drain(v1::Operator::Stub& stub, const Options& options, bool drain) {
  if (options.words.size() != 3) return UsageError("drain/undrain take a kind and an id");
  const std::string& kind = options.words[1];
  const std::string& id = options.words[2];
  if (!state::IsValidEntityId(id)) return UsageError("\"" + id + "\" is not a valid id");
  v1::Target target;
  if (kind == "link") {
    target.set_link_id(id);
  } else if (kind == "node") {
    target.set_node_id(id);
  } else if (kind == "facility") {
    target.set_facility_id(id);
  } else {
    return UsageError("can drain a link, node or facility, not \"" + kind + "\"");
  }
  const std::string intent_id = absl::StrCat("drain-", kind, "-", id);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  uint64_t generation = 0;
  if (drain) {
    v1::AddIntentRequest request;
    request.mutable_intent()->set_id(intent_id);
    *request.mutable_intent()->mutable_drain()->mutable_target() = target;
    request.mutable_intent()->set_reason(options.reason);
    v1::AddIntentResponse response;
    if (auto s = stub.AddIntent(&context, request, &response); !s.ok()) return Fail(s);
    generation = response.plan_generation();
  } else {
    v1::DeleteIntentRequest request;
    request.set_id(intent_id);
    v1::DeleteIntentResponse response;
    if (auto s = stub.DeleteIntent(&context, request, &response); !s.ok()) return Fail(s);
    generation = response.plan_generation();
  }
  std::cout << (drain ? "drained " : "undrained ") << kind << " " << id << " (intent "
            << intent_id << "), plan generation " << generation << "\n";
  return 0;
}

int Main(int argc, char** argv) {
  std::string error;
  auto options = ParseFlags(argc, argv, error);
  if (!options) return UsageError(error);
  if (options->words.empty()) return UsageError("no command");
  const std::string& command = options->words[0];
  if (command == "help") return std::printf("%s", kUsage), 0;
  if (command != "get" && command != "drain" && command != "undrain") {
    return UsageError("unknown command \"" + command + "\"");
  }
  if (options->server.empty()) return UsageError("--server (or GEODESIC_SERVER) is required");
  const tls::TlsFiles files{options->ca, options->cert, options->key};
  if (auto status = tls::ValidateTlsFiles(files); !status.ok()) {
    return UsageError(std::string(status.message()));
  }
  auto channel = grpc::CreateChannel(
      options->server, tls::MakeChannelCredentials(files, tls::Identity::Kind::kPathcomp));
  auto stub = v1::Operator::NewStub(channel);
  if (command == "get") return Get(*stub, *options);
  return Drain(*stub, *options, command == "drain");
}

}  // namespace
}  // namespace geodesic::cli

int main(int argc, char** argv) { return geodesic::cli::Main(argc, argv); }
