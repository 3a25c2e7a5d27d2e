#include "site_agent/agent_config.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "config/config_reader.h"
#include "config/shared_keys.h"

namespace geodesic::site_agent {

std::optional<v1::OperState> ParseOperState(const std::string& text) {
  if (text == "up") return v1::OPER_STATE_UP;
  if (text == "degraded") return v1::OPER_STATE_DEGRADED;
  if (text == "down") return v1::OPER_STATE_DOWN;
  return std::nullopt;
}

absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path) {
  auto reader = config::ConfigReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  AgentConfig config;
  config.facility_id = reader->RequiredId("facility");
  if (reader->Has("agent_id")) config.agent_id = reader->RequiredId("agent_id");
  config.pathcomp_addresses = config::ReadPathcompReplicas(*reader);
  config.tls = config::ReadTlsKeys(*reader);
  config.poll_interval =
      std::chrono::milliseconds(reader->OptionalUint("poll_interval_ms", 100, 1, 60'000));
  config.outbox_limit = reader->OptionalUint("outbox_limit", 10'000, 16, 10'000'000);
  config.health_file = reader->OptionalPath("health_file", "");
  std::set<std::string> seen;
  for (auto& entry : reader->RequiredMapList("links")) {
    const std::string id = entry.RequiredId("id");
    v1::LinkHealth health;
    const std::string state_text = entry.OptionalString("state", "up");
    if (auto state = ParseOperState(state_text)) {
      health.set_state(*state);
    } else {
      entry.AddError("state", absl::StrCat("expected up, degraded or down, got \"", state_text, "\""));
    }
    health.set_rtt_us(entry.OptionalUint("rtt_us", 0, 0, 10'000'000));
    health.set_loss_ratio(entry.OptionalDouble("loss_ratio", 0, 0, 1));
    health.set_utilization_ratio(entry.OptionalDouble("utilization_ratio", 0, 0, 100));
    entry.RejectUnknownKeys();
    if (!id.empty() && !seen.insert(id).second) {
      entry.AddError("id", absl::StrCat("link ", id, " is listed twice"));
    }
    config.links.emplace_back(id, health);
  }
  reader->RejectUnknownKeys();
  if (auto status = reader->status(); !status.ok()) return status;
  return config;
}

}  // namespace geodesic::site_agent
