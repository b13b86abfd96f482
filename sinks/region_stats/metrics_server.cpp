#include "metrics_server.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "listen_diagnosis.hpp"

namespace regiontrace::region_stats {
namespace {

using Clock = std::chrono::steady_clock;

// More connections at once are answered 503 and closed: a flood of idle
// sockets cannot grow the server without bound.
constexpr std::size_t kMaxClients = 64;
// A request's line and headers; a scraper sends a few hundred bytes.
constexpr std::size_t kMaxRequestBytes = 16384;

struct Client {
  int fd = -1;
  std::string request;
  Clock::time_point deadline;
};

void send_all(int fd, std::string_view data, int timeout_ms) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return;  // a client that stopped reading
    } else {
      return;
    }
  }
}

std::string response(int status, std::string_view reason, std::string_view content_type,
                     const std::string& body, bool with_body, std::string_view extra = {}) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                    "\r\nContent-Type: " + std::string(content_type) +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n" + std::string(extra) + "\r\n";
  if (with_body) out += body;
  return out;
}

std::string plain(int status, std::string_view reason, const std::string& text,
                  std::string_view extra = {}) {
  return response(status, reason, "text/plain; charset=utf-8", text, true, extra);
}

}  // namespace

MetricsServer::MetricsServer(const ListenAddress& address, Render render, int request_timeout_ms)
    : render_(std::move(render)), request_timeout_ms_(request_timeout_ms) {
  std::string host = address.host;
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw std::invalid_argument("`" + host + "` does not resolve (" + ::gai_strerror(rc) + ")");
  }
  int error = 0;
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd =
        ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    // A restarted program takes its port back while old connections linger.
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      listen_fd_ = fd;
    } else {
      error = errno;
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) throw std::invalid_argument(listen_error_text(address, error));
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
    port_ = bound.ss_family == AF_INET6
                ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    const int e = errno;
    ::close(listen_fd_);
    throw std::invalid_argument(std::string("cannot start the server: eventfd: ") +
                                std::strerror(e));
  }
  thread_ = std::thread([this] { run(); });
}

MetricsServer::~MetricsServer() {
  const std::uint64_t one = 1;
  if (::write(wake_fd_, &one, sizeof(one)) < 0) {
    // A full eventfd counter is a pending wake-up already.
  }
  if (thread_.joinable()) thread_.join();
  ::close(wake_fd_);
  ::close(listen_fd_);
}

void MetricsServer::run() {
  std::vector<Client> clients;
  std::vector<pollfd> fds;
  auto drop = [&](std::size_t i) {
    ::close(clients[i].fd);
    clients[i] = std::move(clients.back());
    clients.pop_back();
  };
  auto answer = [&](const Client& c) {
    const std::string_view request(c.request);
    const std::string_view line = request.substr(0, request.find("\r\n"));
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    const std::string_view method = line.substr(0, sp1);
    std::string_view target =
        sp1 == std::string_view::npos ? std::string_view() : line.substr(sp1 + 1, sp2 - sp1 - 1);
    target = target.substr(0, target.find('?'));
    if (method != "GET" && method != "HEAD") {
      return plain(405, "Method Not Allowed", "GET /metrics\n", "Allow: GET, HEAD\r\n");
    }
    if (target != "/metrics") return plain(404, "Not Found", "metrics are at /metrics\n");
    std::string body;
    try {
      body = render_();
    } catch (const std::exception& e) {
      return plain(500, "Internal Server Error", std::string(e.what()) + "\n");
    }
    return response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, method == "GET");
  };
  for (;;) {
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    int timeout_ms = -1;
    const Clock::time_point now = Clock::now();
    for (const Client& c : clients) {
      fds.push_back({c.fd, POLLIN, 0});
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count();
      const int ms = left < 0 ? 0 : static_cast<int>(left) + 1;
      timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) break;
    // Clients first (their indices match fds[2..]); new ones after.
    for (std::size_t i = clients.size(); i-- > 0;) {
      if (fds[i + 2].revents == 0) continue;
      Client& c = clients[i];
      char buffer[4096];
      const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {
        drop(i);
        continue;
      }
      c.request.append(buffer, static_cast<std::size_t>(n));
      if (c.request.find("\r\n\r\n") != std::string::npos ||
          c.request.find("\n\n") != std::string::npos) {
        send_all(c.fd, answer(c), request_timeout_ms_);
        drop(i);
      } else if (c.request.size() > kMaxRequestBytes) {
        send_all(c.fd, plain(431, "Request Header Fields Too Large", "request too large\n"),
                 request_timeout_ms_);
        drop(i);
      }
    }
    const Clock::time_point after = Clock::now();
    for (std::size_t i = clients.size(); i-- > 0;) {
      if (clients[i].deadline <= after) {
        send_all(clients[i].fd, plain(408, "Request Timeout", "no request in time\n"), 0);
        drop(i);
      }
    }
    if (fds[1].revents != 0) {
      for (;;) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;  // EAGAIN: all taken; anything else: the next poll retries
        if (clients.size() >= kMaxClients) {
          send_all(fd, plain(503, "Service Unavailable", "too many connections\n"), 0);
          ::close(fd);
          continue;
        }
        clients.push_back({fd, {}, after + std::chrono::milliseconds(request_timeout_ms_)});
      }
    }
  }
  for (const Client& c : clients) ::close(c.fd);
}

}  // namespace regiontrace::region_stats
