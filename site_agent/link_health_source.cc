#include "site_agent/link_health_source.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "config/config_reader.h"
#include "daemon/log.h"
#include "site_agent/agent_config.h"

namespace geodesic::site_agent {

LinkHealthSource::LinkHealthSource(
    std::vector<std::pair<std::string, v1::LinkHealth>> static_health, std::string health_file)
    : health_file_(std::move(health_file)) {
  for (auto& [id, health] : static_health) static_health_[id] = health;
}

absl::Status LinkHealthSource::ReadHealthFile(
    std::map<std::string, v1::LinkHealth>& overrides) const {
  auto reader = config::ConfigReader::FromString(last_file_content_, health_file_);
  if (!reader.ok()) return reader.status();
  auto links = reader->RequiredMap("links");
  for (const auto& id : links.Keys()) {
    if (!static_health_.count(id)) {
      links.AddError(id, "not a link of this facility");
      continue;
    }
    auto entry = links.RequiredMap(id);
    v1::LinkHealth health = static_health_.at(id);
    const std::string state_text = entry.RequiredString("state");
    if (auto state = ParseOperState(state_text)) {
      health.set_state(*state);
    } else if (!state_text.empty()) {
      entry.AddError("state", absl::StrCat("expected up, degraded or down, got \"", state_text, "\""));
    }
    health.set_rtt_us(entry.OptionalUint("rtt_us", health.rtt_us(), 0, 10'000'000));
    health.set_loss_ratio(entry.OptionalDouble("loss_ratio", health.loss_ratio(), 0, 1));
    health.set_utilization_ratio(
        entry.OptionalDouble("utilization_ratio", health.utilization_ratio(), 0, 100));
    entry.RejectUnknownKeys();
    overrides[id] = health;
  }
  reader->RejectUnknownKeys();
  return reader->status();
}

std::vector<v1::LinkReport> LinkHealthSource::Poll(int64_t now_unix_ms) {
  if (!health_file_.empty()) {
    std::ifstream in(health_file_);
    const bool present = static_cast<bool>(in);
    std::string content;
    if (present) {
      std::stringstream text;
      text << in.rdbuf();
      content = text.str();
    }
    if (present != file_present_ || content != last_file_content_) {
      file_present_ = present;
      last_file_content_ = content;
      std::map<std::string, v1::LinkHealth> overrides;
      file_status_ = present ? ReadHealthFile(overrides) : absl::OkStatus();
      if (file_status_.ok()) {
        overrides_ = std::move(overrides);
      } else {
        daemon::LogError("health file ignored",
                         {{"error", std::string(file_status_.message())}});
      }
    }
  }

  std::vector<v1::LinkReport> changed;
  for (const auto& [id, configured] : static_health_) {
    auto override_it = overrides_.find(id);
    v1::LinkHealth health = override_it != overrides_.end() ? override_it->second : configured;
    auto current_it = current_.find(id);
    if (!first_poll_ && current_it != current_.end()) {
      v1::LinkHealth previous = current_it->second;
      previous.clear_measured_at_unix_ms();
      if (previous.SerializeAsString() == health.SerializeAsString()) continue;
    }
    health.set_measured_at_unix_ms(now_unix_ms);
    current_[id] = health;
    v1::LinkReport report;
    report.set_link_id(id);
    *report.mutable_health() = health;
    changed.push_back(std::move(report));
  }
  first_poll_ = false;
  return changed;
}

std::vector<v1::LinkReport> LinkHealthSource::Current() const {
  std::vector<v1::LinkReport> reports;
  for (const auto& [id, health] : current_) {
    v1::LinkReport report;
    report.set_link_id(id);
    *report.mutable_health() = health;
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace geodesic::site_agent
