// tectl's output: JSON and YAML that carry exactly the message, tables' numbers and times.
#include "cli/output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "geodesic/v1/operator.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::Link SampleLink() {
  v1::Link link;
  link.set_id("iad-nyc");
  link.set_src_node_id("iad-br1");
  link.set_dst_node_id("nyc-br1");
  link.set_capacity_gbps(1600);
  link.set_latency_us(2189);
  link.add_srlgs("conduit-iad-north");
  link.add_srlgs("true");  // a string YAML would read as a bool
  link.add_srlgs("1.5");   // ... as a float
  link.mutable_health()->set_state(v1::OPER_STATE_UP);
  link.mutable_health()->set_rtt_us(4400);
  link.mutable_health()->set_loss_ratio(0.25);
  link.mutable_health()->set_measured_at_unix_ms(1714564800123);
  return link;
}

TEST(OutputTest, JsonParsesBackToTheSameMessageAndPrintsDefaults) {
  const v1::Link link = SampleLink();
  const std::string json = ToJson(link);
  EXPECT_THAT(json, HasSubstr("\"src_node_id\""));    // proto field names
  EXPECT_THAT(json, HasSubstr("\"igp_metric\": 0"));  // defaults printed
  EXPECT_THAT(json, HasSubstr("\"admin_state\": \"ADMIN_STATE_UNSPECIFIED\""));
  v1::Link parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(parsed, link));
}

TEST(OutputTest, YamlIsBlockStyleAndReadsBackAsTheSameValues) {
  const std::string yaml = ToYaml(SampleLink());
  EXPECT_THAT(yaml, HasSubstr("id: iad-nyc\n"));
  EXPECT_THAT(yaml, HasSubstr("latency_us: 2189\n"));  // 64-bit ints plain, not "2189"
  EXPECT_THAT(yaml, HasSubstr("measured_at_unix_ms: 1714564800123\n"));
  EXPECT_THAT(yaml, HasSubstr("health:\n"));  // block, not flow
  EXPECT_THAT(yaml, Not(HasSubstr("{")));
  const YAML::Node node = YAML::Load(yaml);
  EXPECT_EQ(node["id"].as<std::string>(), "iad-nyc");
  EXPECT_EQ(node["capacity_gbps"].as<double>(), 1600);
  EXPECT_EQ(node["health"]["rtt_us"].as<uint64_t>(), 4400u);
  EXPECT_EQ(node["health"]["loss_ratio"].as<double>(), 0.25);
  EXPECT_EQ(node["health"]["state"].as<std::string>(), "OPER_STATE_UP");
  ASSERT_EQ(node["srlgs"].size(), 3u);
  // Strings that plain YAML would read as a bool or a float stay strings.
  EXPECT_EQ(node["srlgs"][1].Tag(), "!");
  EXPECT_EQ(node["srlgs"][1].as<std::string>(), "true");
  EXPECT_EQ(node["srlgs"][2].Tag(), "!");
  EXPECT_EQ(node["srlgs"][2].as<std::string>(), "1.5");
}

TEST(OutputTest, EmptyListsAndMessagesStayValidYaml) {
  v1::ListLinksResponse empty;
  const std::string yaml = ToYaml(empty);
  EXPECT_EQ(yaml, "links: []\n");
  EXPECT_TRUE(YAML::Load(yaml)["links"].IsSequence());
}

TEST(OutputTest, JsonToYamlRefusesWhatIsNotJson) {
  auto yaml = JsonToYaml("{\"a\": [1, 2}");
  EXPECT_EQ(yaml.status().code(), absl::StatusCode::kInvalidArgument);
  yaml = JsonToYaml("{\"a\": \"\", \"b\": \"null\", \"c\": \"007\", \"d\": 7}");
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  const YAML::Node node = YAML::Load(*yaml);
  EXPECT_EQ(node["a"].as<std::string>(), "");
  EXPECT_FALSE(node["b"].IsNull());
  EXPECT_EQ(node["c"].as<std::string>(), "007");
  EXPECT_EQ(node["d"].as<int>(), 7);
}

TEST(OutputTest, DocumentsKeepTheirOrderInJsonAndYaml) {
  YAML::Node document(YAML::NodeType::Map);
  document["zeta"] = StringNode("needs \"escaping\"\n");
  document["alpha"] = NumberNode(2.5);
  document["flag"] = BoolNode(true);
  document["list"] = StringsNode({"a", "on"});
  const std::string json = NodeToJson(document);
  EXPECT_EQ(json,
            "{\n  \"zeta\": \"needs \\\"escaping\\\"\\n\",\n  \"alpha\": 2.5,\n  \"flag\": true,\n"
            "  \"list\": [\n    \"a\",\n    \"on\"\n  ]\n}\n");
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok());
  const std::string yaml = NodeToYaml(document);
  EXPECT_LT(yaml.find("zeta"), yaml.find("alpha"));
  const YAML::Node back = YAML::Load(yaml);
  EXPECT_EQ(back["zeta"].as<std::string>(), "needs \"escaping\"\n");
  EXPECT_EQ(back["alpha"].as<double>(), 2.5);
  EXPECT_TRUE(back["flag"].as<bool>());
  EXPECT_EQ(back["list"][1].as<std::string>(), "on");
  EXPECT_EQ(back["list"][1].Tag(), "!");
}

TEST(OutputTest, TimesAndNumbers) {
  EXPECT_EQ(FormatUnixMs(0), "-");
  EXPECT_EQ(FormatUnixMs(1714564805999), "2024-05-01T12:00:05Z");
  EXPECT_EQ(FormatNumber(1600), "1600");
  EXPECT_EQ(FormatNumber(1e6), "1000000");
  EXPECT_EQ(FormatNumber(9.95328), "9.95328");
  EXPECT_EQ(FormatNumber(0.25), "0.25");
  EXPECT_EQ(FormatNumber(-77.4874), "-77.4874");
}

}  // namespace
}  // namespace geodesic::cli
