// The Prometheus endpoint: GET /metrics over HTTP/1.1 on one thread of the
// sink's own.
//
// Why not civetweb (prometheus-cpp's Exposer): Debian's civetweb starts its
// threads with a fixed 100 KB stack, and glibc refuses to create a thread
// whose stack cannot hold the process's static thread-local storage. A
// program linked with libtorch (and its CUDA libraries) has more than that,
// so in every such program the endpoint failed after binding its port, with
// "possible problem binding to port". This server's thread has the default
// stack, answers one request per connection (no keep-alive), and multiplexes
// its clients with poll(): a client that connects and sends nothing is
// dropped after `request_timeout_ms` while scrapes go on being answered.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "region_stats_settings.hpp"

namespace regiontrace::region_stats {

class MetricsServer {
 public:
  using Render = std::function<std::string()>;  // the exposition text, on the server's thread

  // Binds and listens, then serves. Throws std::invalid_argument with a
  // sentence (starting lower-case) saying why the address cannot be served.
  MetricsServer(const ListenAddress& address, Render render, int request_timeout_ms = 2000);
  ~MetricsServer();  // stops serving; the port is free when it returns
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }  // the one bound (the system's choice for port 0)

 private:
  void run();

  Render render_;
  const int request_timeout_ms_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: the destructor's signal to stop
  int port_ = 0;
  std::thread thread_;
};

}  // namespace regiontrace::region_stats
