#include "site_agent/link_health_source.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "config/config_reader.h"
#include "daemon/log.h"
#include "site_agent/agent_config.h"

namespace geodesic::site_agent {
namespace {

bool SameMeasurement(v1::LinkHealth a, v1::LinkHealth b) {
  a.clear_measured_at_unix_ms();
  b.clear_measured_at_unix_ms();
  return a.SerializeAsString() == b.SerializeAsString();
}

}  // namespace

LinkHealthSource::LinkHealthSource(std::vector<std::pair<std::string, v1::LinkHealth>> static_health,
                                   std::string health_file)
    : health_file_(std::move(health_file)) {
  for (auto& [id, health] : static_health) base_[id] = health;
}

void LinkHealthSource::SetMeasured(const std::string& link_id, const v1::LinkHealth& measured) {
  auto it = base_.find(link_id);
  if (it == base_.end()) return;
  it->second.set_state(measured.state());
  it->second.set_rtt_us(measured.rtt_us());
  it->second.set_jitter_us(measured.jitter_us());
  it->second.set_loss_ratio(measured.loss_ratio());
}

void LinkHealthSource::SetUtilization(const std::string& link_id, double utilization_ratio) {
  auto it = base_.find(link_id);
  if (it != base_.end()) it->second.set_utilization_ratio(utilization_ratio);
}

absl::Status LinkHealthSource::ReadHealthFile(std::map<std::string, Override>& overrides) const {
  auto reader = config::ConfigReader::FromString(last_file_content_, health_file_);
  if (!reader.ok()) return reader.status();
  auto links = reader->RequiredMap("links");
  for (const auto& id : links.Keys()) {
    if (!base_.count(id)) {
      links.AddError(id, "not a link of this facility");
      continue;
    }
    auto entry = links.RequiredMap(id);
    Override forced;
    if (entry.Has("state")) {
      const std::string state_text = entry.RequiredString("state");
      if (auto state = ParseOperState(state_text)) {
        forced.state = *state;
      } else {
        entry.AddError("state", absl::StrCat("expected up, degraded or down, got \"", state_text, "\""));
      }
    }
    if (entry.Has("rtt_us")) forced.rtt_us = entry.RequiredUint("rtt_us", 0, 10'000'000);
    if (entry.Has("loss_ratio")) forced.loss_ratio = entry.RequiredDouble("loss_ratio", 0, 1);
    if (entry.Has("utilization_ratio")) forced.utilization_ratio = entry.RequiredDouble("utilization_ratio", 0, 100);
    entry.RejectUnknownKeys();
    overrides[id] = forced;
  }
  reader->RejectUnknownKeys();
  return reader->status();
}

void LinkHealthSource::ReloadHealthFile() {
  if (health_file_.empty()) return;
  std::ifstream in(health_file_);
  const bool present = static_cast<bool>(in);
  std::string content;
  if (present) {
    std::stringstream text;
    text << in.rdbuf();
    content = text.str();
  }
  if (present == file_present_ && content == last_file_content_) return;
  file_present_ = present;
  last_file_content_ = content;
  std::map<std::string, Override> overrides;
  file_status_ = present ? ReadHealthFile(overrides) : absl::OkStatus();
  if (file_status_.ok()) {
    overrides_ = std::move(overrides);
  } else {
    daemon::LogError("health file ignored", {{"error", std::string(file_status_.message())}});
  }
}

v1::LinkHealth LinkHealthSource::Effective(const std::string& link_id) const {
  v1::LinkHealth health = base_.at(link_id);
  auto it = overrides_.find(link_id);
  if (it == overrides_.end()) return health;
  const Override& forced = it->second;
  if (forced.state) health.set_state(*forced.state);
  if (forced.rtt_us) health.set_rtt_us(*forced.rtt_us);
  if (forced.loss_ratio) health.set_loss_ratio(*forced.loss_ratio);
  if (forced.utilization_ratio) health.set_utilization_ratio(*forced.utilization_ratio);
  return health;
}

std::vector<v1::LinkReport> LinkHealthSource::Poll(int64_t now_unix_ms, bool measurements_due) {
  ReloadHealthFile();
  std::vector<v1::LinkReport> changed;
  for (const auto& [id, base] : base_) {
    v1::LinkHealth health = Effective(id);
    auto current_it = current_.find(id);
    if (!first_poll_ && current_it != current_.end()) {
      const v1::LinkHealth& previous = current_it->second;
      const bool state_changed = previous.state() != health.state();
      if (!state_changed && (!measurements_due || SameMeasurement(previous, health))) continue;
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
