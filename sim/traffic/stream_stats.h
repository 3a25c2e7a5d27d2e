#pragma once
// What a receiver of paced UDP streams saw, per stream: packets received, lost
// (gaps in sequence numbers), duplicated, reordered and late, the longest gap
// (the outage), per-1 ms bins, and the first delivery after a given time.
//
// Counting rules (every count is of distinct sequence numbers unless it says
// otherwise):
//   - The stream's sequence range is [lowest seen, highest seen]; `lost` is
//     the size of that range minus `received`, so a packet that arrives out of
//     order fills its gap and is no longer lost. Packets after the highest one
//     seen are not lost yet; they have not been seen to be missing.
//   - `reordered`: arrived after a packet with a higher sequence number.
//   - `duplicates`: arrivals of a sequence number already received (counted
//     per arrival; not in `received`).
//   - `late`: one-way delay (receive time - send time) above the configured
//     bound. Both times are CLOCK_REALTIME, so this is meaningful on one
//     machine (namespaces share the clock) or between synchronized hosts.
//   - Bins are 1 ms of *send* time (ms since the epoch), so a lost packet has
//     a bin too: its send time is interpolated between the packets around its
//     gap. The newest `bin_capacity` bins are kept; an arrival whose bin has
//     already been overwritten is counted in the totals and in `unbinned`.
//
// Memory: 48 bytes per kept bin (allocated at the stream's first packet:
// 5.8 MB at the default two minutes), plus one entry per open gap (a lossy stream with many
// separate gaps holds one each). Pure: no I/O, no clock, no threads.
// Thread-compatible.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "sim/traffic/stream_packet.h"

namespace geodesic::traffic {

struct StreamStatsConfig {
  int64_t late_after_ns = 50'000'000;  // one-way delay above this is late
  size_t bin_capacity = 120'000;       // 1 ms bins kept: two minutes
};

// One packet as it arrived.
struct Delivery {
  uint64_t sequence = 0;
  int64_t send_time_ns = 0;
  int64_t receive_time_ns = 0;
};

// 1 ms of send time.
struct StreamBin {
  int64_t start_ms = 0;  // ms since the Unix epoch
  uint64_t received = 0;
  uint64_t lost = 0;
  uint64_t reordered = 0;
  uint64_t late = 0;
  uint64_t duplicates = 0;
};

// A run of missing sequence numbers between two received packets.
struct StreamGap {
  uint64_t first_missing = 0;
  uint64_t last_missing = 0;
  uint64_t packets = 0;
  double ms = 0;           // packets x the sender's packet interval
  double wall_ms = 0;      // receive time of the first packet after it - of the last before it
  Delivery before;         // the last packet received before the gap
  Delivery after;          // the first packet received after it
};

struct StreamSummary {
  uint32_t stream_id = 0;
  uint64_t first_sequence = 0;    // lowest seen
  uint64_t highest_sequence = 0;  // highest seen
  uint64_t received = 0;
  uint64_t received_bytes = 0;
  uint64_t lost = 0;
  uint64_t duplicates = 0;
  uint64_t reordered = 0;
  uint64_t late = 0;
  uint64_t unbinned = 0;
  uint32_t interval_ns = 0;       // as the sender declares it
  int64_t first_receive_ns = 0;   // earliest receive time
  int64_t last_receive_ns = 0;    // latest receive time
  int64_t max_one_way_delay_ns = 0;
  std::optional<StreamGap> longest_gap;  // by packets; the earliest of equals
};

// One stream. Record() packets of one stream id only.
class StreamStats {
 public:
  explicit StreamStats(uint32_t stream_id, StreamStatsConfig config = {});

  void Record(const StreamPacket& packet, int64_t receive_time_ns);

  [[nodiscard]] StreamSummary Summary() const;
  // Every gap still open (not filled by a late arrival), in sequence order.
  [[nodiscard]] std::vector<StreamGap> Gaps() const;
  // The kept bins with anything in them, oldest first.
  [[nodiscard]] std::vector<StreamBin> Bins() const;
  // The earliest-received packet among those sent at or after `time_ns` (for
  // a failure at `time_ns`: the first packet delivered on the new path).
  // Resolved through the bins: each keeps its earliest-received packet, so
  // when that one of `time_ns`'s own bin was sent before `time_ns`, the
  // answer comes from the following bins (at most 1 ms of send time later
  // than exact). nullopt when nothing sent after `time_ns` arrived or its
  // bins are no longer kept.
  [[nodiscard]] std::optional<Delivery> FirstDeliveredAfter(int64_t time_ns) const;

 private:
  // 48 bytes a bin (5.8 MB a stream at the default capacity).
  struct Slot {
    int64_t index = -1;  // ms since the epoch; -1: never used
    uint32_t received = 0;
    uint32_t reordered = 0;
    uint32_t late = 0;
    uint32_t duplicates = 0;
    Delivery first_delivery;  // the earliest received; meaningful when received > 0
  };
  struct OpenGap {
    uint64_t last_missing = 0;
    Delivery before;
    Delivery after;
  };

  // The slot of bin `index`, reset if it held an older bin; nullptr when the
  // bin is older than every kept one.
  Slot* SlotFor(int64_t index);
  // Fills `sequence` in its open gap; false when it is in none (a duplicate).
  bool FillGap(const Delivery& delivery);
  StreamGap GapOf(uint64_t first_missing, const OpenGap& gap) const;

  uint32_t stream_id_;
  StreamStatsConfig config_;
  bool started_ = false;
  StreamSummary totals_;  // all but lost and longest_gap, which come from gaps_
  Delivery lowest_;       // the packet with the lowest sequence seen
  Delivery highest_;      // the packet with the highest sequence seen
  std::map<uint64_t, OpenGap> gaps_;  // by first missing sequence number
  std::vector<Slot> slots_;           // ring of bins, allocated at the first packet
  int64_t newest_index_ = -1;
};

// Every stream arriving at one receiver, by stream id, and the datagrams that
// were not stream packets. Thread-compatible.
class StreamReceiverStats {
 public:
  explicit StreamReceiverStats(StreamStatsConfig config = {});

  // Decodes one received datagram (its whole length) and records it, or
  // counts it as rejected.
  void RecordDatagram(std::span<const uint8_t> datagram, int64_t receive_time_ns);
  void Record(const StreamPacket& packet, int64_t receive_time_ns);

  [[nodiscard]] const std::map<uint32_t, StreamStats>& streams() const { return streams_; }
  [[nodiscard]] uint64_t rejected(PacketRejection rejection) const;
  [[nodiscard]] uint64_t rejected_total() const;

 private:
  StreamStatsConfig config_;
  std::map<uint32_t, StreamStats> streams_;
  std::map<PacketRejection, uint64_t> rejected_;
};

}  // namespace geodesic::traffic
