// pathcomp's web console in a real browser (issue 20 §2): headless Chromium
// opens the console of a lab running the example backbone and must find every
// facility and link drawn, the route chosen in the URL, the MLU, the chains
// and the audit; after a link is cut it must show the link down, the new
// route and the health event. The page must write nothing to the browser's
// console (no error, no uncaught exception, no failed request).
//
// Chromium is Debian's `chromium` (deploy/install-deps.sh); without it the
// test fails. GEODESIC_CHROMIUM names another binary.
// GEODESIC_CONSOLE_SCREENSHOT=PATH also saves a 1280x800 screenshot of the
// console after the cut there (docs/console.png is made so).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/http_get.h"
#include "site_plan/chain_paths.h"
#include "site_plan/site_plan_reader.h"
#include "tests/support/lab_testing.h"

namespace geodesic {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using std::chrono::seconds;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The Chromium binary, or empty.
std::string FindChromium() {
  if (const char* named = std::getenv("GEODESIC_CHROMIUM"); named != nullptr && *named != '\0') return named;
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Headless Chromium with a profile of its own (removed with `work`).
class HeadlessChromium {
 public:
  HeadlessChromium(std::string binary, const testing::TempDir& work) : binary_(std::move(binary)), work_(work) {}

  struct Page {
    std::string dom;              // --dump-dom: the DOM once the page's virtual time ran out
    std::vector<std::string> console;  // what the page wrote to the browser's console
  };

  // Loads `url` and lets it run `budget_ms` of virtual time (the console
  // polls every second; fetches pause virtual time until they answer), then
  // dumps the DOM, or takes a screenshot into `screenshot` when given.
  absl::StatusOr<Page> Load(const std::string& url, int budget_ms, const std::string& screenshot = "") {
    const std::string run = std::to_string(++runs_);
    const std::string log = work_.Join("chromium-" + run + ".log");
    std::vector<std::string> args = {
        "timeout", "120", binary_, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--user-data-dir=" + work_.Join("chromium-profile"), "--enable-logging=stderr", "--v=0",
        absl::StrCat("--virtual-time-budget=", budget_ms)};
    if (screenshot.empty()) {
      args.push_back("--dump-dom");
    } else {
      args.push_back("--screenshot=" + screenshot);
      args.push_back("--window-size=1280,800");
      args.push_back("--hide-scrollbars");
    }
    args.push_back(url);
    std::vector<std::string> quoted;
    for (const auto& arg : args) quoted.push_back(ShellQuote(arg));
    // stdout is the DOM; the browser's log goes to a file. HOME too: Chromium
    // writes under it whatever --user-data-dir says.
    auto result = sim::RunCommand({"/bin/sh", "-c",
                                   absl::StrCat("HOME=", ShellQuote(work_.path()), " exec ",
                                                absl::StrJoin(quoted, " "), " 2>", ShellQuote(log))});
    if (!result.ok()) return result.status();
    if (result->exit_code != 0) {
      return absl::InternalError(absl::StrCat("chromium exited with ", result->exit_code, "; its log:\n", ReadFile(log)));
    }
    Page page;
    page.dom = result->output;
    for (const auto line : absl::StrSplit(ReadFile(log), '\n')) {
      if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
        page.console.emplace_back(line);
      }
    }
    return page;
  }

 private:
  const std::string binary_;
  const testing::TempDir& work_;
  int runs_ = 0;
};

// The value of `attribute` of the element whose start tag holds ` key="value"`.
std::string AttributeOf(const std::string& dom, const std::string& key, const std::string& value,
                        const std::string& attribute) {
  const size_t at = dom.find(absl::StrCat(" ", key, "=\"", value, "\""));
  if (at == std::string::npos) return "(no element with " + key + "=" + value + ")";
  const size_t start = dom.rfind('<', at);
  const std::string tag = dom.substr(start, dom.find('>', at) - start);
  std::smatch match;
  if (!std::regex_search(tag, match, std::regex(" " + attribute + "=\"([^\"]*)\""))) return "";
  return match[1];
}

// Every value of `attribute` in the DOM, in order.
std::vector<std::string> AttributeValues(const std::string& dom, const std::string& attribute) {
  std::vector<std::string> values;
  const std::regex pattern(" " + attribute + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), pattern); it != std::sregex_iterator(); ++it) {
    values.push_back((*it)[1]);
  }
  return values;
}

// GET `url` ("http://127.0.0.1:PORT") + `target`, within 5 s; status 0 and the
// error as the body when it fails.
sim::HttpAnswer Get(const std::string& url, const std::string& target) {
  auto answer = sim::HttpGet(url + target);
  return answer.ok() ? *answer : sim::HttpAnswer{.status = 0, .body = std::string(answer.status().message())};
}

// The primary path of the plan's route from `src` to the first prefix of `dst`.
std::vector<std::string> PlannedPath(const v1::Plan& plan, const std::string& src, const std::string& dst) {
  for (const auto& site : plan.sites()) {
    if (site.facility_id() != src) continue;
    if (const v1::Route* route = site_plan::FindRouteTo(site, dst)) {
      return site_plan::PathIds(site, route->path());
    }
  }
  return {};
}

// The link of the example backbone from `a` to `b`.
std::string LinkBetween(const topology::Topology& topology, const std::string& a, const std::string& b) {
  for (const auto& link : topology.links) {
    if (link.src_facility_id() == a && link.dst_facility_id() == b) return link.id();
  }
  return "";
}

class ConsoleBrowserTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure()) work_.keep();  // the daemons' and the browser's logs
  }
  testing::TempDir work_{"console-browser"};
};

TEST_F(ConsoleBrowserTest, MapFollowsTheBackboneThroughALinkCut) {
  const std::string chromium = FindChromium();
  ASSERT_FALSE(chromium.empty()) << "Chromium is not installed: the console's browser test needs Debian's "
                                    "`chromium` package (deploy/install-deps.sh installs it), or "
                                    "GEODESIC_CHROMIUM=/path/to/chromium";
  auto created = sim::LocalLab::Create(testing::LabOptionsFor(work_.Join("lab")));
  ASSERT_TRUE(created.ok()) << created.status();
  sim::LocalLab& lab = **created;
  sim::LabClient client(lab);
  ASSERT_TRUE(lab.StartAll().ok());
  ASSERT_TRUE(client.WaitLinksIn(v1::OPER_STATE_UP, seconds(30)).ok());
  auto seen = client.Plan();
  ASSERT_TRUE(seen.ok()) << seen.status();
  auto converged = client.WaitConverged({.timeout = seconds(30), .min_model_revision = seen->model_revision()});
  ASSERT_TRUE(converged.ok()) << converged.status();
  auto admin = lab.AdminUrl("pathcomp");
  ASSERT_TRUE(admin.ok()) << admin.status();

  // The JSON API refuses what it cannot answer, naming it.
  const sim::HttpAnswer unknown = Get(*admin, "/api/v1/route?src=iad&dst=nowhere");
  EXPECT_EQ(unknown.status, 400u);
  EXPECT_THAT(unknown.body, HasSubstr("unknown facility \\\"nowhere\\\" (dst)"));
  EXPECT_EQ(Get(*admin, "/api/v1/events?after=x").status, 400u);
  EXPECT_THAT(Get(*admin, "/console.js").body, HasSubstr("api/v1/topology"));

  const std::string src = "iad", dst = "dfw";
  const std::string url = absl::StrCat(*admin, "/?src=", src, "&dst=", dst);
  HeadlessChromium browser(chromium, work_);

  auto before = browser.Load(url, 3000);
  ASSERT_TRUE(before.ok()) << before.status();
  work_.Write("before-cut.html", before->dom);  // kept with the logs when the test fails
  EXPECT_THAT(before->console, ::testing::IsEmpty());
  EXPECT_EQ(AttributeOf(before->dom, "id", "connection", "data-state"), "ok");
  std::vector<std::string> facility_ids;
  for (const auto& facility : lab.topology().facilities) facility_ids.push_back(facility.id());
  EXPECT_THAT(AttributeValues(before->dom, "data-facility"), ::testing::UnorderedElementsAreArray(facility_ids));
  std::map<std::string, std::string> expected_states, drawn_states;
  for (const auto& link : lab.topology().links) {
    expected_states[link.id()] = "up";
    drawn_states[link.id()] = AttributeOf(before->dom, "data-link", link.id(), "data-state");
  }
  EXPECT_EQ(drawn_states, expected_states);
  const std::vector<std::string> path = PlannedPath(converged->plan(), src, dst);
  ASSERT_GE(path.size(), 2u) << "no route " << src << ">" << dst << " in the plan";
  EXPECT_THAT(AttributeValues(before->dom, "data-path"), ::testing::Contains(absl::StrJoin(path, ",")));
  const std::string cut = LinkBetween(lab.topology(), path[0], path[1]);
  ASSERT_FALSE(cut.empty());
  EXPECT_EQ(AttributeOf(before->dom, "data-link", cut, "data-on-route"), "true");
  EXPECT_THAT(before->dom, HasSubstr(" data-route-link=\"" + cut + "\""));
  // The MLU, the agent chain with its slowest hop, the audit.
  EXPECT_THAT(before->dom, ::testing::ContainsRegex("id=\"plan-mlu\">[0-9]+ %<"));
  EXPECT_THAT(before->dom, HasSubstr("data-chain=\"rag-nyc\""));
  EXPECT_THAT(before->dom, HasSubstr("class=\"hop slowest\""));
  // Each hop's paths, resolved from the chain's path table.
  for (const v1::ChainPlan& chain : converged->plan().chains()) {
    if (chain.workload_id() != "rag-nyc") continue;
    for (const v1::ChainHop& hop : chain.primary().hops()) {
      const std::vector<std::string> there = site_plan::ChainPathIds(chain, hop.path_there());
      const std::string shown = there.empty() ? "local" : absl::StrJoin(there, "(>|&gt;)");
      EXPECT_THAT(before->dom, ::testing::ContainsRegex("title=\"there " + shown + ", back "));
    }
  }
  EXPECT_THAT(before->dom, ::testing::ContainsRegex("<ul id=\"audit\"><li"));

  // Cut the first link of the route; wait until pathcomp's plan avoids it.
  ASSERT_TRUE(lab.SetLinkState(cut, "down").ok());
  auto revision = client.WaitLinkStates({cut}, v1::OPER_STATE_DOWN, seconds(30));
  ASSERT_TRUE(revision.ok()) << revision.status();
  auto rerouted = client.WaitConverged({.timeout = seconds(30), .min_model_revision = *revision});
  ASSERT_TRUE(rerouted.ok()) << rerouted.status();
  const std::vector<std::string> new_path = PlannedPath(rerouted->plan(), src, dst);
  ASSERT_GE(new_path.size(), 2u);
  ASSERT_NE(new_path, path) << "the plan still routes " << src << ">" << dst << " over " << cut;

  auto after = browser.Load(url, 3000);
  ASSERT_TRUE(after.ok()) << after.status();
  work_.Write("after-cut.html", after->dom);
  EXPECT_THAT(after->console, ::testing::IsEmpty());
  EXPECT_EQ(AttributeOf(after->dom, "id", "connection", "data-state"), "ok");
  EXPECT_EQ(AttributeOf(after->dom, "data-link", cut, "data-state"), "down");
  EXPECT_EQ(AttributeOf(after->dom, "data-link", cut, "data-on-route"), "");
  EXPECT_THAT(after->dom, Not(HasSubstr(" data-route-link=\"" + cut + "\"")));
  // One entry per way the prefixes are forwarded (IPv4 and IPv6 may split differently): each on the new path.
  EXPECT_THAT(AttributeValues(after->dom, "data-path"),
              ::testing::AllOf(Not(::testing::IsEmpty()), ::testing::Each(absl::StrJoin(new_path, ","))));
  const std::vector<std::string> generation = AttributeValues(after->dom, "data-plan-generation");
  ASSERT_EQ(generation.size(), 1u);
  EXPECT_GE(std::stoull(generation[0]), rerouted->plan().generation());
  // The event list shows the cut.
  EXPECT_THAT(after->dom, ::testing::ContainsRegex("data-kind=\"health\">.*link " + cut + " up → down"));

  if (const char* screenshot = std::getenv("GEODESIC_CONSOLE_SCREENSHOT"); screenshot != nullptr && *screenshot) {
    auto shot = browser.Load(url, 3000, screenshot);
    EXPECT_TRUE(shot.ok()) << shot.status();
  }
}

}  // namespace
}  // namespace geodesic
