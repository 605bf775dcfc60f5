// The HTTP server behind `sextant pp view` and `sextant serve` (cpp-httplib). It serves only
// what it was given: the index, each view's page, its JSON and its export, under fixed routes;
// no request names a file, so no request can reach one (`../`, absolute and encoded paths end
// in 404). It binds to loopback unless told otherwise, and then answers only requests whose
// Host header is loopback (a web page elsewhere cannot rebind a name to it and read the views).
//
//   GET /                    the index (or the only view's page when there is one view)
//   GET /view/N              view N's page           GET /api/index.json   the views
//   GET /api/N.json          view N's data            GET /export/N.html    view N as a file
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/views.h"

namespace httplib {
class Server;
}

namespace sextant {

class ViewServer {
 public:
  // `notes`: what the index says about inputs that are not shown.
  ViewServer(std::vector<View> views, std::vector<std::string> notes);
  ~ViewServer();
  ViewServer(const ViewServer&) = delete;
  ViewServer& operator=(const ViewServer&) = delete;

  // Binds to host:port (port 0: any free port) and returns the port. UserError if it cannot.
  int Bind(const std::string& host, int port);
  // Serves until Stop() (from another thread or a signal handler's thread).
  void Run();
  void Stop();
  // Builds every view in the background, one after another, so pages are ready when asked.
  void WarmUp();

  static bool IsLoopback(const std::string& host);

 private:
  void SetUpRoutes();

  std::vector<View> views_;
  std::vector<std::string> notes_;
  std::unique_ptr<httplib::Server> server_;
  std::string host_;
  int port_ = 0;
};

}  // namespace sextant
