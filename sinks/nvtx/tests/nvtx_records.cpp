#include "nvtx_records.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "test_support.hpp"

namespace regiontrace::test::nvtx {
namespace {

void* injection_handle() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (path == nullptr) return nullptr;
  return dlopen(path, RTLD_NOW | RTLD_NOLOAD);
}

template <typename Fn>
Fn injection_function(const char* name) {
  void* handle = injection_handle();
  if (handle == nullptr) {
    throw std::runtime_error(
        "the NVTX recording injection is not loaded in this process; run the tests through "
        "ctest (it sets NVTX_INJECTION64_PATH) and make sure some NVTX call ran");
  }
  auto fn = reinterpret_cast<Fn>(dlsym(handle, name));
  dlclose(handle);  // drops only the reference RTLD_NOLOAD took
  if (fn == nullptr) {
    throw std::runtime_error(std::string("not the recording injection: no ") + name);
  }
  return fn;
}

// Removes this process's record file when the test program ends.
class RemoveRecordFile : public ::testing::Environment {
 public:
  void TearDown() override {
    if (injection_loaded() && std::getenv("REGIONTRACE_KEEP_TEST_FILES") == nullptr) {
      std::remove(record_file().c_str());
    }
  }
};
[[maybe_unused]] ::testing::Environment* const g_remove_record_file =
    ::testing::AddGlobalTestEnvironment(new RemoveRecordFile());

}  // namespace

bool injection_loaded() {
  return injection_handle() != nullptr;
}

std::string record_file() {
  return injection_function<const char* (*)()>("regiontrace_nvtx_record_path")();
}

Calls recorded_calls() {
  injection_function<void (*)()>("regiontrace_nvtx_record_flush")();
  Calls calls;
  const long pid = static_cast<long>(getpid());
  for (nlohmann::json& c : read_jsonl(record_file())) {
    if (c.at("pid").get<long>() == pid) calls.push_back(std::move(c));
  }
  std::sort(calls.begin(), calls.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.at("seq").get<std::uint64_t>() < b.at("seq").get<std::uint64_t>();
  });
  return calls;
}

Calls calls_in_domain(const std::string& domain) {
  Calls out;
  for (nlohmann::json& c : recorded_calls()) {
    if (c.at("domain") == domain) out.push_back(std::move(c));
  }
  return out;
}

Calls of_kind(const Calls& calls, const std::string& kind) {
  Calls out;
  for (const nlohmann::json& c : calls) {
    if (c.at("kind") == kind) out.push_back(c);
  }
  return out;
}

Calls ranges(const Calls& calls) {
  Calls out;
  for (const nlohmann::json& c : calls) {
    if (c.at("kind") == "push" || c.at("kind") == "pop") out.push_back(c);
  }
  return out;
}

std::string registered_text(const Calls& calls, const nlohmann::json& call) {
  if (call.at("message_type") != "registered") {
    throw std::runtime_error("call " + call.dump() + " has no registered message");
  }
  for (const nlohmann::json& c : calls) {
    if (c.at("seq").get<std::uint64_t>() >= call.at("seq").get<std::uint64_t>()) break;
    if (c.at("kind") == "register_string" && c.at("string_id") == call.at("string_id")) {
      return c.at("text").get<std::string>();
    }
  }
  throw std::runtime_error("call " + call.dump() + " uses a string handle not registered before");
}

}  // namespace regiontrace::test::nvtx
