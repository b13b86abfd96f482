// A crash in a CUDA test prints where it happened: GPU machines are reached
// only through scripts/gpu_check.sh, and their images have no debugger, so
// the log is all there is to go on. A jump through a bad pointer leaves no
// frame to unwind, so besides backtrace() the handler prints the faulting
// instruction and every word near the stack pointer that points into code.
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <initializer_list>

namespace {

void describe(const char* what, std::uintptr_t address) {
  Dl_info info{};
  char line[512];
  if (dladdr(reinterpret_cast<void*>(address), &info) != 0 && info.dli_fname != nullptr) {
    std::snprintf(line, sizeof line, "  %s %#" PRIxPTR " = %s+%#" PRIxPTR " (%s)\n", what, address,
                  info.dli_fname, address - reinterpret_cast<std::uintptr_t>(info.dli_fbase),
                  info.dli_sname != nullptr ? info.dli_sname : "?");
  } else {
    std::snprintf(line, sizeof line, "  %s %#" PRIxPTR " (in no loaded object)\n", what, address);
  }
  (void)!write(STDERR_FILENO, line, __builtin_strlen(line));
}

void print_stack_and_die(int sig, siginfo_t* info, void* context) {
  char line[128];
  std::snprintf(line, sizeof line, "\n*** signal %d, fault address %p, stack:\n", sig,
                info->si_addr);
  (void)!write(STDERR_FILENO, line, __builtin_strlen(line));
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  describe("pc", static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]));
  const auto* sp = reinterpret_cast<const std::uintptr_t*>(uc->uc_mcontext.gregs[REG_RSP]);
  for (int i = 0; i < 48; ++i) {
    Dl_info code{};
    if (dladdr(reinterpret_cast<void*>(sp[i]), &code) != 0 && code.dli_fname != nullptr) {
      describe("stack word", sp[i]);
    }
  }
#else
  (void)context;
#endif
  signal(sig, SIG_DFL);
  raise(sig);
}

const bool installed = [] {
  // backtrace() loads libgcc on first use: not inside the handler.
  void* warm[1];
  backtrace(warm, 1);
  struct sigaction action {};
  action.sa_sigaction = print_stack_and_die;
  action.sa_flags = SA_SIGINFO;
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS}) sigaction(sig, &action, nullptr);
  return true;
}();

}  // namespace
