// The live metrics: the endpoint scraped over a real socket on 127.0.0.1,
// the node_exporter textfile, and the errors for addresses it cannot use.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "regiontrace/inspect.hpp"
#include "stats_test_support.hpp"
#include "test_support.hpp"

namespace regiontrace::region_stats::test {
namespace {

using regiontrace::test::CleanEnv;
using regiontrace::test::TempDir;

void sleep_ms(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

const std::string kDuration = "regiontrace_region_duration_seconds";

TEST(RegionStatsPrometheus, TheEndpointServesHistogramCountsOfTheRegionsRun) {
  CleanEnv env;
  TempDir dir;
  const int port = free_port();
  init(stats_options(dir.path(), {{"prometheus_listen", "127.0.0.1:" + std::to_string(port)},
                                  {"prometheus_buckets", "0.001,0.5,100"}}));
  for (int i = 0; i < 5; ++i) {
    RT_REGION("scraped");
    sleep_ms(2);
    RT_REGION("quick");
  }
  const std::optional<HttpResponse> r = http_get(port, "/metrics");
  ASSERT_TRUE(r.has_value()) << "nothing listens on 127.0.0.1:" << port;
  EXPECT_EQ(r->status, 200);
  const std::vector<Sample> samples = parse_exposition(r->body);
  const std::map<std::string, std::string> scraped = {
      {"region", "scraped"}, {"path", "scraped"}, {"rank", "0"}};
  EXPECT_EQ(sample_value(samples, kDuration + "_count", scraped), 5) << r->body;
  EXPECT_EQ(sample_value(samples, "regiontrace_region_calls_total", scraped), 5);
  // Each region slept 2 ms: none in the 1 ms bucket, all by 0.5 s (cumulative).
  auto bucket = [&](const std::string& le, const std::map<std::string, std::string>& l) {
    std::map<std::string, std::string> with = l;
    with["le"] = le;
    return sample_value(samples, kDuration + "_bucket", with);
  };
  EXPECT_EQ(bucket("0.001", scraped), 0) << r->body;
  EXPECT_EQ(bucket("0.5", scraped), 5);
  EXPECT_EQ(bucket("100", scraped), 5);
  EXPECT_EQ(bucket("+Inf", scraped), 5);
  const double sum = sample_value(samples, kDuration + "_sum", scraped).value_or(0);
  EXPECT_GE(sum, 5 * 0.002);
  EXPECT_LT(sum, 0.5 * 5);
  const std::map<std::string, std::string> quick = {
      {"region", "quick"}, {"path", "scraped/quick"}, {"rank", "0"}};
  EXPECT_EQ(sample_value(samples, kDuration + "_count", quick), 5);
  EXPECT_EQ(bucket("0.001", quick), 5);
  // Self time of the parent excludes the child.
  EXPECT_LE(sample_value(samples, "regiontrace_region_self_seconds_total", scraped).value_or(1),
            sum);

  // Live: more regions show in the next scrape.
  { RT_REGION("scraped"); }
  const std::optional<HttpResponse> again = http_get(port, "/metrics");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(sample_value(parse_exposition(again->body), kDuration + "_count", scraped), 6);
  shutdown();
  // The endpoint goes with the sink.
  EXPECT_FALSE(http_get(port, "/metrics").has_value());
  EXPECT_EQ(read_stats_json(dir.path()).at("prometheus").at("listen"),
            "127.0.0.1:" + std::to_string(port));
}

// Clients that connect and send nothing (or send slowly) must not take the
// endpoint offline: with 8 such sockets held open, scrapes are answered at
// once, and the idle ones are dropped after the request timeout.
TEST(RegionStatsPrometheus, IdleConnectionsDoNotStopScrapes) {
  CleanEnv env;
  TempDir dir;
  const int port = free_port();
  init(stats_options(dir.path(), {{"prometheus_listen", "127.0.0.1:" + std::to_string(port)}}));
  { RT_REGION("scraped"); }
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    if (i % 2 == 1) ::send(fd, "GET /metr", 9, 0);  // half a request line
    idle.push_back(fd);
  }
  sleep_ms(100);  // the server has taken them
  for (int scrape = 0; scrape < 3; ++scrape) {
    const auto start = std::chrono::steady_clock::now();
    const std::optional<HttpResponse> r = http_get(port, "/metrics");
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(r->body.find("regiontrace_region_calls_total"), std::string::npos);
    // A scrape queued behind the idle sockets would take their 2 s timeout.
    EXPECT_LT(ms, 1500) << "scrape " << scrape;
  }
  // The idle connections are ended by the server after its timeout (with
  // an error response or none): each reaches end-of-file within 5 s.
  for (int fd : idle) {
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buf[512];
    ssize_t n = 0;
    while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) {
    }
    EXPECT_EQ(n, 0) << "the server kept an idle connection open for 5 s";
    ::close(fd);
  }
  shutdown();
}

TEST(RegionStatsPrometheus, TheTextfileIsRewrittenWhileRunningAndAtShutdown) {
  CleanEnv env;
  TempDir dir;
  const std::string prom = dir.file("metrics/regiontrace.prom");
  std::filesystem::create_directories(dir.file("metrics"));
  init(stats_options(dir.path(), {{"prometheus_textfile", prom},
                                  {"prometheus_textfile_interval_s", "0.05"},
                                  {"prometheus_buckets", "0.001,1"}}));
  const std::map<std::string, std::string> labels = {
      {"region", "textfile"}, {"path", "textfile"}, {"rank", "0"}};
  // Written at start, before any region ended: the families with no samples.
  EXPECT_TRUE(std::filesystem::exists(prom));
  for (int i = 0; i < 3; ++i) {
    RT_REGION("textfile");
    sleep_ms(1.5);
  }
  // The writer thread rewrites it on its interval; wait for one rewrite.
  std::optional<double> seen;
  for (int i = 0; i < 400 && seen != 3.0; ++i) {
    sleep_ms(10);
    seen = sample_value(parse_exposition(regiontrace::test::read_file(prom)), kDuration + "_count",
                        labels);
  }
  EXPECT_EQ(seen, 3.0);
  { RT_REGION("textfile"); }
  shutdown();
  const std::string text = regiontrace::test::read_file(prom);
  const std::vector<Sample> samples = parse_exposition(text);
  EXPECT_EQ(sample_value(samples, kDuration + "_count", labels), 4) << text;
  std::map<std::string, std::string> le = labels;
  le["le"] = "0.001";
  EXPECT_EQ(sample_value(samples, kDuration + "_bucket", le), 1) << text;  // the empty region
  EXPECT_NE(text.find("# TYPE regiontrace_region_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(text.find("# TYPE regiontrace_region_calls_total counter"), std::string::npos);
  // Only the final file is left: the temporary files were renamed over it.
  EXPECT_EQ(regiontrace::test::list_files(dir.file("metrics")).size(), 1u);
}

TEST(RegionStatsPrometheus, AMalformedListenAddressStopsStartUpNamingKeyAndValue) {
  CleanEnv env;
  TempDir dir;
  try {
    init(stats_options(dir.path(), {{"prometheus_listen", "127.0.0.1:99999"}}));
    ADD_FAILURE() << "init accepted port 99999";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("prometheus_listen"), std::string::npos) << what;
    EXPECT_NE(what.find("127.0.0.1:99999"), std::string::npos) << what;
    EXPECT_NE(what.find("0-65535"), std::string::npos) << what;
  }
  shutdown();
  // `regiontrace check` refuses it the same way, before any run.
  inspect::LoadRequest request;
  request.environment = {{"REGIONTRACE_SINKS", "region_stats"},
                         {"REGIONTRACE_PLUGIN_PATH", regiontrace::test::builtin_plugin_dir()},
                         {"REGIONTRACE_OUTPUT_DIR", dir.path()},
                         {"REGIONTRACE_REGION_STATS_PROMETHEUS_LISTEN", "localhost"}};
  const inspect::LoadResult result = inspect::load_configuration(request);
  ASSERT_FALSE(result.ok());
  bool named = false;
  for (const std::string& e : result.errors) {
    if (e.find("prometheus_listen") != std::string::npos &&
        e.find("localhost") != std::string::npos)
      named = true;
  }
  EXPECT_TRUE(named) << result.errors.front();
}

// What the server answers besides a scrape: HEAD (headers alone), another
// path (404), another method (405, naming the allowed ones), a query
// string on /metrics (served), and a request line split over packets.
std::string raw_request(int port, const std::vector<std::string>& pieces) {
  return http_exchange(port, pieces).value_or(std::string());
}

TEST(RegionStatsPrometheus, TheServerAnswersWhatIsNotAScrapeAsHttpSays) {
  CleanEnv env;
  TempDir dir;
  const int port = free_port();
  init(stats_options(dir.path(), {{"prometheus_listen", "127.0.0.1:" + std::to_string(port)}}));
  { RT_REGION("scraped"); }
  const std::string head = raw_request(port, {"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"});
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Length: "), std::string::npos) << head;
  EXPECT_EQ(head.find("regiontrace_region_calls_total"), std::string::npos) << head;
  const std::string other = raw_request(port, {"GET / HTTP/1.1\r\n\r\n"});
  EXPECT_EQ(other.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << other;
  const std::string post = raw_request(port, {"POST /metrics HTTP/1.1\r\n\r\n"});
  EXPECT_EQ(post.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos) << post;
  const std::string split =
      raw_request(port, {"GET /metr", "ics?x=1 HTTP/1.1\r\nHo", "st: x\r\n", "\r\n"});
  EXPECT_EQ(split.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << split;
  EXPECT_NE(split.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << split;
  EXPECT_NE(split.find("region=\"scraped\""), std::string::npos) << split;
  shutdown();
}

TEST(RegionStatsPrometheus, AnAddressInUseStopsStartUpNamingKeyAndValue) {
  CleanEnv env;
  TempDir dir;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  try {
    init(stats_options(dir.path(), {{"prometheus_listen", address}}));
    ADD_FAILURE() << "init served on " << address << ", which is in use";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("prometheus_listen"), std::string::npos) << what;
    EXPECT_NE(what.find(address), std::string::npos) << what;
    EXPECT_NE(what.find("port " + std::to_string(ntohs(a.sin_port)) + " is in use"),
              std::string::npos)
        << what;
    // The suggestion is a port free now, never the one in use.
    const std::string give = "; give 127.0.0.1:";
    const std::size_t at = what.find(give);
    ASSERT_NE(at, std::string::npos) << what;
    const int suggested = std::atoi(what.c_str() + at + give.size());
    EXPECT_GT(suggested, 0) << what;
    EXPECT_NE(suggested, ntohs(a.sin_port)) << what;
    EXPECT_NE(what.find(" (free now), or 127.0.0.1:0 to take a free port (the one taken is "
                        "logged)"),
              std::string::npos)
        << what;
  }
  shutdown();
  ::close(fd);
}

// Port 0: the system picks a free port, the log says which, and it serves.
TEST(RegionStatsPrometheus, PortZeroTakesAFreePortAndSaysWhich) {
  CleanEnv env;
  TempDir dir;
  Options o = stats_options(dir.path(), {{"prometheus_listen", "127.0.0.1:0"}});
  o.set("log_level", "info");
  testing::internal::CaptureStderr();
  init(o);
  { RT_REGION("scraped"); }
  const std::string log = testing::internal::GetCapturedStderr();
  const std::string serving = "serving Prometheus metrics on http://127.0.0.1:";
  const std::size_t at = log.find(serving);
  ASSERT_NE(at, std::string::npos) << log;
  const int port = std::atoi(log.c_str() + at + serving.size());
  ASSERT_GT(port, 0) << log;
  EXPECT_NE(log.find("/metrics (prometheus_listen `127.0.0.1:0`: a free port)"), std::string::npos)
      << log;
  const std::optional<HttpResponse> r = http_get(port, "/metrics");
  ASSERT_TRUE(r.has_value()) << "nothing listens on the port logged: " << port;
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("region=\"scraped\""), std::string::npos) << r->body;
  shutdown();
}

// A free port on IPv6 loopback is served (civetweb, Debian's build, could
// not listen on IPv6 at all), and scraped over IPv6.
TEST(RegionStatsPrometheus, AnIpv6AddressIsServed) {
  CleanEnv env;
  TempDir dir;
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    if (fd >= 0) ::close(fd);
    GTEST_SKIP() << "no IPv6 loopback on this machine";
  }
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);  // free again: the port is known to be usable
  const std::string address = "[::1]:" + std::to_string(ntohs(a.sin6_port));
  init(stats_options(dir.path(), {{"prometheus_listen", address}}));
  { RT_REGION("over_ipv6"); }
  const int client = ::socket(AF_INET6, SOCK_STREAM, 0);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(client, request.data(), request.size(), 0),
            static_cast<ssize_t>(request.size()));
  std::string reply;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::recv(client, buf, sizeof(buf), 0)) > 0) reply.append(buf, static_cast<size_t>(n));
  ::close(client);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("region=\"over_ipv6\""), std::string::npos) << reply;
  shutdown();
}

TEST(RegionStatsPrometheus, AnAddressOfAnotherHostIsNamedAsSuch) {
  CleanEnv env;
  TempDir dir;
  const std::string address = "192.0.2.1:9464";  // TEST-NET-1: never this host's
  try {
    init(stats_options(dir.path(), {{"prometheus_listen", address}}));
    ADD_FAILURE() << "init served on " << address;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("`192.0.2.1` is not an address of this host"), std::string::npos) << what;
  }
  shutdown();
}

TEST(RegionStatsPrometheus, AnUnwritableTextfileStopsStartUp) {
  CleanEnv env;
  TempDir dir;
  const std::string prom = dir.file("no/such/folder/x.prom");
  try {
    init(stats_options(dir.path(), {{"prometheus_textfile", prom}}));
    ADD_FAILURE() << "init accepted " << prom;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("prometheus_textfile"), std::string::npos) << what;
    EXPECT_NE(what.find(prom), std::string::npos) << what;
  }
  shutdown();
}

}  // namespace
}  // namespace regiontrace::region_stats::test

namespace regiontrace::region_stats::test {
namespace {

TEST(RegionStatsProfile, TheShippedProfileValidates) {
  CleanEnv env;
  TempDir dir;
  inspect::LoadRequest request;
  request.profiles = {regiontrace::test::source_dir() + "/config/profiles/stats.yaml"};
  request.environment = {{"REGIONTRACE_PLUGIN_PATH", regiontrace::test::builtin_plugin_dir()},
                         {"REGIONTRACE_OUTPUT_DIR", dir.path()}};
  const inspect::LoadResult result = inspect::load_configuration(request);
  for (const std::string& e : result.errors) ADD_FAILURE() << e;
  bool runs = false;
  for (const inspect::SinkView& s : result.configuration.sinks) {
    if (s.name == "region_stats") runs = s.runs_on_this_rank;
  }
  EXPECT_TRUE(runs);
}

}  // namespace
}  // namespace regiontrace::region_stats::test
