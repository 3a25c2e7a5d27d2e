#include "config/config_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::config {
namespace {

using ::testing::HasSubstr;

ConfigReader Parse(const std::string& text) {
  auto reader = ConfigReader::FromString(text, "/etc/geodesic/agent.yaml");
  EXPECT_TRUE(reader.ok()) << reader.status();
  return *reader;
}

TEST(ConfigReaderTest, ReadsTypedValuesAndResolvesRelativePaths) {
  auto reader = Parse("name: iad\ncount: 42\nratio: 0.5\nflag: true\ncert: pki/a.crt\n"
                      "abs: /x/y\nlist: [a, b]\n");
  EXPECT_EQ(reader.RequiredId("name"), "iad");
  EXPECT_EQ(reader.RequiredUint("count", 0, 100), 42u);
  EXPECT_DOUBLE_EQ(reader.RequiredDouble("ratio", 0, 1), 0.5);
  EXPECT_TRUE(reader.OptionalBool("flag", false));
  EXPECT_EQ(reader.RequiredPath("cert"), "/etc/geodesic/pki/a.crt");
  EXPECT_EQ(reader.RequiredPath("abs"), "/x/y");
  EXPECT_THAT(reader.OptionalStringList("list"), ::testing::ElementsAre("a", "b"));
  EXPECT_EQ(reader.OptionalUint("missing", 7, 0, 10), 7u);
  reader.RejectUnknownKeys();
  EXPECT_TRUE(reader.status().ok()) << reader.status();
}

TEST(ConfigReaderTest, ErrorsNameFileAndKeyPath) {
  auto reader = Parse("tls: {ca: a}\nlinks:\n  - {id: x, rtt_us: fast}\n  - 5\n");
  auto tls = reader.RequiredMap("tls");
  tls.RequiredPath("ca");
  tls.RequiredPath("cert");
  auto links = reader.RequiredMapList("links");
  ASSERT_EQ(links.size(), 1u);
  links[0].RequiredId("id");
  links[0].OptionalUint("rtt_us", 0, 0, 100);
  reader.RequiredString("facility");
  const std::string message(reader.status().message());
  // A missing key is reported at the line of the map that lacks it.
  EXPECT_THAT(message, HasSubstr("/etc/geodesic/agent.yaml:1: tls.cert: required key is missing"));
  EXPECT_THAT(message,
              HasSubstr("agent.yaml:3: links[0].rtt_us: expected an unsigned integer, got \"fast\""));
  EXPECT_THAT(message, HasSubstr("agent.yaml:4: links[1]: expected a map, got \"5\""));
  EXPECT_THAT(message, HasSubstr("agent.yaml:1: facility: required key is missing"));
}

TEST(ConfigReaderTest, RejectsWrongTypesRangesIdsAndUnknownKeys) {
  auto reader = Parse("port: 70000\nname: Bad_Id\nratio: 2\nflag: yes\ntypo: 1\nmap: [1]\n");
  reader.RequiredUint("port", 0, 65535);
  reader.RequiredId("name");
  reader.RequiredDouble("ratio", 0, 1);
  reader.OptionalBool("flag", false);
  reader.OptionalMap("map");
  reader.RejectUnknownKeys();
  const std::string message(reader.status().message());
  EXPECT_THAT(message, HasSubstr("agent.yaml:1: port: 70000 is out of range [0, 65535]"));
  EXPECT_THAT(message, HasSubstr("agent.yaml:2: name: \"Bad_Id\" is not a valid id"));
  EXPECT_THAT(message, HasSubstr("agent.yaml:3: ratio: 2 is out of range"));
  EXPECT_THAT(message, HasSubstr("agent.yaml:4: flag: expected true or false"));
  EXPECT_THAT(message, HasSubstr("agent.yaml:6: map: expected a map, got a list"));
  EXPECT_THAT(message, HasSubstr("agent.yaml:5: typo: unknown key"));
}

TEST(ConfigReaderTest, RejectsBadYamlAndNonMapDocuments) {
  auto bad = ConfigReader::FromString("a: 1\nb: [1, 2\nc: 3\n", "x.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("x.yaml:3: not valid YAML"));
  auto list = ConfigReader::FromString("\n- 1\n- 2\n", "y.yaml");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(std::string(list.status().message()),
              HasSubstr("y.yaml:2: the top level must be a map"));
  auto missing = ConfigReader::OpenFile("/nonexistent/z.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/z.yaml"));
}

TEST(ConfigReaderTest, LinesPointAtTheValueInBlockFlowAndJson) {
  auto block = Parse("# comment\nlinks:\n  - id: a\n    rtt_us: 5\n  - id: b\n    rtt_us: slow\n"
                     "    colour: red\n  - id: c\n");
  auto links = block.RequiredMapList("links");
  ASSERT_EQ(links.size(), 3u);
  for (auto& link : links) {
    link.RequiredId("id");
    link.OptionalUint("rtt_us", 0, 0, 100);
    link.RejectUnknownKeys();
  }
  EXPECT_EQ(links[2].line(), 8);
  EXPECT_EQ(block.error_count(), 2u);
  links[2].RequiredUint("rtt_us", 0, 100);
  EXPECT_EQ(block.error_count(), 3u);
  const std::string message(block.status().message());
  EXPECT_THAT(message, HasSubstr("agent.yaml:6: links[1].rtt_us: expected an unsigned integer"));
  EXPECT_THAT(message, HasSubstr("agent.yaml:7: links[1].colour: unknown key"));
  EXPECT_THAT(message, HasSubstr("agent.yaml:8: links[2].rtt_us: required key is missing"));

  auto json = ConfigReader::FromString(
      "{\n  \"name\": \"iad\",\n  \"links\": [\n    {\"id\": \"a\", \"rtt_us\": 5},\n"
      "    {\"id\": \"b\", \"rtt_us\": -1}\n  ]\n}\n",
      "agent.json");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->RequiredId("name"), "iad");
  auto json_links = json->RequiredMapList("links");
  ASSERT_EQ(json_links.size(), 2u);
  EXPECT_EQ(json_links[0].OptionalUint("rtt_us", 0, 0, 100), 5u);
  json_links[1].OptionalUint("rtt_us", 0, 0, 100);
  EXPECT_THAT(std::string(json->status().message()),
              HasSubstr("agent.json:5: links[1].rtt_us: expected an unsigned integer, got \"-1\""));
}

}  // namespace
}  // namespace geodesic::config
