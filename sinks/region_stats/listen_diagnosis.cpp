#include "listen_diagnosis.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace regiontrace::region_stats {

std::string diagnose_listen_failure(const ListenAddress& address) {
  std::string host = address.host;
  const bool ipv6 = host.size() >= 2 && host.front() == '[';
  if (ipv6) host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return "`" + host + "` does not resolve (" + ::gai_strerror(rc) + ")";
  }
  int error = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    const bool bound = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    error = bound ? 0 : errno;
    ::close(fd);
    if (bound) break;
  }
  ::freeaddrinfo(found);
  if (error == EADDRINUSE) return "port " + port + " is in use";
  if (error == EADDRNOTAVAIL) return "`" + host + "` is not an address of this host";
  if (error == EACCES) return "port " + port + " needs privileges (ports below 1024)";
  if (error != 0) return std::strerror(error);
  if (ipv6) {
    return "the address is free, but this build's HTTP server (civetweb) cannot listen on "
           "IPv6 addresses; use an IPv4 one, e.g. 127.0.0.1:" +
           port;
  }
  return "the address is free now: another process may have taken it meanwhile";
}

}  // namespace regiontrace::region_stats
