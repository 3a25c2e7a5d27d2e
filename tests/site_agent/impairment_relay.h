#pragma once
// A UDP forwarder for tests that impairs a path on command (kernel netem is
// not available here): datagrams sent to listen_endpoint() go to the target
// from outward_endpoint(), and the target's answers go back to whoever sent
// last. Impairments apply to what travels towards the target; a blackhole
// swallows both directions. One thread; the commands are thread-safe.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

namespace geodesic::testing {

class ImpairmentRelay {
 public:
  // Forwards nothing until it has a target.
  ImpairmentRelay();
  ~ImpairmentRelay();

  boost::asio::ip::udp::endpoint listen_endpoint() const { return listen_endpoint_; }
  boost::asio::ip::udp::endpoint outward_endpoint() const { return outward_endpoint_; }

  void SetTarget(boost::asio::ip::udp::endpoint target);
  void Pass();
  void Blackhole();
  // Drops exactly one in `n` datagrams towards the target, evenly spaced
  // (n = 5: 20% loss, never two in a row).
  void DropOneIn(int n);
  // Drops each datagram towards the target with `probability` (seeded).
  void DropRandomly(double probability, uint32_t seed);
  void Delay(std::chrono::microseconds delay);

  uint64_t forwarded() const { return forwarded_; }
  uint64_t dropped() const { return dropped_; }

 private:
  bool DropTowardsTarget();
  void ReceiveFromClients();
  void ReceiveFromTarget();

  boost::asio::io_context io_;
  boost::asio::ip::udp::socket inward_, outward_;
  boost::asio::ip::udp::endpoint listen_endpoint_, outward_endpoint_;
  boost::asio::ip::udp::endpoint client_, last_client_, from_target_;
  std::array<uint8_t, 65536> client_buffer_{}, target_buffer_{};
  std::mutex mu_;  // the target and the impairment settings
  boost::asio::ip::udp::endpoint target_;
  bool blackhole_ = false;
  int drop_one_in_ = 0;
  uint64_t counted_ = 0;
  double drop_probability_ = 0;
  std::mt19937 random_;
  std::chrono::microseconds delay_{0};
  std::atomic<uint64_t> forwarded_{0}, dropped_{0};
  std::thread thread_;
};

}  // namespace geodesic::testing
