#include "tls/identity.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace geodesic::tls {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseSpiffeIdTest, SiteAgent) {
  absl::StatusOr<Identity> id =
      ParseSpiffeId("spiffe://geodesic/site/iad/agent");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, (Identity{.kind = Identity::Kind::kAgent,
                           .facility_id = "iad",
                           .name = "",
                           .role = Role::kNone,
                           .spiffe_id = "spiffe://geodesic/site/iad/agent"}));
}

TEST(ParseSpiffeIdTest, SiteRouterd) {
  absl::StatusOr<Identity> id =
      ParseSpiffeId("spiffe://geodesic/site/nyc-2/routerd");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->kind, Identity::Kind::kRouterd);
  EXPECT_EQ(id->facility_id, "nyc-2");
  EXPECT_EQ(id->name, "");
}

TEST(ParseSpiffeIdTest, Pathcomp) {
  absl::StatusOr<Identity> id = ParseSpiffeId("spiffe://geodesic/pathcomp/pc1");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->kind, Identity::Kind::kPathcomp);
  EXPECT_EQ(id->name, "pc1");
  EXPECT_EQ(id->facility_id, "");
  EXPECT_EQ(id->spiffe_id, "spiffe://geodesic/pathcomp/pc1");
}

TEST(ParseSpiffeIdTest, OperatorHasNoRoleFromTheUri) {
  absl::StatusOr<Identity> id =
      ParseSpiffeId("spiffe://geodesic/operator/alice");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->kind, Identity::Kind::kOperator);
  EXPECT_EQ(id->name, "alice");
  EXPECT_EQ(id->role, Role::kNone);
}

TEST(ParseSpiffeIdTest, Tenant) {
  absl::StatusOr<Identity> id = ParseSpiffeId("spiffe://geodesic/tenant/acme-1");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, (Identity{.kind = Identity::Kind::kTenant,
                           .facility_id = "",
                           .name = "acme-1",
                           .role = Role::kNone,
                           .spiffe_id = "spiffe://geodesic/tenant/acme-1"}));
}

TEST(ParseSpiffeIdTest, IdsMayUseDotsDashesUnderscoresAndBeLong) {
  const std::string id63(63, 'a');
  EXPECT_TRUE(ParseSpiffeId("spiffe://geodesic/site/us-east.1_a/agent").ok());
  EXPECT_TRUE(ParseSpiffeId("spiffe://geodesic/pathcomp/0").ok());
  absl::StatusOr<Identity> etcd = ParseSpiffeId("spiffe://geodesic/etcd/etcd1");
  ASSERT_TRUE(etcd.ok());
  EXPECT_EQ(etcd->kind, Identity::Kind::kEtcd);
  EXPECT_EQ(etcd->name, "etcd1");
  EXPECT_TRUE(ParseSpiffeId("spiffe://geodesic/operator/" + id63).ok());
}

class InvalidSpiffeIdTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InvalidSpiffeIdTest, IsRejectedWithInvalidArgument) {
  absl::StatusOr<Identity> id = ParseSpiffeId(GetParam());
  ASSERT_FALSE(id.ok()) << "accepted " << GetParam();
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(id.status().message(), HasSubstr("invalid geodesic SPIFFE id"));
}

INSTANTIATE_TEST_SUITE_P(
    Uris, InvalidSpiffeIdTest,
    ::testing::Values(
        "", "spiffe://", "spiffe://geodesic", "spiffe://geodesic/",
        // Wrong scheme or trust domain.
        "https://geodesic/site/iad/agent", "SPIFFE://geodesic/site/iad/agent",
        "spiffe://Geodesic/site/iad/agent", "spiffe://other/site/iad/agent",
        "spiffe://geodesic.example/site/iad/agent",
        "spiffe://user@geodesic/site/iad/agent",
        "spiffe://geodesic:443/site/iad/agent",
        " spiffe://geodesic/site/iad/agent",
        // Wrong shape.
        "spiffe://geodesic/site", "spiffe://geodesic/site/iad",
        "spiffe://geodesic/site/iad/", "spiffe://geodesic/site/iad/agent/",
        "spiffe://geodesic/site/iad/agent/x", "spiffe://geodesic/site//agent",
        "spiffe://geodesic/site/iad/bgpd", "spiffe://geodesic/site/iad/Agent",
        "spiffe://geodesic//site/iad/agent", "spiffe://geodesic/Site/iad/agent",
        "spiffe://geodesic/pathcomp", "spiffe://geodesic/pathcomp/",
        "spiffe://geodesic/pathcomp/pc1/", "spiffe://geodesic/pathcomp/pc1/x",
        "spiffe://geodesic/operator", "spiffe://geodesic/operator/",
        "spiffe://geodesic/operator/alice/admin",
        "spiffe://geodesic/admin/alice", "spiffe://geodesic/etcd", "spiffe://geodesic/etcd/e1/x",
        "spiffe://geodesic/tenant", "spiffe://geodesic/tenant/",
        "spiffe://geodesic/tenant/acme/", "spiffe://geodesic/tenant/acme/x",
        "spiffe://geodesic/tenant/Acme", "spiffe://geodesic/tenants/acme",
        // Bad ids.
        "spiffe://geodesic/site/IAD/agent", "spiffe://geodesic/site/-iad/agent",
        "spiffe://geodesic/site/.iad/agent", "spiffe://geodesic/site/../agent",
        "spiffe://geodesic/operator/al ice",
        "spiffe://geodesic/operator/al%2Fice",
        "spiffe://geodesic/operator/alice?role=admin",
        "spiffe://geodesic/operator/alice#admin",
        "spiffe://geodesic/operator/" + std::string(64, 'a'),
        "spiffe://geodesic/operator/" + std::string("ali\0ce", 6),
        "spiffe://geodesic/operator/al\xc3\xaf"
        "ce"));

TEST(ParseSpiffeIdTest, ErrorQuotesAndEscapesTheInput) {
  absl::StatusOr<Identity> id =
      ParseSpiffeId("spiffe://geodesic/operator/al\nice");
  ASSERT_FALSE(id.ok());
  EXPECT_THAT(id.status().message(), HasSubstr("al\\nice"));
  EXPECT_THAT(id.status().message(), Not(HasSubstr("\n")));
}

TEST(ParseSpiffeIdTest, ErrorForLongInputIsBounded) {
  absl::StatusOr<Identity> id = ParseSpiffeId(std::string(100000, 'x'));
  ASSERT_FALSE(id.ok());
  EXPECT_LT(id.status().message().size(), 400u);
}

TEST(IsValidIdTest, AcceptsTheProjectIdAlphabet) {
  for (const char* id :
       {"a", "0", "iad", "nyc-2", "us_east.1", "a-", "a.", "a..b"}) {
    EXPECT_TRUE(IsValidId(id)) << id;
  }
  EXPECT_TRUE(IsValidId(std::string(63, 'z')));
}

TEST(IsValidIdTest, RejectsEverythingElse) {
  for (const char* id : {"", "-a", ".a", "_a", "A", "iaD", "a b", "a/b", "a:b",
                         "a@b", "a+b", "\xc3\xa9"}) {
    EXPECT_FALSE(IsValidId(id)) << id;
  }
  EXPECT_FALSE(IsValidId(std::string(64, 'z')));
  EXPECT_FALSE(IsValidId(std::string("a\0b", 3)));
}

TEST(RoleTest, ParsesTheThreeRoles) {
  EXPECT_EQ(ParseRole("viewer").value(), Role::kViewer);
  EXPECT_EQ(ParseRole("operator").value(), Role::kOperator);
  EXPECT_EQ(ParseRole("admin").value(), Role::kAdmin);
}

TEST(RoleTest, RejectsOtherNames) {
  for (const char* name :
       {"", "none", "Admin", "ADMIN", "root", "admin ", "view"}) {
    absl::StatusOr<Role> role = ParseRole(name);
    ASSERT_FALSE(role.ok()) << name;
    EXPECT_EQ(role.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(RoleTest, NamesRoundTrip) {
  for (Role role : {Role::kViewer, Role::kOperator, Role::kAdmin}) {
    EXPECT_EQ(ParseRole(RoleName(role)).value(), role);
  }
  EXPECT_EQ(RoleName(Role::kNone), "none");
}

TEST(RoleTest, IsOrderedByPrivilege) {
  EXPECT_LT(Role::kNone, Role::kViewer);
  EXPECT_LT(Role::kViewer, Role::kOperator);
  EXPECT_LT(Role::kOperator, Role::kAdmin);
}

TEST(KindNameTest, NamesEachKind) {
  EXPECT_EQ(KindName(Identity::Kind::kAgent), "agent");
  EXPECT_EQ(KindName(Identity::Kind::kRouterd), "routerd");
  EXPECT_EQ(KindName(Identity::Kind::kPathcomp), "pathcomp");
  EXPECT_EQ(KindName(Identity::Kind::kOperator), "operator");
  EXPECT_EQ(KindName(Identity::Kind::kEtcd), "etcd");
  EXPECT_EQ(KindName(Identity::Kind::kTenant), "tenant");
}

}  // namespace
}  // namespace geodesic::tls
