#include "stats_test_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "test_support.hpp"

namespace regiontrace::region_stats::test {

Options stats_options(const std::string& dir, const std::map<std::string, std::string>& values) {
  Options o;
  o.read_environment = false;
  o.set("plugins.paths", regiontrace::test::builtin_plugin_dir());
  o.set("output_dir", dir);
  o.set("log_level", "warn");
  o.set("handle_signals", "false");
  o.set("sinks.region_stats.enabled", "true");
  o.set("sinks.region_stats.table", "off");
  for (const auto& [k, v] : values) o.set("sinks.region_stats." + k, v);
  return o;
}

json read_stats_json(const std::string& dir) {
  // The last session's, if the test ran several (output_path numbers them).
  std::string path = dir + "/region_stats_rank0_pid" + std::to_string(::getpid()) + ".json";
  for (const std::string& f : regiontrace::test::output_files(dir, "region_stats")) {
    if (f.size() > 5 && f.compare(f.size() - 5, 5, ".json") == 0) path = f;
  }
  return regiontrace::test::read_json(path);
}

const json* region(const json& regions, const std::string& path) {
  for (const json& r : regions) {
    if (r.at("path") == path) return &r;
  }
  return nullptr;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::optional<std::string> http_exchange(int port, const std::vector<std::string>& pieces) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (k > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::send(fd, pieces[k].data(), pieces[k].size(), 0);
  }
  std::string raw;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return raw;
}

std::optional<HttpResponse> http_get(int port, const std::string& target) {
  const std::optional<std::string> raw = http_exchange(
      port, {"GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"});
  if (!raw) return std::nullopt;
  HttpResponse r;
  if (raw->rfind("HTTP/", 0) != 0) return r;
  r.status = std::atoi(raw->c_str() + raw->find(' ') + 1);
  const auto body = raw->find("\r\n\r\n");
  if (body != std::string::npos) r.body = raw->substr(body + 4);
  return r;
}

std::vector<Sample> parse_exposition(const std::string& text) {
  std::vector<Sample> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    std::size_t i = line.find_first_of("{ ");
    s.name = line.substr(0, i);
    if (i != std::string::npos && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const std::size_t eq = line.find('=', i);
        const std::string key = line.substr(i, eq - i);
        std::size_t j = eq + 2;  // past ="
        std::string value;
        while (j < line.size() && line[j] != '"') {
          if (line[j] == '\\' && j + 1 < line.size()) ++j;
          value += line[j++];
        }
        s.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      ++i;  // past }
    }
    const std::string rest = line.substr(i);
    const std::string number = rest.substr(rest.find_first_not_of(' '));
    s.value = number.rfind("+Inf", 0) == 0 ? 1.0 / 0.0 : std::strtod(number.c_str(), nullptr);
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<double> sample_value(const std::vector<Sample>& samples, const std::string& name,
                                   const std::map<std::string, std::string>& labels) {
  for (const Sample& s : samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      if (it == s.labels.end() || it->second != v) all = false;
    }
    if (all) return s.value;
  }
  return std::nullopt;
}

}  // namespace regiontrace::region_stats::test
