// sdk::GzipFileWriter: a .gz that appears whole or not at all, and reads
// back as what was written.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <string>

#include "regiontrace/sdk/gzip_file_writer.hpp"

namespace {

namespace fs = std::filesystem;
using regiontrace::sdk::GzipFileWriter;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("rt_sdk_gz_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

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
  const fs::path dir = fresh_dir("roundtrip");
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
  const fs::path dir = fresh_dir("abandoned");
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

}  // namespace
