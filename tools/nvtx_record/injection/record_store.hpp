// Where the recording injection keeps calls until they are written.
//
// Each thread appends fixed-size records (and the text of plain-string
// messages) to its own buffer without a lock; a global sequence number keeps
// the order across threads. A buffer is formatted to JSONL and appended to
// the record file (one write() per batch, O_APPEND) when it fills, when its
// thread ends, on regiontrace_nvtx_record_flush() and at exit. A forked
// child forgets its parent's records and writes its own file.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "registrations.hpp"

namespace regiontrace::nvtx_record {

// Every NVTX entry point this tool implements (names as in nvToolsExt.h).
enum class Call : std::uint8_t {
  kMarkEx,
  kMarkA,
  kMarkW,
  kRangeStartEx,
  kRangeStartA,
  kRangeStartW,
  kRangeEnd,
  kRangePushEx,
  kRangePushA,
  kRangePushW,
  kRangePop,
  kNameCategoryA,
  kNameCategoryW,
  kNameOsThreadA,
  kNameOsThreadW,
  kDomainMarkEx,
  kDomainRangeStartEx,
  kDomainRangeEnd,
  kDomainRangePushEx,
  kDomainRangePop,
  kDomainResourceCreate,
  kDomainResourceDestroy,
  kDomainNameCategoryA,
  kDomainNameCategoryW,
  kDomainRegisterStringA,
  kDomainRegisterStringW,
  kDomainCreateA,
  kDomainCreateW,
  kDomainDestroy,
  kInitialize,
};
const char* call_name(Call call);
// What a call does, for readers that do not care which variant it was:
// mark, range_start, range_end, push, pop, name_category, name_thread,
// register_string, domain_create, domain_destroy, resource_create,
// resource_destroy, initialize.
const char* kind_name(Call call);

inline constexpr std::int8_t kNoMessage = -1;

struct Record {
  std::uint64_t seq = 0;
  std::int64_t time_ns = 0;  // CLOCK_MONOTONIC, the clock regiontrace stamps events with
  Call call = Call::kInitialize;
  std::int8_t message_type = kNoMessage;  // NVTX_MESSAGE_TYPE_*, kNoMessage: no message
  std::int8_t color_type = 0;             // NVTX_COLOR_*
  std::int32_t payload_type = 0;          // NVTX_PAYLOAD_TYPE_*
  std::uint32_t category = 0;
  std::uint32_t color = 0;
  std::int32_t depth = 0;  // push: level opened; pop: level closed, -1 when nothing was open
  const Domain* domain = nullptr;
  const RegisteredString* string = nullptr;  // registered message / the string registered
  std::uint64_t payload = 0;                 // raw payload bits
  std::uint64_t value = 0;                   // range id, category id, thread id, resource id
  std::uint32_t text_offset = 0;             // plain message / name, in the thread's text
  std::uint32_t text_length = 0;
  bool has_text = false;
};

class ThreadBuffer;

// The calling thread's buffer (created on first use).
ThreadBuffer& this_thread_buffer();

class ThreadBuffer {
 public:
  static constexpr std::uint32_t kRecords = 1024;
  static constexpr std::uint32_t kTextBytes = 64 * 1024;

  explicit ThreadBuffer(long tid) : tid_(tid) {}
  long tid() const { return tid_; }

  // Fill the returned record, then commit(). Stamps seq and time.
  Record& begin_record(Call call);
  void commit();
  // The record being filled (set_text may move it: use this after it).
  Record& current() { return records_[pending_]; }
  // Copies the text of the record being filled (wide text as UTF-8) into
  // the buffer; call between begin_record and commit.
  void set_text(const char* text);
  void set_text(const wchar_t* text);
  // Per-domain nesting level on this thread.
  std::int32_t push_level(const Domain* domain);
  std::int32_t pop_level(const Domain* domain);

  // Store internals, called with the store's lock held.
  void write_pending_locked();  // formats records not yet written
  void reset_locked();          // drops everything (forked child)

 private:
  friend ThreadBuffer& this_thread_buffer();
  void make_room();
  std::uint32_t reserve_text(std::uint32_t bytes);

  long tid_;
  Record records_[kRecords];
  char text_[kTextBytes];
  std::atomic<std::uint32_t> count_{0};  // published records
  std::uint32_t written_ = 0;            // records already in the file (lock held)
  std::uint32_t text_used_ = 0;          // owner only
  std::uint32_t pending_ = 0;            // index of the record being filled
  struct Level {
    const Domain* domain;
    std::int32_t depth;
  };
  Level levels_[16] = {};
  int level_count_ = 0;
};

// Starts the store once: opens the record file, registers exit and fork
// handlers. Safe to call from every NVTX copy that initialises this tool.
void start_store();
// Writes every thread's pending records.
void flush_store();
// The file records go to (after `%p` was replaced by the pid).
const std::string& record_path();

std::uint64_t next_range_id();

}  // namespace regiontrace::nvtx_record
