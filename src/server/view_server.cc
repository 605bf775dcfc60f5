#include "server/view_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cctype>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "report/html_writer.h"
#include "util/compressed_file.h"
#include "util/error.h"

namespace sextant {
namespace {

// Requests are small: a URL and headers. Anything with a body is refused.
constexpr size_t kMaxPayload = 1024;
constexpr size_t kMaxHeaders = 100;

constexpr const char* kIndexStyle = R"CSS(
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}p.sub{color:#667;margin:0 0 18px}
table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0001}
td,th{padding:6px 14px;border-bottom:1px solid #e6e8ec;text-align:left}th{background:#f0f2f5}
a{color:#2456a6;text-decoration:none}a:hover{text-decoration:underline}
.kind{color:#555}.note{color:#8a5a00}.failure{color:#b00020;font:13px system-ui,sans-serif;margin-top:2px}
tr.failed a{color:#888}.path{font-family:ui-monospace,monospace;font-size:12px;color:#666}
)CSS";

constexpr const char* kIndexLink =
    "<nav style=\"font:13px system-ui,sans-serif;margin:0 0 8px\"><a href=\"/\" "
    "style=\"color:#2456a6;text-decoration:none\">&larr; all views</a></nav>";

std::string Failure(const View& v) { return v.status ? v.status->failure() : ""; }

// The views as known now: one that was found not to build says why on its row (its page says
// the same), so a long list shows at a glance which of its files cannot be shown.
std::string IndexPage(const std::vector<View>& views, const std::vector<std::string>& notes) {
  std::string rows;
  size_t failed = 0;
  for (size_t i = 0; i < views.size(); ++i) {
    const View& v = views[i];
    const std::string failure = Failure(v);
    if (!failure.empty()) ++failed;
    rows += fmt::format(
        "<tr{4}><td><a href=\"/view/{0}\">{1}</a></td><td class=\"kind\">{2}</td>"
        "<td class=\"path\">{3}{5}</td><td><a href=\"/api/{0}.json\">json</a> · "
        "<a href=\"/export/{0}.html\">export</a></td></tr>\n",
        i, EscapeHtml(v.name), EscapeHtml(v.kind), EscapeHtml(v.path),
        failure.empty() ? "" : " class=\"failed\"",
        failure.empty()
            ? ""
            : "<div class=\"failure\">cannot be shown: " + EscapeHtml(failure) + "</div>");
  }
  std::string note_list;
  for (const std::string& n : notes) note_list += "<li class=\"note\">" + EscapeHtml(n) + "</li>";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sextant</title>"
      "<style>{}</style></head><body><h1>Sextant</h1><p class=\"sub\">{} view{} of the files "
      "named on the command line{}</p><table><tr><th>view</th><th>kind</th><th>file</th>"
      "<th>data</th></tr>\n{}</table>{}</body></html>\n",
      kIndexStyle, views.size(), views.size() == 1 ? "" : "s",
      failed == 0 ? "" : fmt::format("; {} cannot be shown (marked below)", failed), rows,
      note_list.empty() ? "" : "<ul>" + note_list + "</ul>");
}

// Pages (a few MB of inline data) are gzipped here, at a fast level, and handed to the server
// with their length: httplib compresses a plain body itself, picking Brotli whenever the
// browser offers it, at a quality that took 1.5-2 s per request for a pipeline page.
void SendPage(const httplib::Request& req, httplib::Response& res, std::string body,
              const char* content_type) {
  auto bytes = std::make_shared<std::string>(std::move(body));
  if (req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos) {
    *bytes = GzipBytes(*bytes, 1);
    res.set_header("Content-Encoding", "gzip");
  }
  res.set_header("Vary", "Accept-Encoding");
  res.set_content_provider(bytes->size(), content_type,
                           [bytes](size_t offset, size_t length, httplib::DataSink& sink) {
                             sink.write(bytes->data() + offset, length);
                             return true;
                           });
}

std::string ErrorPage(int status, const std::string& message) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title>"
      "<style>{1}</style></head><body><h1>{0}</h1><p>{2}</p><p><a href=\"/\">index</a></p>"
      "</body></html>\n",
      status, kIndexStyle, EscapeHtml(message));
}

void Refuse(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(ErrorPage(status, message), "text/html; charset=utf-8");
}

// "localhost:8988", "127.0.0.1", "[::1]:8988" -> the host part.
std::string HostOfHeader(const std::string& header) {
  if (!header.empty() && header[0] == '[') {
    const auto close = header.find(']');
    return close == std::string::npos ? header : header.substr(1, close - 1);
  }
  const auto colon = header.rfind(':');
  return colon == std::string::npos ? header : header.substr(0, colon);
}

}  // namespace

ViewServer::ViewServer(std::vector<View> views, std::vector<std::string> notes)
    : views_(std::move(views)),
      notes_(std::move(notes)),
      server_(std::make_unique<httplib::Server>()) {
  SetUpRoutes();
}

ViewServer::~ViewServer() { Stop(); }

bool ViewServer::IsLoopback(const std::string& host) {
  // Host names are case-insensitive (RFC 9110 4.2.3). An address must parse as one, whole:
  // "127.evil.com" or "127.0.0.1.nip.io" are names that resolve anywhere.
  std::string lower;
  for (char ch : host) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, lower.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, lower.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

void ViewServer::SetUpRoutes() {
  httplib::Server& s = *server_;
  s.set_payload_max_length(kMaxPayload);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second server binds
  // the same port and silently takes half of the requests.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // A connection that sends nothing holds a worker until it times out: short timeouts and more
  // workers than httplib's default keep a few idle (or tunnelled) connections from stalling
  // the page a user asks for.
  s.set_read_timeout(2, 0);
  s.set_keep_alive_timeout(2);
  s.new_task_queue = [] { return new httplib::ThreadPool(32); };
  s.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                         {"Referrer-Policy", "no-referrer"},
                         {"Cache-Control", "no-store"},
                         // Pages are self-contained: their inline script and style, nothing else.
                         {"Content-Security-Policy",
                          "default-src 'none'; script-src 'unsafe-inline'; style-src "
                          "'unsafe-inline'; img-src data:; connect-src 'self'"}});
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method != "GET" && req.method != "HEAD") {
      Refuse(res, 405, "only GET and HEAD are served");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.headers.size() > kMaxHeaders) {
      Refuse(res, 431, "too many request headers");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (IsLoopback(host_) && !IsLoopback(HostOfHeader(req.get_header_value("Host")))) {
      Refuse(res, 403, "this server answers loopback host names only");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.path.find("..") != std::string::npos || req.path.find('\\') != std::string::npos) {
      Refuse(res, 403, "paths are not served");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // A view number from a route match, or -1.
  auto view_of = [this](const httplib::Request& req) -> long {
    const std::string digits = req.matches[1];
    if (digits.empty() || digits.size() > 6) return -1;
    const long n = std::stol(digits);
    return n < static_cast<long>(views_.size()) ? n : -1;
  };
  // Builds (or reuses) a view's content; a file Sextant cannot read is a 422 with the reason.
  auto content = [this](long n, httplib::Response& res, std::shared_ptr<const ViewContent>* out) {
    try {
      *out = views_[static_cast<size_t>(n)].build();
      return true;
    } catch (const UserError& e) {
      Refuse(res, 422, e.what());
    } catch (const std::exception& e) {
      Refuse(res, 500, std::string("internal error: ") + e.what());
    }
    return false;
  };
  s.Get("/", [this, content](const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<const ViewContent> c;
    if (views_.size() == 1 && notes_.empty()) {
      if (content(0, res, &c)) SendPage(req, res, c->html, "text/html; charset=utf-8");
      return;
    }
    SendPage(req, res, IndexPage(views_, notes_), "text/html; charset=utf-8");
  });
  s.Get("/api/index.json", [this](const httplib::Request&, httplib::Response& res) {
    nlohmann::json j = nlohmann::json::array();
    for (size_t i = 0; i < views_.size(); ++i) {
      j.push_back({{"id", i},
                   {"name", views_[i].name},
                   {"kind", views_[i].kind},
                   {"path", views_[i].path}});
      if (const std::string failure = Failure(views_[i]); !failure.empty()) {
        j.back()["failure"] = failure;
      }
    }
    res.set_content(nlohmann::json{{"views", j}, {"notes", notes_}}.dump(), "application/json");
  });
  s.Get(R"(/view/(\d+))",
        [this, view_of, content](const httplib::Request& req, httplib::Response& res) {
          const long n = view_of(req);
          std::shared_ptr<const ViewContent> c;
          if (n < 0) return Refuse(res, 404, "no such view");
          if (!content(n, res, &c)) return;
          // Served pages lead back to the index; the export stays exactly the file.
          std::string html = c->html;
          if (views_.size() > 1) {
            const size_t body = html.find("<body>");
            if (body != std::string::npos) html.insert(body + 6, kIndexLink);
          }
          SendPage(req, res, std::move(html), "text/html; charset=utf-8");
        });
  s.Get(R"(/api/(\d+)\.json)",
        [view_of, content](const httplib::Request& req, httplib::Response& res) {
          const long n = view_of(req);
          std::shared_ptr<const ViewContent> c;
          if (n < 0) return Refuse(res, 404, "no such view");
          if (content(n, res, &c)) SendPage(req, res, c->json, "application/json");
        });
  s.Get(R"(/export/(\d+)\.html)", [this, view_of, content](const httplib::Request& req,
                                                           httplib::Response& res) {
    const long n = view_of(req);
    std::shared_ptr<const ViewContent> c;
    if (n < 0) return Refuse(res, 404, "no such view");
    if (!content(n, res, &c)) return;
    std::string name;
    for (char ch : views_[static_cast<size_t>(n)].name)
      name += std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_'
                  ? ch
                  : '_';
    res.set_header("Content-Disposition", fmt::format("attachment; filename=\"{}.html\"", name));
    SendPage(req, res, c->html, "text/html; charset=utf-8");
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) Refuse(res, res.status, res.status == 404 ? "not found" : "refused");
  });
}

int ViewServer::Bind(const std::string& host, int port) {
  host_ = host;
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else {
    port_ = server_->bind_to_port(host, port) ? port : -1;
  }
  if (port_ < 0) {
    ThrowUserError(fmt::format(
        "cannot listen on {}:{} (in use, or not an address of this machine); try --port", host,
        port));
  }
  return port_;
}

void ViewServer::Run() { server_->listen_after_bind(); }

void ViewServer::Stop() {
  if (server_->is_running()) server_->stop();
}

void ViewServer::WarmUp() {
  std::thread([views = views_] {
    // The cheap checks first (Primus's examples/, 384 views: 3 s), so the index marks the views
    // that cannot be shown long before every page is built.
    auto record = [](const View& v, const std::function<void()>& step) {
      try {
        step();
      } catch (const UserError& e) {
        if (v.status) v.status->Fail(e.what());  // the index marks it; its page says the same
      } catch (...) {
        // An internal error: the page says it when it is asked for.
      }
    };
    for (const View& v : views) {
      if (v.check) record(v, v.check);
    }
    for (const View& v : views) {
      if (v.status && !v.status->failure().empty()) continue;  // its check said why
      record(v, [&v] { v.build(); });
    }
  }).detach();
}

}  // namespace sextant
