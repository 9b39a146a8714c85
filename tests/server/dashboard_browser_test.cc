// The live dashboard (/) in a real headless browser (Debian's chromium):
// the page loads from the server alone, a client acquires a lock, and the
// holder, its owner and its fencing token appear on the page. A screenshot
// is left in the build directory (dashboard-screenshot.png) for a human look.
// With a users file the page works with a bearer token given as /?token=
// (kept by the page and sent as a header) and with Basic credentials.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/server/security_fixture.h"
#include "testkit/server_process.h"
#include "testkit/http_client.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

const char* chromium_path() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return nullptr;
}

// Runs headless chromium on `url` with `mode` ("--dump-dom" or
// "--screenshot=<file>"); returns its stdout ("" on failure).
std::string run_chromium(const TempDir& dir, const std::string& url, const std::string& mode) {
  const std::string out = dir.file("chromium.out");
  SpawnOptions o;
  o.stdout_path = out;
  o.stderr_path = dir.file("chromium.err");
  auto p = Subprocess::spawn({chromium_path(), "--headless", "--no-sandbox", "--disable-gpu",
                              "--disable-background-networking", "--disable-component-update", "--disable-sync",
                              "--no-first-run", "--disable-default-apps", "--user-data-dir=" + dir.file("profile"),
                              "--window-size=1400,1000", "--virtual-time-budget=4000", mode, url},
                             o);
  if (!p) return "";
  if (!p->wait(std::chrono::seconds(90))) return "";  // the destructor kills a hung browser
  std::stringstream s;
  s << std::ifstream(out).rdbuf();
  return s.str();
}

TEST(DashboardBrowser, HolderAndTokenAppearOnThePage) {
  ASSERT_NE(chromium_path(), nullptr) << "chromium is a test dependency (scripts/install-deps.sh)";
  TempDir dir("dashboard-browser");
  ServerProcess server;
  const std::uint16_t http_port = free_port();
  ASSERT_TRUE(server.start(dir.file("data"), {"--http-listen", loopback(http_port)}));
  ASSERT_TRUE(wait_for_port(http_port, std::chrono::seconds(10)));
  const std::string url = "http://" + loopback(http_port) + "/";

  // The page loads (no lock yet) and renders the server's role.
  std::string dom = run_chromium(dir, url, "--dump-dom");
  ASSERT_NE(dom.find("<title>leasehold dashboard</title>"), std::string::npos) << dom.substr(0, 500);

  RespClient c = server.client();
  const auto session = c.call({"SESSION.OPEN", "600000", "OWNER", "browser-test"}).integer;
  ASSERT_GT(session, 0);
  const auto token = c.call({"LOCK.ACQUIRE", "dash/report", std::to_string(session)}).integer;
  ASSERT_GT(token, 0);

  const std::string holder = "session " + std::to_string(session) + " · browser-test · token " + std::to_string(token);
  ASSERT_TRUE(eventually([&] {
    dom = run_chromium(dir, url, "--dump-dom");
    return dom.find("data-lock=\"dash/report\"") != std::string::npos && dom.find(holder) != std::string::npos &&
           dom.find(">primary<") != std::string::npos;
  }, std::chrono::seconds(200))) << "the holder never appeared; last DOM:\n" << dom;
  // The recent-events table shows the grant too, with its time and lock
  // (the record's time_ms and lock fields, as /api/history names them).
  EXPECT_NE(dom.find(">grant<"), std::string::npos);
  EXPECT_EQ(dom.find("Invalid Date"), std::string::npos) << dom;
  EXPECT_EQ(dom.find(">undefined<"), std::string::npos) << dom;

  const std::string shot = std::string(LEASEHOLD_BINARY_DIR) + "/dashboard-screenshot.png";
  std::filesystem::remove(shot);
  run_chromium(dir, url, "--screenshot=" + shot);
  ASSERT_TRUE(std::filesystem::exists(shot));
  EXPECT_GT(std::filesystem::file_size(shot), 10'000u);
}

TEST(DashboardBrowser, WorksWithABearerTokenOrBasicCredentials) {
  ASSERT_NE(chromium_path(), nullptr) << "chromium is a test dependency (scripts/install-deps.sh)";
  TempDir dir("dashboard-browser-auth");
  const std::string token = "dash-token-51c0";
  write_text(dir.file("users.acl"), standard_users() + "user viewer on #" + sha256_hex("viewpw") + " token#" +
                                        sha256_hex(token) + " +@monitor\n");
  ServerProcess server;
  const std::uint16_t http_port = free_port();
  ASSERT_TRUE(server.start(dir.file("data"), {"--users-file", dir.file("users.acl"), "--http-listen",
                                              loopback(http_port), "--long-hold-ms", "300000"}));
  ASSERT_TRUE(wait_for_port(http_port, std::chrono::seconds(10)));
  RespClient c = server.client();
  ASSERT_EQ(c.call({"AUTH", "admin", "adminpw"}), resp::Value::simple("OK"));
  const auto session = c.call({"SESSION.OPEN", "600000", "OWNER", "token-test"}).integer;
  ASSERT_GT(session, 0);
  const auto lock_token = c.call({"LOCK.ACQUIRE", "locks/dash", std::to_string(session)}).integer;
  ASSERT_GT(lock_token, 0);
  const std::string holder =
      "session " + std::to_string(session) + " · token-test · token " + std::to_string(lock_token);

  // Without credentials: no data reaches the page.
  std::string dom = run_chromium(dir, "http://" + loopback(http_port) + "/", "--dump-dom");
  EXPECT_EQ(dom.find(holder), std::string::npos) << dom.substr(0, 2000);

  for (const std::string& url : {"http://" + loopback(http_port) + "/?token=" + token,
                                 "http://viewer:viewpw@" + loopback(http_port) + "/"}) {
    ASSERT_TRUE(eventually([&] {
      dom = run_chromium(dir, url, "--dump-dom");
      return dom.find("data-lock=\"locks/dash\"") != std::string::npos && dom.find(holder) != std::string::npos &&
             dom.find(">grant<") != std::string::npos;
    }, std::chrono::seconds(200))) << url << ": the holder never appeared; last DOM:\n" << dom;
    EXPECT_NE(dom.find("long-held: held over 5.0 min"), std::string::npos) << "the threshold is shown";
    EXPECT_EQ(dom.find(" AM<"), std::string::npos) << "24-hour clock";
    EXPECT_EQ(dom.find(" PM<"), std::string::npos) << "24-hour clock";
    EXPECT_NE(dom.find("<span id=\"error\"></span>"), std::string::npos) << "no error shown";
  }
}

}  // namespace
}  // namespace leasehold::testing
