#include "tests/site_agent/impairment_relay.h"

#include <boost/asio/steady_timer.hpp>

namespace geodesic::testing {

using boost::asio::ip::udp;

ImpairmentRelay::ImpairmentRelay()
    : inward_(io_, udp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
      outward_(io_, udp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
  listen_endpoint_ = inward_.local_endpoint();
  outward_endpoint_ = outward_.local_endpoint();
  ReceiveFromClients();
  ReceiveFromTarget();
  thread_ = std::thread([this] { io_.run(); });
}

ImpairmentRelay::~ImpairmentRelay() {
  io_.stop();
  thread_.join();
}

void ImpairmentRelay::SetTarget(udp::endpoint target) {
  std::lock_guard lock(mu_);
  target_ = target;
}

void ImpairmentRelay::Pass() {
  std::lock_guard lock(mu_);
  blackhole_ = false;
  drop_one_in_ = 0;
  drop_probability_ = 0;
  delay_ = std::chrono::microseconds(0);
}

void ImpairmentRelay::Blackhole() {
  std::lock_guard lock(mu_);
  blackhole_ = true;
}

void ImpairmentRelay::DropOneIn(int n) {
  std::lock_guard lock(mu_);
  drop_one_in_ = n;
  counted_ = 0;
}

void ImpairmentRelay::DropRandomly(double probability, uint32_t seed) {
  std::lock_guard lock(mu_);
  drop_probability_ = probability;
  random_.seed(seed);
}

void ImpairmentRelay::Delay(std::chrono::microseconds delay) {
  std::lock_guard lock(mu_);
  delay_ = delay;
}

bool ImpairmentRelay::DropTowardsTarget() {
  std::lock_guard lock(mu_);
  if (blackhole_ || target_.port() == 0) return true;
  if (drop_one_in_ > 0 && ++counted_ % drop_one_in_ == 0) return true;
  return drop_probability_ > 0 && std::uniform_real_distribution<double>(0, 1)(random_) < drop_probability_;
}

void ImpairmentRelay::ReceiveFromClients() {
  inward_.async_receive_from(boost::asio::buffer(client_buffer_), client_,
                             [this](const boost::system::error_code& error, size_t bytes) {
                               if (error == boost::asio::error::operation_aborted) return;
                               if (!error) {
                                 last_client_ = client_;
                                 if (DropTowardsTarget()) {
                                   ++dropped_;
                                 } else {
                                   auto packet = std::make_shared<std::vector<uint8_t>>(
                                       client_buffer_.begin(), client_buffer_.begin() + bytes);
                                   std::chrono::microseconds delay;
                                   udp::endpoint target;
                                   {
                                     std::lock_guard lock(mu_);
                                     delay = delay_;
                                     target = target_;
                                   }
                                   auto send = [this, packet, target] {
                                     outward_.async_send_to(boost::asio::buffer(*packet), target,
                                                            [packet](const boost::system::error_code&, size_t) {});
                                   };
                                   if (delay.count() == 0) {
                                     send();
                                   } else {
                                     auto timer = std::make_shared<boost::asio::steady_timer>(io_, delay);
                                     timer->async_wait([timer, send](const boost::system::error_code& e) {
                                       if (!e) send();
                                     });
                                   }
                                   ++forwarded_;
                                 }
                               }
                               ReceiveFromClients();
                             });
}

void ImpairmentRelay::ReceiveFromTarget() {
  outward_.async_receive_from(boost::asio::buffer(target_buffer_), from_target_,
                              [this](const boost::system::error_code& error, size_t bytes) {
                                if (error == boost::asio::error::operation_aborted) return;
                                bool blackhole;
                                {
                                  std::lock_guard lock(mu_);
                                  blackhole = blackhole_;
                                }
                                if (!error && !blackhole && last_client_.port() != 0) {
                                  auto packet = std::make_shared<std::vector<uint8_t>>(
                                      target_buffer_.begin(), target_buffer_.begin() + bytes);
                                  inward_.async_send_to(boost::asio::buffer(*packet), last_client_,
                                                        [packet](const boost::system::error_code&, size_t) {});
                                }
                                ReceiveFromTarget();
                              });
}

}  // namespace geodesic::testing
