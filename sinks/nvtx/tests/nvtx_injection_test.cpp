// The recording injection itself: what it writes for the NVTX calls other
// programs make (nvtx3 C++ and the C API), since the sink's tests and
// regiontrace-nvtx-record both trust it.
#include <gtest/gtest.h>
#include <nvtx3/nvtx3.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "nvtx_records.hpp"
#include "test_support.hpp"

namespace regiontrace::test {
namespace {

namespace fs = std::filesystem;
using nvtx::Calls;
using nvtx::calls_in_domain;
using nvtx::of_kind;

struct injection_test_domain {
  static constexpr char const* name{"t_injection_cpp"};
};

TEST(NvtxInjection, RecordsNvtx3ScopedRangesMarksAndRegisteredStrings) {
  using domain = injection_test_domain;
  {
    nvtx3::scoped_range_in<domain> outer{"outer"};
    const nvtx3::registered_string_in<domain> inner_name{"inner"};
    nvtx3::scoped_range_in<domain> inner{nvtx3::event_attributes{
        inner_name, nvtx3::rgb{0x11, 0x22, 0x33}, nvtx3::payload{std::int64_t{42}}}};
    nvtx3::mark_in<domain>(nvtx3::event_attributes{"point", nvtx3::payload{2.5}});
  }
  const Calls calls = calls_in_domain("t_injection_cpp");
  ASSERT_EQ(calls.size(), 7u);
  EXPECT_EQ(calls[0]["kind"], "domain_create");
  EXPECT_EQ(calls[1]["kind"], "push");
  EXPECT_EQ(calls[1]["message_type"], "ascii");
  EXPECT_EQ(calls[1]["message"], "outer");
  EXPECT_EQ(calls[1]["depth"], 0);
  EXPECT_EQ(calls[2]["kind"], "register_string");
  EXPECT_EQ(calls[2]["text"], "inner");
  EXPECT_EQ(calls[3]["kind"], "push");
  EXPECT_EQ(calls[3]["message_type"], "registered");
  EXPECT_EQ(calls[3]["string_id"], calls[2]["string_id"]);
  EXPECT_EQ(calls[3]["message"], "inner");
  EXPECT_EQ(calls[3]["color"], "#FF112233");
  EXPECT_EQ(calls[3]["payload_type"], "int64");
  EXPECT_EQ(calls[3]["payload"], 42);
  EXPECT_EQ(calls[3]["depth"], 1);
  EXPECT_EQ(calls[4]["kind"], "mark");
  EXPECT_EQ(calls[4]["payload_type"], "double");
  EXPECT_EQ(calls[4]["payload"], 2.5);
  EXPECT_EQ(calls[5]["kind"], "pop");
  EXPECT_EQ(calls[5]["depth"], 1);
  EXPECT_EQ(calls[6]["kind"], "pop");
  EXPECT_EQ(calls[6]["depth"], 0);
  for (const auto& c : calls) EXPECT_EQ(c["tid"], calls[0]["tid"]);
  EXPECT_LE(calls[1]["t"].get<long>(), calls[6]["t"].get<long>());
}

TEST(NvtxInjection, RecordsTheCApiInTheDefaultDomain) {
  nvtxNameOsThreadA(static_cast<std::uint32_t>(gettid()), "injection-test-main");
  const nvtxRangeId_t id = nvtxRangeStartA("t_injection_start_end");
  nvtxRangePushA("t_injection_push");
  nvtxMarkA("t_injection_mark");
  EXPECT_EQ(nvtxRangePop(), 0);
  nvtxRangeEnd(id);
  auto text_of = [](const nlohmann::json& c) -> std::string {
    for (const char* key : {"message", "text"}) {
      if (c.contains(key) && c[key].is_string()) return c[key];
    }
    return "";
  };
  Calls ours;
  for (const auto& c : calls_in_domain("")) {
    const std::string m = text_of(c);
    if (m.rfind("t_injection", 0) == 0 || m == "injection-test-main" ||
        (c["kind"] == "range_end" && c["range_id"] == id) ||
        (c["kind"] == "pop" && c["call"] == "nvtxRangePop")) {
      ours.push_back(c);
    }
  }
  ASSERT_EQ(ours.size(), 6u);
  EXPECT_EQ(ours[0]["kind"], "name_thread");
  EXPECT_EQ(ours[0]["thread"], gettid());
  EXPECT_EQ(ours[1]["call"], "nvtxRangeStartA");
  EXPECT_EQ(ours[1]["range_id"], id);
  EXPECT_EQ(ours[2]["call"], "nvtxRangePushA");
  EXPECT_EQ(ours[3]["call"], "nvtxMarkA");
  EXPECT_EQ(ours[4]["call"], "nvtxRangePop");
  EXPECT_EQ(ours[5]["call"], "nvtxRangeEnd");
}

TEST(NvtxInjection, PopWithNothingOpenIsRecordedAsMinusOne) {
  nvtxDomainHandle_t d = nvtxDomainCreateA("t_injection_unbalanced");
  EXPECT_LT(nvtxDomainRangePop(d), 0);
  const Calls calls = of_kind(calls_in_domain("t_injection_unbalanced"), "pop");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["depth"], -1);
}

TEST(NvtxInjection, BuffersOfManyThreadsAndManyCallsAreAllWritten) {
  nvtxDomainHandle_t d = nvtxDomainCreateA("t_injection_volume");
  nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "volume");
  auto body = [d, s] {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    for (int i = 0; i < 3000; ++i) {  // several buffer refills per thread
      nvtxDomainRangePushEx(d, &a);
      nvtxDomainRangePop(d);
    }
  };
  std::thread t1(body), t2(body);
  body();
  t1.join();
  t2.join();
  const Calls calls = calls_in_domain("t_injection_volume");
  EXPECT_EQ(of_kind(calls, "push").size(), 9000u);
  EXPECT_EQ(of_kind(calls, "pop").size(), 9000u);
  for (std::size_t i = 1; i < calls.size(); ++i) {
    ASSERT_LT(calls[i - 1]["seq"].get<std::uint64_t>(), calls[i]["seq"].get<std::uint64_t>());
  }
}

TEST(NvtxInjection, AForkedChildWritesItsOwnFile) {
  nvtxDomainHandle_t d = nvtxDomainCreateA("t_injection_fork");
  nvtxDomainMarkEx(d, nullptr);
  const ChildResult child = run_in_child([d] {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "in_child";
    nvtxDomainMarkEx(d, &a);
    return 0;  // exit() writes the child's records
  });
  ASSERT_TRUE(child.exited);
  const Calls parent = of_kind(calls_in_domain("t_injection_fork"), "mark");
  ASSERT_EQ(parent.size(), 1u) << "the child's mark is not the parent's";
  EXPECT_EQ(parent[0]["message_type"], "none");

  // NVTX_RECORD_FILE names the pid (ctest sets `%p`): the child's file sits
  // beside ours, named the same but for the pid, and holds the child's calls.
  const fs::path ours = nvtx::record_file();
  const std::string name = ours.filename().string();
  const std::string pid = std::to_string(getpid());
  const std::size_t at = name.find(pid);
  ASSERT_NE(at, std::string::npos) << "NVTX_RECORD_FILE should contain %p";
  std::string child_file;
  for (const auto& entry : fs::directory_iterator(ours.parent_path())) {
    const std::string other = entry.path().filename().string();
    if (other == name || !entry.is_regular_file() || other.size() <= name.size() - pid.size() ||
        other.compare(0, at, name, 0, at) != 0 ||
        other.compare(other.size() - (name.size() - at - pid.size()), std::string::npos, name,
                      at + pid.size(), std::string::npos) != 0) {
      continue;
    }
    for (const auto& c : read_jsonl(entry.path().string())) {
      if (c["domain"] == "t_injection_fork" && c["kind"] == "mark") {
        EXPECT_NE(c["pid"], getpid());
        EXPECT_EQ(c["message"], "in_child");
        child_file = entry.path().string();
      }
    }
  }
  EXPECT_FALSE(child_file.empty()) << "no record file with the child's mark";
  if (!child_file.empty()) fs::remove(child_file);
}

}  // namespace
}  // namespace regiontrace::test
