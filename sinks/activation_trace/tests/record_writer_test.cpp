// The writer thread behind the bounded queue: nothing lost when blocking,
// drops counted when dropping, whole lines, flush on request.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "record_writer.hpp"
#include "test_support.hpp"

namespace regiontrace::activation {
namespace {

using regiontrace::test::TempDir;

ActivationRecord make_record(int i) {
  TensorStats s;
  s.sum = i * 0.5;
  s.abs_mean = 1.0 / (i + 1);
  return ActivationRecord("blocks." + std::to_string(i % 7), "out", "", i, std::move(s));
}

RecordWriter::Options writer_options(const std::string& path, std::size_t capacity, bool drop) {
  RecordWriter::Options o;
  o.path = path;
  o.capacity = capacity;
  o.drop_when_full = drop;
  return o;
}

// Reads a named pipe slowly on its own thread: a writer that cannot keep up.
class SlowReader {
 public:
  explicit SlowReader(const std::string& path) {
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
    EXPECT_GE(fd_, 0);
  }
  void start() {
    thread_ = std::thread([this] {
      char buf[2048];
      for (;;) {
        const ssize_t n = ::read(fd_, buf, sizeof(buf));
        if (n > 0) {
          text_.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0) {
          break;  // the writer closed its end
        }
        std::this_thread::sleep_for(std::chrono::microseconds(300));
      }
    });
  }
  std::string finish() {
    thread_.join();
    ::close(fd_);
    return text_;
  }

 private:
  int fd_ = -1;
  std::thread thread_;
  std::string text_;
};

struct ParsedTrace {
  std::vector<nlohmann::json> records;
  nlohmann::json summary;
};

ParsedTrace parse_lines(const std::string& text) {
  ParsedTrace t;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    EXPECT_NE(end, std::string::npos) << "the last line is not terminated";
    if (end == std::string::npos) break;
    nlohmann::json j = nlohmann::json::parse(text.substr(begin, end - begin));
    if (j.contains("summary")) {
      EXPECT_TRUE(t.summary.is_null()) << "one summary line";
      t.summary = j["summary"];
    } else {
      EXPECT_TRUE(t.summary.is_null()) << "records after the summary";
      t.records.push_back(std::move(j));
    }
    begin = end + 1;
  }
  return t;
}

constexpr int kProducers = 2;
constexpr int kPerProducer = 1500;

void produce(RecordWriter& writer) {
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&writer, p] {
      for (int i = 0; i < kPerProducer; ++i) writer.submit(make_record(p * kPerProducer + i));
    });
  }
  for (auto& t : threads) t.join();
}

TEST(RecordWriter, BlockingLosesNothingBehindASlowWriter) {
  TempDir dir;
  const std::string path = dir.file("trace.fifo");
  SlowReader reader(path);
  RecordWriter writer(writer_options(path, 8, false), RecordFormatter(StatSet::parse({"sum"}), 0));
  reader.start();
  const auto t0 = std::chrono::steady_clock::now();
  produce(writer);
  const auto produced = std::chrono::steady_clock::now() - t0;
  writer.close();
  const ParsedTrace t = parse_lines(reader.finish());
  ASSERT_EQ(t.records.size(), static_cast<std::size_t>(kProducers * kPerProducer));
  EXPECT_EQ(t.summary["dropped"], 0);
  EXPECT_EQ(t.summary["records"], kProducers * kPerProducer);
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    EXPECT_EQ(t.records[i]["seq"], i) << "sequence numbers follow file order, without gaps";
  }
  std::set<double> sums;
  for (const auto& r : t.records) sums.insert(r["sum"].get<double>());
  EXPECT_EQ(sums.size(), t.records.size()) << "every record arrived once";
  // The producers had to wait for the reader: ~400 KB through 2 KB reads.
  EXPECT_GT(produced, std::chrono::milliseconds(20));
}

TEST(RecordWriter, ABatchOfManyRecordsIsWrittenWholeInSeveralWrites) {
  // One flush of 20000 queued records, 17 stats each: about 8 MB of text,
  // written out a file buffer at a time while it is formatted.
  TempDir dir;
  const std::string path = dir.file("trace.jsonl");
  constexpr int kRecords = 20000;
  RecordWriter writer(writer_options(path, 2 * kRecords, false),
                      RecordFormatter(StatSet::parse({"all"}), 0));
  for (int i = 0; i < kRecords; ++i) writer.submit(make_record(i));
  writer.close();
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GT(text.size(), 2 * sdk::LineFileWriter::kDefaultBufferLimit);
  EXPECT_EQ(text.find("\n\n"), std::string::npos) << "no empty line";
  const ParsedTrace t = parse_lines(text);
  ASSERT_EQ(t.records.size(), static_cast<std::size_t>(kRecords));
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    ASSERT_EQ(t.records[i]["seq"], i) << "in queue order, none twice";
    ASSERT_EQ(t.records[i]["sum"], static_cast<double>(i) * 0.5);
  }
  EXPECT_EQ(t.summary["records"], kRecords);
}

TEST(RecordWriter, DroppingCountsWhatItRefuses) {
  TempDir dir;
  const std::string path = dir.file("trace.fifo");
  SlowReader reader(path);
  RecordWriter writer(writer_options(path, 8, true), RecordFormatter(StatSet::parse({"sum"}), 0));
  reader.start();
  produce(writer);
  writer.close();
  const ParsedTrace t = parse_lines(reader.finish());
  const std::uint64_t dropped = t.summary["dropped"];
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(t.summary["records"], t.records.size());
  EXPECT_EQ(t.records.size() + dropped, static_cast<std::size_t>(kProducers * kPerProducer));
  EXPECT_EQ(writer.dropped(), dropped);
  // Dropped records leave gaps in the sequence; the rest keep their order.
  for (std::size_t i = 1; i < t.records.size(); ++i) {
    EXPECT_GT(t.records[i]["seq"].get<std::uint64_t>(),
              t.records[i - 1]["seq"].get<std::uint64_t>());
  }
  EXPECT_LT(t.records.back()["seq"].get<std::uint64_t>(), kProducers * kPerProducer);
}

TEST(RecordWriter, FlushWritesWhatWasSubmitted) {
  TempDir dir;
  const std::string path = dir.file("trace.jsonl");
  RecordWriter::Options o = writer_options(path, 1000, false);
  o.idle_wakeup = std::chrono::milliseconds(10000);  // only flushes write
  RecordWriter writer(o, RecordFormatter(StatSet::parse({"sum"}), 0));
  for (int i = 0; i < 5; ++i) writer.submit(make_record(i));
  writer.flush();
  EXPECT_EQ(test::read_lines(path).size(), 5u);
  for (int i = 5; i < 8; ++i) writer.submit(make_record(i));
  writer.request_flush();  // does not wait: poll
  for (int tries = 0; tries < 200 && test::read_lines(path).size() < 8; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(test::read_lines(path).size(), 8u);
  writer.close();
  writer.close();
  EXPECT_FALSE(writer.submit(make_record(9)));
  const auto records = test::read_jsonl(path);
  ASSERT_EQ(records.size(), 9u);
  EXPECT_EQ(records.back()["summary"]["records"], 8);
}

TEST(RecordWriter, AFailedWriteIsReported) {
  RecordWriter writer(writer_options("/dev/full", 100, false),
                      RecordFormatter(StatSet::parse({"sum"}), 0));
  writer.submit(make_record(1));
  writer.flush();
  EXPECT_TRUE(writer.failed());
  EXPECT_NE(writer.failure().find("/dev/full"), std::string::npos) << writer.failure();
  writer.close();
}

TEST(RecordWriter, AnUnopenableFileNamesThePath) {
  try {
    RecordWriter writer(writer_options("/nonexistent/dir/trace.jsonl", 100, false),
                        RecordFormatter(StatSet::parse({"sum"}), 0));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/trace.jsonl"), std::string::npos);
  }
}

}  // namespace
}  // namespace regiontrace::activation
