#include "thread_states.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace regiontrace::torch_profiler {
namespace {

// One entry cache: which registry the cached state belongs to. Plain
// pointers, so nothing here is destroyed at thread exit before the host ends
// the thread's open regions. Initial-exec: no __tls_get_addr call per region
// (see calls_under_way.hpp).
thread_local const ThreadRegistry* t_owner __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;

}  // namespace

ThreadState& ThreadRegistry::current() {
  if (t_owner == this) return *t_state;
  auto state = std::make_unique<ThreadState>();
  state->os_tid = static_cast<std::uint64_t>(::syscall(SYS_gettid));
  char name[32] = {0};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0 || name[0] == '\0') {
    state->name = "thread " + std::to_string(state->os_tid);
  } else {
    state->name = std::string(name) + " (" + std::to_string(state->os_tid) + ")";
  }
  ThreadState* raw = state.get();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    threads_.push_back(std::move(state));
  }
  t_owner = this;
  t_state = raw;
  return *raw;
}

}  // namespace regiontrace::torch_profiler
