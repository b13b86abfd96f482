#include "journal.hpp"

#include <mutex>
#include <utility>

namespace regiontrace::test::journal {
namespace {

struct State {
  std::mutex mutex;
  bool count_only = false;
  std::vector<Record> records;
  std::map<std::tuple<int, char, std::uint32_t>, std::uint64_t> counts;
  std::map<int, std::uint64_t> dropped;
};

State& state() {
  static State* s = new State();  // sinks may record from exit handlers
  return *s;
}

}  // namespace

void reset(bool count_only) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.count_only = count_only;
  s.records.clear();
  s.counts.clear();
  s.dropped.clear();
}

void add(Record record) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.counts[{record.sink, record.kind, record.id}];
  if (!s.count_only) s.records.push_back(std::move(record));
}

void add_dropped(int sink, std::uint64_t count) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.dropped[sink] += count;
}

std::vector<Record> take() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return std::exchange(s.records, {});
}

std::map<std::tuple<int, char, std::uint32_t>, std::uint64_t> counts() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.counts;
}

std::map<int, std::uint64_t> dropped() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.dropped;
}

}  // namespace regiontrace::test::journal
