#include "record_store.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "call_record_json.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::nvtx_record {
namespace {

// Leaked on purpose: exit handlers and late threads may still use them.
std::mutex& store_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}
std::vector<ThreadBuffer*>& buffers() {
  static auto* v = new std::vector<ThreadBuffer*>();
  return *v;
}
std::mutex& names_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}

std::atomic<std::uint64_t> g_seq{0};
std::atomic<std::uint64_t> g_range_ids{0};
std::once_flag g_started;
int g_fd = -1;
long g_pid = 0;
std::string* g_path = new std::string();
std::string* g_path_template = new std::string();

thread_local ThreadBuffer* t_buffer = nullptr;
thread_local bool t_buffer_gone = false;

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void write_all(const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0 && g_fd >= 0) {
    const ssize_t n = ::write(g_fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere to report from inside someone else's process
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void open_record_file() {
  std::string path = *g_path_template;
  for (std::size_t at = path.find("%p"); at != std::string::npos; at = path.find("%p", at)) {
    const std::string pid = std::to_string(g_pid);
    path.replace(at, 2, pid);
    at += pid.size();
  }
  *g_path = path;
  g_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (g_fd < 0) {
    std::fprintf(stderr, "regiontrace nvtx recorder: cannot open %s: %s; nothing is recorded\n",
                 path.c_str(), std::strerror(errno));
  }
}

void prepare_fork() {
  store_mutex().lock();
}
void parent_after_fork() {
  store_mutex().unlock();
}
void child_after_fork() {
  // Only this thread lives on. The parent writes its own records; the child
  // starts empty, with its own file when the path names the pid.
  new (&store_mutex()) std::mutex();
  std::vector<ThreadBuffer*>& all = buffers();
  all.clear();  // other threads' buffers are leaked: their owners are gone
  if (t_buffer != nullptr) {
    t_buffer->reset_locked();
    all.push_back(t_buffer);
  }
  g_pid = static_cast<long>(::getpid());
  if (g_path_template->find("%p") != std::string::npos) {
    if (g_fd >= 0) ::close(g_fd);
    open_record_file();
  }
}

struct BufferCleaner {
  ~BufferCleaner() {
    ThreadBuffer* b = t_buffer;
    t_buffer = nullptr;
    t_buffer_gone = true;
    if (b == nullptr) return;
    std::lock_guard<std::mutex> lock(store_mutex());
    b->write_pending_locked();
    std::vector<ThreadBuffer*>& all = buffers();
    all.erase(std::remove(all.begin(), all.end(), b), all.end());
    delete b;
  }
};
thread_local BufferCleaner t_cleaner;

}  // namespace

Domain* domain_named(std::string_view name) {
  static auto* domains = new std::map<std::string, Domain*, std::less<>>();
  std::lock_guard<std::mutex> lock(names_mutex());
  auto it = domains->find(name);
  if (it != domains->end()) return it->second;
  auto* d = new Domain();
  d->id = domains->size() + 1;
  d->name = std::string(name);
  regiontrace::json::append_escaped(d->json_name, d->name);
  domains->emplace(d->name, d);
  return d;
}

RegisteredString* register_string(const Domain* domain, std::string_view text) {
  static auto* strings =
      new std::map<std::pair<const Domain*, std::string>, RegisteredString*, std::less<>>();
  std::lock_guard<std::mutex> lock(names_mutex());
  auto key = std::make_pair(domain, std::string(text));
  auto it = strings->find(key);
  if (it != strings->end()) return it->second;
  auto* s = new RegisteredString();
  s->id = strings->size() + 1;
  s->domain = domain;
  s->text = key.second;
  regiontrace::json::append_escaped(s->json_text, s->text);
  strings->emplace(std::move(key), s);
  return s;
}

nvtxResourceHandle* new_resource() {
  static std::atomic<std::uint64_t> ids{0};
  auto* r = new nvtxResourceHandle();
  r->id = ++ids;
  return r;
}

std::uint64_t next_range_id() {
  return ++g_range_ids;
}

ThreadBuffer& this_thread_buffer() {
  ThreadBuffer* b = t_buffer;
  if (b != nullptr) return *b;
  if (t_buffer_gone) {
    // NVTX called from a thread_local destructor that runs after ours: keep
    // the call in a buffer of its own, written by the next flush or at exit.
    static thread_local ThreadBuffer* late = nullptr;
    if (late == nullptr) {
      late = new ThreadBuffer(syscall(SYS_gettid));
      std::lock_guard<std::mutex> lock(store_mutex());
      buffers().push_back(late);
    }
    return *late;
  }
  b = new ThreadBuffer(syscall(SYS_gettid));
  {
    std::lock_guard<std::mutex> lock(store_mutex());
    buffers().push_back(b);
  }
  t_buffer = b;
  (void)&t_cleaner;  // odr-use: registers the cleaner for this thread
  return *b;
}

Record& ThreadBuffer::begin_record(Call call) {
  if (count_.load(std::memory_order_relaxed) == kRecords) make_room();
  pending_ = count_.load(std::memory_order_relaxed);
  Record& r = records_[pending_];
  r = Record();
  r.call = call;
  r.seq = g_seq.fetch_add(1, std::memory_order_relaxed) + 1;
  r.time_ns = now_ns();
  return r;
}

void ThreadBuffer::commit() {
  count_.store(pending_ + 1, std::memory_order_release);
}

void ThreadBuffer::make_room() {
  std::lock_guard<std::mutex> lock(store_mutex());
  write_pending_locked();
  count_.store(0, std::memory_order_relaxed);
  written_ = 0;
  text_used_ = 0;
}

std::uint32_t ThreadBuffer::reserve_text(std::uint32_t bytes) {
  if (text_used_ + bytes > kTextBytes) {
    // Write what is published, then move the record being filled to the front.
    const Record pending = records_[pending_];
    make_room();
    pending_ = 0;
    records_[0] = pending;
  }
  const std::uint32_t at = text_used_;
  text_used_ += bytes;
  return at;
}

void ThreadBuffer::set_text(const char* text) {
  if (text == nullptr) return;
  const auto n =
      static_cast<std::uint32_t>(std::min<std::size_t>(std::strlen(text), kTextBytes / 4));
  const std::uint32_t at = reserve_text(n);
  Record& target = records_[pending_];  // reserve_text may have moved it
  std::memcpy(text_ + at, text, n);
  target.text_offset = at;
  target.text_length = n;
  target.has_text = true;
}

void ThreadBuffer::set_text(const wchar_t* text) {
  if (text == nullptr) return;
  std::string utf8;
  for (const wchar_t* p = text; *p != 0 && utf8.size() < kTextBytes / 4 - 4; ++p) {
    const auto c = static_cast<std::uint32_t>(*p);
    if (c < 0x80) {
      utf8 += static_cast<char>(c);
    } else if (c < 0x800) {
      utf8 += static_cast<char>(0xC0 | (c >> 6));
      utf8 += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      utf8 += static_cast<char>(0xE0 | (c >> 12));
      utf8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      utf8 += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      utf8 += static_cast<char>(0xF0 | (c >> 18));
      utf8 += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      utf8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      utf8 += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  set_text(utf8.c_str());
}

std::int32_t ThreadBuffer::push_level(const Domain* domain) {
  for (int i = 0; i < level_count_; ++i) {
    if (levels_[i].domain == domain) return levels_[i].depth++;
  }
  if (level_count_ == static_cast<int>(std::size(levels_))) return 0;
  levels_[level_count_++] = {domain, 1};
  return 0;
}

std::int32_t ThreadBuffer::pop_level(const Domain* domain) {
  for (int i = 0; i < level_count_; ++i) {
    if (levels_[i].domain == domain) {
      return levels_[i].depth > 0 ? --levels_[i].depth : -1;
    }
  }
  return -1;
}

void ThreadBuffer::write_pending_locked() {
  const std::uint32_t count = count_.load(std::memory_order_acquire);
  if (count <= written_) return;
  std::string out;
  out.reserve(static_cast<std::size_t>(count - written_) * 200);
  for (std::uint32_t i = written_; i < count; ++i) {
    append_record_line(out, records_[i], text_, g_pid, tid_);
  }
  written_ = count;
  write_all(out);
}

void ThreadBuffer::reset_locked() {
  count_.store(0, std::memory_order_relaxed);
  written_ = 0;
  text_used_ = 0;
  pending_ = 0;
}

void start_store() {
  std::call_once(g_started, [] {
    g_pid = static_cast<long>(::getpid());
    const char* file = std::getenv("NVTX_RECORD_FILE");
    if (file != nullptr && *file != '\0') {
      *g_path_template = file;
    } else {
      const char* tmp = std::getenv("TMPDIR");
      *g_path_template =
          std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/nvtx_record_%p.jsonl";
    }
    open_record_file();
    if (file == nullptr || *file == '\0') {
      std::fprintf(stderr,
                   "regiontrace nvtx recorder: recording NVTX calls to %s (set NVTX_RECORD_FILE "
                   "to choose)\n",
                   g_path->c_str());
    }
    pthread_atfork(prepare_fork, parent_after_fork, child_after_fork);
    std::atexit(flush_store);
  });
}

void flush_store() {
  std::lock_guard<std::mutex> lock(store_mutex());
  for (ThreadBuffer* b : buffers()) b->write_pending_locked();
}

const std::string& record_path() {
  return *g_path;
}

}  // namespace regiontrace::nvtx_record
