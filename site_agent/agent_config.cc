#include "site_agent/agent_config.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "config/config_reader.h"
#include "config/shared_keys.h"
#include "site_agent/interface_counters.h"
#include "site_agent/probe/probe_engine.h"

namespace geodesic::site_agent {
namespace {

ProbeConfig ReadProbe(config::ConfigReader& reader) {
  ProbeConfig probe;
  probe.listen = reader.RequiredString("listen");
  if (!probe.listen.empty()) {
    if (auto endpoint = probe::ParseUdpEndpoint(probe.listen); !endpoint.ok()) {
      reader.AddError("listen", std::string(endpoint.status().message()));
    }
  }
  probe.interval = std::chrono::milliseconds(reader.OptionalUint("interval_ms", 100, 1, 10'000));
  probe.detect_multiplier = static_cast<uint32_t>(reader.OptionalUint("detect_multiplier", 3, 2, 255));
  probe.window = static_cast<uint32_t>(reader.OptionalUint("window", 100, 10, 100'000));
  probe.loss_degraded_ratio = reader.OptionalDouble("loss_degraded_ratio", 0.05, 0.001, 1);
  probe.rtt_degraded_us = reader.OptionalUint("rtt_degraded_us", 0, 0, 10'000'000);
  probe.hold_down = std::chrono::milliseconds(reader.OptionalUint("hold_down_ms", 1000, 0, 3'600'000));
  probe.hold_down_max = std::chrono::milliseconds(reader.OptionalUint("hold_down_max_ms", 30'000, 0, 3'600'000));
  if (probe.hold_down_max < probe.hold_down) reader.AddError("hold_down_max_ms", "is below hold_down_ms");
  probe.realtime_priority = static_cast<int>(reader.OptionalUint("realtime_priority", 0, 0, 99));
  probe.accept_from = reader.OptionalStringList("accept_from");
  for (const std::string& peer : probe.accept_from) {
    auto endpoint = probe::ParseUdpEndpoint(peer);
    if (!endpoint.ok() || endpoint->port() == 0) {
      reader.AddError("accept_from", absl::StrCat("\"", peer, "\" is not an IP address and port"));
    }
  }
  reader.RejectUnknownKeys();
  return probe;
}

FabricHealthConfig ReadFabricHealth(config::ConfigReader& reader) {
  FabricHealthConfig fabric;
  fabric.source = reader.RequiredString("source");
  if (!fabric.source.empty() && fabric.source.find("://") == std::string::npos) {
    fabric.source = reader.RequiredPath("source");  // a file, relative to the config
  }
  fabric.shape.planes = static_cast<uint32_t>(reader.RequiredUint("planes", 1, 64));
  fabric.shape.rails = static_cast<uint32_t>(reader.RequiredUint("rails", 1, 64));
  if (!fabric.source.empty() && fabric.shape.planes > 0 && fabric.shape.rails > 0) {
    if (auto source = FabricHealthSource::Create(fabric.source, fabric.shape); !source.ok()) {
      reader.AddError("source", std::string(source.status().message()));
    }
  }
  reader.RejectUnknownKeys();
  return fabric;
}

ServiceReportsConfig ReadServiceReports(config::ConfigReader& reader) {
  ServiceReportsConfig reports;
  reports.listen = reader.RequiredString("listen");
  reports.address_file = reader.OptionalPath("address_file", "");
  reports.max_reports = reader.OptionalUint("max_reports", reports.max_reports, 1, 1'000'000);
  const bool allow_remote = reader.OptionalBool("allow_remote", false);
  if (!reports.listen.empty()) {
    if (absl::Status valid = daemon::ValidateListenAddress(reports.listen, /*allow_port_zero=*/true); !valid.ok()) {
      reader.AddError("listen", std::string(valid.message()));
    } else if (!allow_remote && !daemon::IsLoopbackListenAddress(reports.listen)) {
      reader.AddError("listen", "the endpoint has no authentication: use a loopback address, or allow_remote: true");
    }
  }
  reader.RejectUnknownKeys();
  return reports;
}

LinkConfig ReadLink(config::ConfigReader& entry) {
  LinkConfig link;
  link.id = entry.RequiredId("id");
  const std::string state_text = entry.OptionalString("state", "up");
  if (auto state = ParseOperState(state_text)) {
    link.static_health.set_state(*state);
  } else {
    entry.AddError("state", absl::StrCat("expected up, degraded or down, got \"", state_text, "\""));
  }
  link.static_health.set_rtt_us(entry.OptionalUint("rtt_us", 0, 0, 10'000'000));
  link.static_health.set_loss_ratio(entry.OptionalDouble("loss_ratio", 0, 0, 1));
  link.static_health.set_utilization_ratio(entry.OptionalDouble("utilization_ratio", 0, 0, 100));
  link.peer = entry.OptionalString("peer", "");
  if (!link.peer.empty()) {
    auto endpoint = probe::ParseUdpEndpoint(link.peer);
    if (!endpoint.ok()) {
      entry.AddError("peer", std::string(endpoint.status().message()));
    } else if (endpoint->port() == 0) {
      entry.AddError("peer", "the far end's probe port is needed (not 0)");
    }
  }
  link.interface = entry.OptionalString("interface", "");
  if (!link.interface.empty()) {
    if (absl::Status valid = ValidateInterfaceName(link.interface); !valid.ok()) {
      entry.AddError("interface", std::string(valid.message()));
    }
  }
  link.capacity_gbps = entry.OptionalDouble("capacity_gbps", 0, 0, 1'000'000);
  entry.RejectUnknownKeys();
  return link;
}

}  // namespace

std::optional<v1::OperState> ParseOperState(const std::string& text) {
  if (text == "up") return v1::OPER_STATE_UP;
  if (text == "degraded") return v1::OPER_STATE_DEGRADED;
  if (text == "down") return v1::OPER_STATE_DOWN;
  return std::nullopt;
}

std::vector<std::pair<std::string, v1::LinkHealth>> AgentConfig::StaticHealth() const {
  std::vector<std::pair<std::string, v1::LinkHealth>> health;
  for (const LinkConfig& link : links) health.emplace_back(link.id, link.static_health);
  return health;
}

absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path) {
  auto reader = config::ConfigReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  AgentConfig config;
  config.facility_id = reader->RequiredId("facility");
  if (reader->Has("agent_id")) config.agent_id = reader->RequiredId("agent_id");
  config.pathcomp_addresses = config::ReadPathcompReplicas(*reader);
  config.tls = config::ReadTlsKeys(*reader);
  config.poll_interval = std::chrono::milliseconds(reader->OptionalUint("poll_interval_ms", 100, 1, 60'000));
  config.report_interval =
      std::chrono::milliseconds(reader->OptionalUint("report_interval_ms", 1000, 10, 3'600'000));
  config.outbox_limit = reader->OptionalUint("outbox_limit", 10'000, 16, 10'000'000);
  config.health_file = reader->OptionalPath("health_file", "");
  if (auto probe = reader->OptionalMap("probe")) config.probe = ReadProbe(*probe);
  config.interfaces_root = reader->OptionalPath("interfaces_root", config.interfaces_root);
  if (auto fabric = reader->OptionalMap("fabric_health")) config.fabric_health = ReadFabricHealth(*fabric);
  config.routerd_socket = reader->OptionalPath("routerd_socket", "");
  if (auto reports = reader->OptionalMap("service_reports")) config.service_reports = ReadServiceReports(*reports);
  config.health_listen = config::ReadHealthListen(*reader);
  config.metrics = config::ReadMetricsListen(*reader, config.tls);
  std::set<std::string> seen;
  for (auto& entry : reader->RequiredMapList("links")) {
    LinkConfig link = ReadLink(entry);
    if (!link.id.empty() && !seen.insert(link.id).second) {
      entry.AddError("id", absl::StrCat("link ", link.id, " is listed twice"));
    }
    if (!link.peer.empty() && !config.probe.has_value()) {
      entry.AddError("peer", "probing a peer needs a probe: section");
    }
    config.links.push_back(std::move(link));
  }
  reader->RejectUnknownKeys();
  if (auto status = reader->status(); !status.ok()) return status;
  return config;
}

}  // namespace geodesic::site_agent
