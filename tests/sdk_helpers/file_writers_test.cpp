#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "regiontrace/sdk/gzip_file_writer.hpp"
#include "regiontrace/sdk/line_file_writer.hpp"
#include "regiontrace/sdk/trace_file_writer.hpp"
#include "regiontrace/sdk/whole_file_writer.hpp"

namespace {

namespace fs = std::filesystem;
using regiontrace::sdk::GzipFileWriter;
using regiontrace::sdk::LineFileWriter;
using regiontrace::sdk::WholeFileWriter;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("rt_sdk_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `body` in a child whose files may not grow past `limit` bytes, with
// SIGXFSZ ignored so an oversized write fails with EFBIG instead of killing
// it: a full disk, made reproducible. Returns the child's exit code.
template <typename Body>
int with_file_size_limit(rlim_t limit, Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl {
      limit, limit
    };
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(90);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(LineFileWriter, AFullFileKeepsOnlyWholeLines) {
  const fs::path dir = fresh_dir("lines");
  const std::string path = (dir / "records.jsonl").string();
  const int rc = with_file_size_limit(10000, [&] {
    LineFileWriter f(path);
    f.set_buffer_limit(700);  // several writes, the failing one torn by the limit
    for (int i = 0; i < 1000; ++i) {
      if (!f.append("{\"record\":" + std::to_string(i) + ",\"pad\":\"xxxxxxxxxxxxxxxx\"}\n")) {
        break;
      }
    }
    f.close();
    if (!f.failed()) return 1;
    if (f.error().find(path) == std::string::npos) return 2;
    if (f.append("{\"after\":1}\n")) return 3;  // sticky
    return 0;
  });
  ASSERT_EQ(rc, 0);
  const std::string text = slurp(path);
  ASSERT_FALSE(text.empty());
  EXPECT_LE(text.size(), 10000u);
  EXPECT_EQ(text.back(), '\n');
  std::istringstream lines(text);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(line, "{\"record\":" + std::to_string(n) + ",\"pad\":\"xxxxxxxxxxxxxxxx\"}");
    ++n;
  }
  EXPECT_GT(n, 100);
  fs::remove_all(dir);
}

TEST(LineFileWriter, AForkedChildThatExitsDoesNotWriteTheParentsLines) {
  const fs::path dir = fresh_dir("fork");
  const std::string path = (dir / "records.jsonl").string();
  {
    LineFileWriter f(path);
    f.append("{\"line\":1}\n");  // buffered, not yet written
    const pid_t pid = ::fork();
    if (pid == 0) {
      f.close();  // what a child's exit() would run: must not write line 1
      std::exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    f.append("{\"line\":2}");  // the missing newline is added
  }
  EXPECT_EQ(slurp(path), "{\"line\":1}\n{\"line\":2}\n");
  fs::remove_all(dir);
}

TEST(LineFileWriter, AppendModeKeepsWhatWasThere) {
  const fs::path dir = fresh_dir("append");
  const std::string path = (dir / "a.jsonl").string();
  {
    LineFileWriter f(path);
    f.append("one\n");
  }
  {
    LineFileWriter f(path, LineFileWriter::Mode::kAppend);
    f.append("two\n");
  }
  EXPECT_EQ(slurp(path), "one\ntwo\n");
  EXPECT_THROW(LineFileWriter((dir / "no" / "such.jsonl").string()), std::runtime_error);
  fs::remove_all(dir);
}

// A shared output folder where someone planted the name first: a link to
// another file, a hard link, a FIFO nobody reads (which would block).
// Nothing is written through them, the target keeps its bytes, and the
// message names the path and the reason.
TEST(LineFileWriter, PlantedLinksAndFifosAreRefusedNotFollowed) {
  const fs::path dir = fresh_dir("planted");
  const std::string victim = (dir / "victim").string();
  { std::ofstream(victim) << "keep me\n"; }
  auto refused = [&](const std::string& path, const std::string& why) {
    for (auto mode : {LineFileWriter::Mode::kTruncate, LineFileWriter::Mode::kAppend}) {
      try {
        LineFileWriter f(path, mode);
        f.append("{\"x\":1}");
        ADD_FAILURE() << path << " was opened";
      } catch (const std::runtime_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("refusing to write `" + path + "`"), std::string::npos) << m;
        EXPECT_NE(m.find(why), std::string::npos) << m;
      }
    }
  };
  const std::string sym = (dir / "activations_rank0_pid1.jsonl").string();
  fs::create_symlink(victim, sym);
  refused(sym, "symbolic link");
  const std::string hard = (dir / "memory_rank0_pid1.jsonl").string();
  fs::create_hard_link(victim, hard);
  refused(hard, "other hard links");
  const std::string fifo = (dir / "timeline.jsonl").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  refused(fifo, "FIFO");
  EXPECT_EQ(slurp(victim), "keep me\n");
  fs::remove_all(dir);
}

TEST(WholeFileWriter, WritesAndRenamesIntoPlace) {
  const fs::path dir = fresh_dir("whole");
  const std::string path = (dir / "summary.json").string();
  {
    WholeFileWriter f(path, {true});
    f.write("{\"a\":");
    f.write("1}\n");
    EXPECT_FALSE(fs::exists(path));  // nothing under the final name yet
    f.commit();
  }
  EXPECT_EQ(slurp(path), "{\"a\":1}\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(WholeFileWriter, AFailedWriteLeavesTheOldFileIntact) {
  const fs::path dir = fresh_dir("whole_fail");
  const std::string path = (dir / "summary.json").string();
  ASSERT_TRUE(WholeFileWriter::write_file(path, "old\n").empty());
  const int rc = with_file_size_limit(4096, [&] {
    const std::string error = WholeFileWriter::write_file(path, std::string(100000, 'x'));
    if (error.empty()) return 1;
    if (error.find(path) == std::string::npos) return 2;  // names the final file
    return 0;
  });
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(slurp(path), "old\n");
  // and no temporary file is left behind
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(WholeFileWriter, AnUncommittedWriterLeavesNothing) {
  const fs::path dir = fresh_dir("whole_abandon");
  {
    WholeFileWriter f((dir / "trace.json").string());
    f.write("partial");
  }
  EXPECT_TRUE(fs::is_empty(dir));
  const std::string error = WholeFileWriter::write_file((dir / "no" / "x.json").string(), "x");
  EXPECT_NE(error.find((dir / "no" / "x.json").string()), std::string::npos) << error;
  fs::remove_all(dir);
}

// --- GzipFileWriter: a .gz that appears whole or not at all ---------------

std::string gunzip(const fs::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  EXPECT_NE(f, nullptr) << p;
  if (f == nullptr) return {};
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  EXPECT_EQ(n, 0) << "a damaged stream: " << p;
  gzclose(f);
  return out;
}

TEST(GzipFileWriter, ReadsBackAsWrittenAndAppearsOnlyAtCommit) {
  const fs::path dir = fresh_dir("gz_roundtrip");
  const fs::path path = dir / "trace.json.gz";
  std::string expected;
  {
    GzipFileWriter w(path.string(), 1);
    for (int i = 0; i < 20000; ++i) {
      const std::string piece = "{\"ph\":\"X\",\"ts\":" + std::to_string(i) + "},";
      w.write(piece);
      expected += piece;
    }
    w.write("");  // nothing
    EXPECT_FALSE(fs::exists(path)) << "not before commit";
    w.commit();
    EXPECT_EQ(w.bytes_in(), expected.size());
    EXPECT_GT(w.bytes_written(), 0u);
    EXPECT_LT(w.bytes_written(), expected.size() / 4) << "compressed";
  }
  EXPECT_EQ(gunzip(path), expected);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1)
      << "no temporary file left";
  fs::remove_all(dir);
}

TEST(GzipFileWriter, WithoutCommitNothingIsLeftAndAnOldFileStays) {
  const fs::path dir = fresh_dir("gz_abandoned");
  const fs::path path = dir / "trace.json.gz";
  {
    GzipFileWriter old(path.string(), 6);
    old.write("old");
    old.commit();
  }
  {
    GzipFileWriter w(path.string(), 6);
    w.write("new, never committed");
  }
  EXPECT_EQ(gunzip(path), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
  fs::remove_all(dir);
}

TEST(GzipFileWriter, AFolderThatIsNotThereIsNamed) {
  try {
    GzipFileWriter w("/nonexistent/regiontrace/trace.json.gz", 1);
    FAIL() << "created";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/regiontrace/trace.json.gz"),
              std::string::npos)
        << e.what();
  }
}

// A long write says how far it got: after the delay, at most once per
// interval, with the bytes written so far; a write that ends first says
// nothing.
TEST(TraceFileWriter, ALongWriteReportsItsProgressAndAShortOneDoesNot) {
  const fs::path dir = fresh_dir("progress");
  const std::string chunk(1 << 20, 'x');
  std::vector<std::pair<std::uint64_t, double>> said;
  {
    regiontrace::sdk::TraceFileWriter out((dir / "long.json.gz").string(), true, 1);
    out.on_progress([&](std::uint64_t bytes, double s) { said.emplace_back(bytes, s); }, 0.0, 0.0);
    for (int i = 0; i < 40; ++i) out.write(chunk);
    out.commit();
  }
  // Every 4 MiB once the delay (0 here) has passed: 10 reports for 40 MiB.
  ASSERT_EQ(said.size(), 10u);
  for (std::size_t i = 0; i < said.size(); ++i) {
    EXPECT_EQ(said[i].first, (i + 1) * (4u << 20));
    if (i > 0) EXPECT_GE(said[i].second, said[i - 1].second);
  }
  said.clear();
  regiontrace::sdk::TraceFileWriter quick((dir / "quick.json").string(), false);
  quick.on_progress([&](std::uint64_t bytes, double s) { said.emplace_back(bytes, s); });
  for (int i = 0; i < 8; ++i) quick.write(chunk);  // well under the default 1 s
  quick.commit();
  EXPECT_TRUE(said.empty());
  fs::remove_all(dir);
}

// Compressed on the thread of its own in 1 MiB blocks, pieces of every size
// come back in order, whole.
TEST(TraceFileWriter, GzipOverManyBlocksReadsBackAsWritten) {
  const fs::path dir = fresh_dir("gz_blocks");
  const fs::path path = dir / "trace.json.gz";
  std::string expected;
  {
    regiontrace::sdk::TraceFileWriter out(path.string(), true, 1);
    for (int i = 0; i < 300000; ++i) {
      std::string piece = "{\"ph\":\"X\",\"ts\":" + std::to_string(i) + "},";
      if (i % 50000 == 0) piece += std::string(3u << 20, 'a' + i % 26);  // past a block at once
      out.write(piece);
      expected += piece;
    }
    EXPECT_FALSE(fs::exists(path)) << "not before commit";
    out.commit();
    EXPECT_EQ(out.bytes_in(), expected.size());
  }
  EXPECT_EQ(gunzip(path), expected);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1)
      << "no temporary file left";
  fs::remove_all(dir);
}

// A full disk met by the compressing thread stops the writer at a later
// write with the errno (a caller stops formatting early), and nothing
// appears under the final name.
TEST(TraceFileWriter, AFullDiskStopsTheGzipWriterWithItsErrno) {
  const fs::path dir = fresh_dir("gz_full");
  const fs::path path = dir / "trace.json.gz";
  const int rc = with_file_size_limit(64 << 10, [&] {
    try {
      regiontrace::sdk::TraceFileWriter out(path.string(), true, 1);
      std::mt19937_64 random(7);  // incompressible: the limit is met early
      std::string block(1 << 20, '\0');
      for (int i = 0; i < 64; ++i) {
        for (char& c : block) c = static_cast<char>(random());
        out.write(block);
      }
      out.commit();
      return 1;  // a 64 MiB file under a 64 KiB limit
    } catch (const std::system_error& e) {
      if (e.code().value() != EFBIG) return 2;
      if (std::string(e.what()).find(path.string()) == std::string::npos) return 3;
      return 0;
    }
  });
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(fs::exists(path));
  fs::remove_all(dir);
}

}  // namespace
