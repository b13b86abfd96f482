#include "listen_diagnosis.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace regiontrace::region_stats {

std::string listen_error_text(const ListenAddress& address, int error) {
  std::string host = address.host;
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const std::string port = std::to_string(address.port);
  if (error == EADDRINUSE) return "port " + port + " is in use";
  if (error == EADDRNOTAVAIL) return "`" + host + "` is not an address of this host";
  if (error == EACCES) return "port " + port + " needs privileges (ports below 1024)";
  if (error == EAFNOSUPPORT)
    return "this host has no " + std::string(host.find(':') != std::string::npos ? "IPv6" : "IPv4");
  return std::strerror(error);
}

int free_port_on(const ListenAddress& address) {
  std::string host = address.host;
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "0", &hints, &found) != 0) return 0;
  int port = 0;
  for (addrinfo* a = found; a != nullptr && port == 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
      port = bound.ss_family == AF_INET6
                 ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                 : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return port;
}

}  // namespace regiontrace::region_stats
