#include "server/view_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/error.h"

namespace sextant {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Sends `request` verbatim to 127.0.0.1:port and returns the whole response.
std::string RawRequest(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  timeval timeout{5, 0};  // a server that never answers fails the test instead of hanging it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string response;
  char buf[4096];
  ssize_t n;
  // Until the server closes, or the whole response (headers and Content-Length bytes) is in:
  // a server that refuses a request before reading it may keep the connection open.
  while ((n = recv(fd, buf, sizeof buf, 0)) > 0) {
    response.append(buf, static_cast<size_t>(n));
    const size_t end = response.find("\r\n\r\n");
    const size_t length = response.find("Content-Length: ");
    if (end != std::string::npos && length != std::string::npos && length < end &&
        response.size() >= end + 4 + std::stoul(response.substr(length + 16))) {
      break;
    }
  }
  close(fd);
  return response;
}

std::string Get(int port, const std::string& target, const std::string& host = "127.0.0.1") {
  return RawRequest(
      port, "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
}

int StatusOf(const std::string& response) {
  // "HTTP/1.1 200 OK"
  return response.size() > 12 ? std::atoi(response.c_str() + 9) : 0;
}

class ViewServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<View> views;
    views.emplace_back("first", "pipeline dump", "/x/first", [] {
      return std::make_shared<const ViewContent>(
          ViewContent{"<html>page one SECRET-FREE</html>", R"({"a":1})"});
    });
    views.emplace_back("broken", "trace", "/x/broken", []() -> std::shared_ptr<const ViewContent> {
      ThrowUserError("/x/broken at byte 3: expected a JSON value");
    });
    server_ = std::make_unique<ViewServer>(std::move(views), std::vector<std::string>{"a note"});
    port_ = server_->Bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->Run(); });
    // Wait until it answers.
    for (int i = 0; i < 200 && StatusOf(Get(port_, "/")) != 200; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }
  std::unique_ptr<ViewServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(ViewServerTest, ServesTheIndexViewsDataAndExports) {
  const std::string index = Get(port_, "/");
  EXPECT_EQ(StatusOf(index), 200);
  EXPECT_THAT(index, HasSubstr("href=\"/view/0\""));
  EXPECT_THAT(index, HasSubstr("a note"));
  EXPECT_THAT(index, HasSubstr("Content-Security-Policy: default-src 'none'"));
  EXPECT_THAT(Get(port_, "/view/0"), HasSubstr("page one"));
  EXPECT_THAT(Get(port_, "/api/0.json"), HasSubstr("{\"a\":1}"));
  const std::string exported = Get(port_, "/export/0.html");
  EXPECT_THAT(exported, HasSubstr("Content-Disposition: attachment; filename=\"first.html\""));
  EXPECT_THAT(Get(port_, "/api/index.json"), HasSubstr("\"name\":\"broken\""));
}

TEST_F(ViewServerTest, AFileThatCannotBeReadIsA422WithItsReason) {
  const std::string r = Get(port_, "/view/1");
  EXPECT_EQ(StatusOf(r), 422);
  EXPECT_THAT(r, HasSubstr("/x/broken at byte 3: expected a JSON value"));
}

// No request names a file: traversal in any spelling, absolute paths and views that do not
// exist are refused, and nothing of the machine's files comes back.
TEST_F(ViewServerTest, RefusesTraversalAbsolutePathsAndUnknownViews) {
  for (const std::string target :
       {"/../../../../etc/passwd", "/view/0/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
        "/view/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/..%2f..%2fetc%2fpasswd", "/etc/passwd",
        "//etc/passwd", "/view/2", "/view/-1", "/view/99999999999999999999", "/api/7.json",
        "/export/../0.html", "/view/0%00", "/%5c..%5c..%5cetc%5cpasswd", "/web/pp_view.js",
        "http://127.0.0.1/etc/passwd"}) {
    const std::string r = Get(port_, target);
    const int status = StatusOf(r);
    EXPECT_TRUE(status == 403 || status == 404 || status == 400) << target << " -> " << status;
    EXPECT_THAT(r, Not(HasSubstr("root:"))) << target;
    EXPECT_THAT(r, Not(HasSubstr("page one"))) << target;
  }
}

TEST_F(ViewServerTest, RefusesOtherMethodsForeignHostsAndOversizedRequests) {
  EXPECT_EQ(StatusOf(RawRequest(port_,
                                "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                                "2\r\nConnection: close\r\n\r\nab")),
            405);
  EXPECT_EQ(StatusOf(RawRequest(port_,
                                "DELETE /view/0 HTTP/1.1\r\nHost: localhost\r\n"
                                "Connection: close\r\n\r\n")),
            405);
  // DNS rebinding: a page from elsewhere resolving its own name to 127.0.0.1.
  EXPECT_EQ(StatusOf(Get(port_, "/view/0", "attacker.example:8988")), 403);
  EXPECT_EQ(StatusOf(Get(port_, "/view/0", "localhost:8988")), 200);
  EXPECT_EQ(StatusOf(Get(port_, "/view/0", "[::1]:8988")), 200);
  // A 100 KB request line and 10 MB of headers are refused, and the server keeps serving.
  const std::string long_target = "/" + std::string(100000, 'a');
  const int long_status = StatusOf(Get(port_, long_target));
  EXPECT_TRUE(long_status == 0 || long_status == 414 || long_status == 400) << long_status;
  std::string headers = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 20000; ++i) {
    headers += "X-Pad-" + std::to_string(i) + ": " + std::string(500, 'x') + "\r\n";
  }
  EXPECT_EQ(StatusOf(RawRequest(port_, headers + "\r\n")), 431);
  EXPECT_EQ(StatusOf(RawRequest(port_, "garbage\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Get(port_, "/view/0")), 200);
}

// The index marks a view that cannot be shown with its reason, once a cheap check (or its
// build, in the background) found it, without its page being asked for.
TEST(ViewServerWarmUpTest, TheIndexMarksViewsThatCannotBeShown) {
  auto built_after_check = std::make_shared<std::atomic<bool>>(false);
  std::vector<View> views;
  views.emplace_back("fine", "experiment config", "/x/fine.yaml", [] {
    return std::make_shared<const ViewContent>(ViewContent{"<html>fine</html>", "{}"});
  });
  views.back().check = [] {};
  views.emplace_back("mamba", "experiment config", "/x/mamba.yaml",
                     [built_after_check]() -> std::shared_ptr<const ViewContent> {
                       *built_after_check = true;
                       ThrowUserError("built");
                     });
  views.back().check = [] { ThrowUserError("/x/mamba.yaml:5:13: unsupported architecture"); };
  views.emplace_back(
      "broken", "trace", "/x/broken.json",
      []() -> std::shared_ptr<const ViewContent> { ThrowUserError("/x/broken.json: not JSON"); });
  const std::shared_ptr<ViewStatus> mamba = views[1].status;
  const std::shared_ptr<ViewStatus> broken = views[2].status;
  ViewServer server(std::move(views), {});
  const int port = server.Bind("127.0.0.1", 0);
  std::thread thread([&server] { server.Run(); });
  server.WarmUp();
  for (int i = 0; i < 500 && (mamba->failure().empty() || broken->failure().empty()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string index = Get(port, "/");
  EXPECT_THAT(index, HasSubstr("2 cannot be shown"));
  EXPECT_THAT(index, HasSubstr("cannot be shown: /x/mamba.yaml:5:13: unsupported architecture"));
  EXPECT_THAT(index, HasSubstr("cannot be shown: /x/broken.json: not JSON"));
  const std::string json = Get(port, "/api/index.json");
  EXPECT_THAT(json, HasSubstr("\"failure\":\"/x/mamba.yaml:5:13: unsupported architecture\""));
  EXPECT_THAT(json, Not(HasSubstr("\"failure\":\"\"")));
  EXPECT_FALSE(*built_after_check);
  server.Stop();
  thread.join();
}

TEST(ViewServerBindTest, LoopbackNames) {
  EXPECT_TRUE(ViewServer::IsLoopback("127.0.0.1"));
  EXPECT_TRUE(ViewServer::IsLoopback("localhost"));
  EXPECT_TRUE(ViewServer::IsLoopback("::1"));
  EXPECT_FALSE(ViewServer::IsLoopback("0.0.0.0"));
  EXPECT_FALSE(ViewServer::IsLoopback("10.1.2.3"));
  // Names that merely start like a loopback address resolve anywhere (DNS rebinding).
  for (const char* name : {"127.evil.com", "127.0.0.1.nip.io", "127.0.0.1@evil.com",
                           "127.0.0.1 evil.com", "127.0.0.1.", "127.0.0.256", "127.1"}) {
    EXPECT_FALSE(ViewServer::IsLoopback(name)) << name;
  }
  EXPECT_TRUE(ViewServer::IsLoopback("LOCALHOST"));  // host names ignore case
  EXPECT_TRUE(ViewServer::IsLoopback("127.5.6.7"));
}

TEST(ViewServerBindTest, APortInUseIsAUserError) {
  ViewServer first({}, {});
  const int port = first.Bind("127.0.0.1", 0);
  ViewServer second({}, {});
  EXPECT_THROW(second.Bind("127.0.0.1", port), UserError);
}

}  // namespace
}  // namespace sextant
