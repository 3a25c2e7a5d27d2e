#include "routerd/fail_static.h"

#include <gtest/gtest.h>

namespace geodesic::routerd {
namespace {

using namespace std::chrono_literals;
using Action = ControllerContact::Verdict::Action;

TEST(ControllerContactTest, WarnsWhileAloneAndExpiresOnce) {
  const auto t0 = ControllerContact::Clock::time_point{} + 1000s;
  ControllerContact contact(3600s, t0);
  EXPECT_EQ(contact.Check(t0 + 5s).action, Action::kNone);
  const auto warn = contact.Check(t0 + 11s);
  EXPECT_EQ(warn.action, Action::kWarn);
  EXPECT_EQ(warn.expires_in, 3589s);
  EXPECT_EQ(contact.Check(t0 + 30s).action, Action::kNone);  // once a minute
  EXPECT_EQ(contact.Check(t0 + 72s).action, Action::kWarn);
  EXPECT_EQ(contact.Check(t0 + 3600s).action, Action::kExpire);
  EXPECT_EQ(contact.Check(t0 + 3700s).action, Action::kNone);  // already expired
}

TEST(ControllerContactTest, AnyConnectedReplicaKeepsRoutesFresh) {
  const auto t0 = ControllerContact::Clock::time_point{} + 1000s;
  ControllerContact contact(600s, t0);
  contact.Connected("a", t0 + 1s);
  contact.Connected("b", t0 + 1s);
  contact.Disconnected("a", t0 + 2s);
  EXPECT_EQ(contact.Check(t0 + 5000s).action, Action::kNone);
  contact.Disconnected("b", t0 + 5000s);
  EXPECT_EQ(contact.Check(t0 + 5500s).action, Action::kWarn);  // alone for 500 s
  EXPECT_EQ(contact.Check(t0 + 5600s).action, Action::kExpire);
  // A controller comes back: the clock starts over when it leaves again.
  contact.Connected("a", t0 + 6000s);
  contact.Disconnected("a", t0 + 6001s);
  EXPECT_EQ(contact.Check(t0 + 6500s).action, Action::kWarn);
  EXPECT_EQ(contact.Check(t0 + 6601s).action, Action::kExpire);
}

}  // namespace
}  // namespace geodesic::routerd
