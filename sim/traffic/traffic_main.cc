// geodesic-traffic: paced UDP streams with sequence numbers, and a receiver
// that counts what arrived (traffic_options.h has the usage,
// traffic_report.h the JSON). Exit codes: 0 ok, 1 a socket or file error,
// 2 bad usage.
#include <sched.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "files/atomic_file.h"
#include "sim/traffic/stream_receiver.h"
#include "sim/traffic/stream_sender.h"
#include "sim/traffic/traffic_options.h"
#include "sim/traffic/traffic_report.h"

namespace geodesic::traffic {
namespace {

std::atomic<bool> stop_requested{false};
std::atomic<bool> snapshot_requested{false};

// SIGTERM/SIGINT end a run early, with its summary or report; SIGUSR1 asks a
// receiver for its report so far (it goes on). No SA_RESTART: the sleeps and
// polls return at once.
void HandleSignals() {
  struct sigaction action = {};
  action.sa_handler = [](int) { stop_requested.store(true); };
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  struct sigaction snapshot = {};
  snapshot.sa_handler = [](int) { snapshot_requested.store(true); };
  sigemptyset(&snapshot.sa_mask);
  sigaction(SIGUSR1, &snapshot, nullptr);
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "geodesic-traffic: %s\n", message.c_str());
  return 1;
}

int Send(const SendOptions& options) {
  absl::StatusOr<SendSummary> summary = RunSender(options, stop_requested);
  if (!summary.ok()) return Fail(std::string(summary.status().message()));
  const std::string json = FormatSendSummary(*summary);
  std::fputs(json.c_str(), stdout);
  if (!options.report_path.empty()) {
    if (absl::Status written = files::AtomicWriteFile(options.report_path, json); !written.ok()) {
      return Fail(std::string(written.message()));
    }
  }
  return 0;
}

absl::Status WriteReport(const ReceiveOptions& options, const StreamReceiverStats& stats, const ReceiverRun& run) {
  const std::string report = FormatReceiverReport(stats, {.late_after_ms = options.late_ms,
                                                          .outage_min_ms = options.outage_min_ms,
                                                          .duration_s = run.duration_s,
                                                          .socket_drops = run.socket_drops,
                                                          .bins = options.bins});
  return files::AtomicWriteFile(options.report_path, report);
}

int Receive(const ReceiveOptions& options) {
  // The receiver sleeps in poll() between batches: in real time it costs
  // nothing, and a host busy with other work no longer overflows its socket
  // (which would read as the network losing packets).
  if (options.realtime_priority > 0) {
    sched_param param{};
    param.sched_priority = options.realtime_priority;
    if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      std::fprintf(stderr, "geodesic-traffic: receiving at normal priority: SCHED_FIFO refused: %s\n",
                   std::strerror(errno));
    }
  }
  StreamReceiverStats stats(StreamStatsConfig{.late_after_ns = static_cast<int64_t>(options.late_ms * 1e6)});
  absl::Status snapshot_written = absl::OkStatus();
  absl::StatusOr<ReceiverRun> run = RunReceiver(options, stop_requested, stats, [&](const ReceiverRun& so_far) {
    if (snapshot_requested.exchange(false)) snapshot_written.Update(WriteReport(options, stats, so_far));
  });
  if (!run.ok()) return Fail(std::string(run.status().message()));
  if (!snapshot_written.ok()) return Fail(std::string(snapshot_written.message()));
  if (absl::Status written = WriteReport(options, stats, *run); !written.ok()) return Fail(std::string(written.message()));
  return 0;
}

}  // namespace
}  // namespace geodesic::traffic

int main(int argc, char** argv) {
  using namespace geodesic::traffic;
  absl::StatusOr<TrafficCommand> command = ParseTrafficCommand(std::vector<std::string>(argv + 1, argv + argc));
  if (!command.ok()) {
    std::fprintf(stderr, "geodesic-traffic: %s\n%s", std::string(command.status().message()).c_str(), kTrafficUsage);
    return 2;
  }
  if (std::holds_alternative<HelpRequest>(*command)) {
    std::fputs(kTrafficUsage, stdout);
    return 0;
  }
  HandleSignals();
  if (const auto* send = std::get_if<SendOptions>(&*command)) return Send(*send);
  return Receive(std::get<ReceiveOptions>(*command));
}
