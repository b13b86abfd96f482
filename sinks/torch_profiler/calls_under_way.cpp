#include "calls_under_way.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace regiontrace::torch_profiler {
namespace {

long membarrier(int command) {
  return syscall(__NR_membarrier, command, 0, 0);
}

// Every thread's mark, and those whose thread ended, for the next thread.
// Never destroyed: a session may finish from an exit handler, after static
// destructors ran.
struct Marks {
  std::mutex mutex;
  std::vector<CallMark*> all;
  std::vector<CallMark*> idle;
};
Marks& marks() {
  static Marks* m = new Marks();
  return *m;
}

// The process the membarrier registration belongs to: a forked child has to
// register again (the kernel keeps it per address space).
std::atomic<pid_t> g_registered_pid{0};

// Returns the thread's mark to the idle ones when the thread ends. A gate
// call later in that thread's exit (another thread_local's destructor
// running an op) takes a new mark, which then stays with it.
struct MarkOwner {
  ~MarkOwner() {
    CallMark* mark = calls_detail::t_mark;
    if (mark == nullptr) return;
    calls_detail::t_mark = nullptr;
    Marks& m = marks();
    std::lock_guard<std::mutex> lock(m.mutex);
    m.idle.push_back(mark);
  }
};
thread_local MarkOwner t_owner;

// Every running thread of the process passes a full memory barrier before
// this returns.
void barrier_on_every_thread() {
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // Registered in another process before a fork; or refused after all.
  if (errno == EPERM && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
      membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
    return;
  }
  // Slower (it waits for every CPU to schedule), same guarantee.
  membarrier(MEMBARRIER_CMD_GLOBAL);
}

}  // namespace

CallMark* calls_detail::register_this_thread() {
  Marks& m = marks();
  CallMark* mark = nullptr;
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    if (!m.idle.empty()) {
      mark = m.idle.back();
      m.idle.pop_back();
    } else {
      mark = new CallMark();
      m.all.push_back(mark);
    }
  }
  t_mark = mark;
  (void)&t_owner;  // odr-use: its destructor hands the mark back
  return mark;
}

void prepare_calls_under_way() {
  const pid_t pid = getpid();
  if (g_registered_pid.load() == pid) return;
  const long offered = membarrier(MEMBARRIER_CMD_QUERY);
  const bool asymmetric = offered > 0 && (offered & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
                          membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  calls_detail::g_self_fenced.store(!asymmetric);
  g_registered_pid.store(pid);
}

void wait_for_calls_under_way() {
  if (!calls_detail::g_self_fenced.load()) barrier_on_every_thread();
  std::vector<CallMark*> all;
  {
    // A thread that registers after this sees the gate closed: it takes
    // the mutex after the caller closed it.
    Marks& m = marks();
    std::lock_guard<std::mutex> lock(m.mutex);
    all = m.all;
  }
  for (CallMark* mark : all) {
    while (mark->depth.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  }
}

std::int64_t ops_open(int slot) {
  Marks& m = marks();
  std::lock_guard<std::mutex> lock(m.mutex);
  std::int64_t n = 0;
  for (const CallMark* mark : m.all) n += mark->open[slot].load(std::memory_order_acquire);
  return n;
}

void forget_calls_in_child() {
  Marks& m = marks();
  // Another thread of the parent may have held it at the fork: the child
  // has only this thread, and a fresh mutex.
  new (&m.mutex) std::mutex();
  // The other threads' marks are free for the child's threads.
  m.idle.clear();
  for (CallMark* mark : m.all) {
    if (mark == calls_detail::t_mark) continue;
    mark->depth.store(0);
    for (auto& n : mark->open) n.store(0);
    m.idle.push_back(mark);
  }
}

}  // namespace regiontrace::torch_profiler
