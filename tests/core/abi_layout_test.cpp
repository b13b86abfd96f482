// The layout of every type that crosses the plugin boundary, pinned.
//
// If one of these fails, you changed what a plugin built against the SDK
// sees: that is an ABI change. Bump REGIONTRACE_SDK_ABI_VERSION_CURRENT in
// plugins/sdk/include/regiontrace/sdk/abi.hpp (the loader then refuses
// plugins built before the change) and update the numbers here, in the same
// commit. The numbers are for LP64 targets with libstdc++'s C++11 ABI (the
// platform regiontrace ships for); elsewhere only the portable checks run.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <typeinfo>

#include "regiontrace/plugin.hpp"

namespace regiontrace {
inline namespace REGIONTRACE_SDK_ABI_NAMESPACE {

// Befriended by SinkContext: its inline getters read private members, so
// their offsets are part of the ABI too.
struct SinkContextLayout {
  static constexpr std::size_t sink_name = offsetof(SinkContext, sink_name_);
  static constexpr std::size_t output_dir = offsetof(SinkContext, output_dir_);
  static constexpr std::size_t rank = offsetof(SinkContext, rank_);
  static constexpr std::size_t local_rank = offsetof(SinkContext, local_rank_);
  static constexpr std::size_t world_size = offsetof(SinkContext, world_size_);
  static constexpr std::size_t session = offsetof(SinkContext, session_);
  static constexpr std::size_t pid = offsetof(SinkContext, pid_);
  static constexpr std::size_t host = offsetof(SinkContext, host_);
  static constexpr std::size_t values = offsetof(SinkContext, values_);
};

}  // namespace REGIONTRACE_SDK_ABI_NAMESPACE
}  // namespace regiontrace

namespace regiontrace::test {
namespace {

#define RT_EXPECT_LAYOUT(Type, size, align)                      \
  static_assert(sizeof(Type) == (size), #Type ": size changed"); \
  static_assert(alignof(Type) == (align), #Type ": alignment changed")
#define RT_EXPECT_OFFSET(Type, member, offset) \
  static_assert(offsetof(Type, member) == (offset), #Type "::" #member ": offset changed")

// Portable: the ABI version these numbers belong to, the plain-C build info
// (read by hosts of every version) and the enum values sinks are built with.
static_assert(kAbiVersion == 8, "a new ABI version: re-check every layout below");
RT_EXPECT_OFFSET(regiontrace_build_info, size, 0);
RT_EXPECT_OFFSET(regiontrace_build_info, abi_version, 4);
static_assert(kInterestRegions == 1u << 0 && kInterestMarks == 1u << 1 &&
              kInterestSteps == 1u << 2 && kInterestTensors == 1u << 3 &&
              kInterestOpOutputs == 1u << 4 && kInterestSnapshots == 1u << 5 &&
              kInterestTimestamps == 1u << 6 && kWritesNoFiles == 1u << 7 &&
              kInterestSpans == 1u << 8);
static_assert(kInterestDefault == (kInterestRegions | kInterestMarks | kInterestSteps |
                                   kInterestSnapshots | kInterestTimestamps));
static_assert(static_cast<int>(LogLevel::kDebug) == 0 && static_cast<int>(LogLevel::kOff) == 4);
static_assert(sizeof(LogLevel) == sizeof(int));
static_assert(static_cast<int>(KeyType::kBool) == 0 && static_cast<int>(KeyType::kIntList) == 7);
static_assert(sizeof(KeyType) == sizeof(int));
static_assert(static_cast<int>(TensorOrigin::kObserved) == 0 &&
              static_cast<int>(TensorOrigin::kOpOutput) == 1);
static_assert(sizeof(TensorOrigin) == 1);
static_assert(sizeof(RegionId) == 4);
static_assert(kNoStep == std::numeric_limits<std::int64_t>::min());

#if defined(__LP64__) && defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI
constexpr bool kLayoutPinned = true;

RT_EXPECT_LAYOUT(regiontrace_build_info, 40, 8);
RT_EXPECT_OFFSET(regiontrace_build_info, sdk_version, 8);
RT_EXPECT_OFFSET(regiontrace_build_info, compiler, 16);
RT_EXPECT_OFFSET(regiontrace_build_info, stdlib, 24);
RT_EXPECT_OFFSET(regiontrace_build_info, stdlib_kind, 32);
RT_EXPECT_OFFSET(regiontrace_build_info, cxx11_abi, 36);

RT_EXPECT_LAYOUT(RegionInfo, 48, 8);
RT_EXPECT_OFFSET(RegionInfo, id, 0);
RT_EXPECT_OFFSET(RegionInfo, name, 8);
RT_EXPECT_OFFSET(RegionInfo, description, 24);
RT_EXPECT_OFFSET(RegionInfo, color, 40);

RT_EXPECT_LAYOUT(RegionEvent, 88, 8);
RT_EXPECT_OFFSET(RegionEvent, id, 0);
RT_EXPECT_OFFSET(RegionEvent, name, 8);
RT_EXPECT_OFFSET(RegionEvent, path, 24);
RT_EXPECT_OFFSET(RegionEvent, depth, 40);
RT_EXPECT_OFFSET(RegionEvent, step, 48);
RT_EXPECT_OFFSET(RegionEvent, thread_id, 56);
RT_EXPECT_OFFSET(RegionEvent, time_ns, 64);
RT_EXPECT_OFFSET(RegionEvent, unwinding, 72);
RT_EXPECT_OFFSET(RegionEvent, begin_time_ns, 80);

RT_EXPECT_LAYOUT(StepEvent, 32, 8);
RT_EXPECT_OFFSET(StepEvent, step, 0);
RT_EXPECT_OFFSET(StepEvent, previous, 8);
RT_EXPECT_OFFSET(StepEvent, thread_id, 16);
RT_EXPECT_OFFSET(StepEvent, time_ns, 24);

RT_EXPECT_LAYOUT(MarkEvent, 56, 8);
RT_EXPECT_OFFSET(MarkEvent, name, 0);
RT_EXPECT_OFFSET(MarkEvent, path, 16);
RT_EXPECT_OFFSET(MarkEvent, step, 32);
RT_EXPECT_OFFSET(MarkEvent, thread_id, 40);
RT_EXPECT_OFFSET(MarkEvent, time_ns, 48);

RT_EXPECT_LAYOUT(SnapshotRequest, 56, 8);
RT_EXPECT_OFFSET(SnapshotRequest, reason, 0);
RT_EXPECT_OFFSET(SnapshotRequest, path, 16);
RT_EXPECT_OFFSET(SnapshotRequest, step, 32);
RT_EXPECT_OFFSET(SnapshotRequest, thread_id, 40);
RT_EXPECT_OFFSET(SnapshotRequest, time_ns, 48);

RT_EXPECT_LAYOUT(TensorEvent, 112, 8);
RT_EXPECT_OFFSET(TensorEvent, label, 0);
RT_EXPECT_OFFSET(TensorEvent, module, 16);
RT_EXPECT_OFFSET(TensorEvent, path, 32);
RT_EXPECT_OFFSET(TensorEvent, op, 48);
RT_EXPECT_OFFSET(TensorEvent, depth, 64);
RT_EXPECT_OFFSET(TensorEvent, step, 72);
RT_EXPECT_OFFSET(TensorEvent, thread_id, 80);
RT_EXPECT_OFFSET(TensorEvent, time_ns, 88);
RT_EXPECT_OFFSET(TensorEvent, origin, 96);
RT_EXPECT_OFFSET(TensorEvent, tensor, 104);

RT_EXPECT_LAYOUT(HostApi, 32, 8);
RT_EXPECT_OFFSET(HostApi, log, 0);
RT_EXPECT_OFFSET(HostApi, now_ns, 8);
RT_EXPECT_OFFSET(HostApi, current_step, 16);
RT_EXPECT_OFFSET(HostApi, stop_ns, 24);

RT_EXPECT_LAYOUT(PluginDescriptor, 24, 8);
RT_EXPECT_OFFSET(PluginDescriptor, sink_name, 0);
RT_EXPECT_OFFSET(PluginDescriptor, schema, 8);
RT_EXPECT_OFFSET(PluginDescriptor, create, 16);

RT_EXPECT_LAYOUT(KeySpec, 168, 8);
RT_EXPECT_OFFSET(KeySpec, name, 0);
RT_EXPECT_OFFSET(KeySpec, type, 32);
RT_EXPECT_OFFSET(KeySpec, default_value, 40);
RT_EXPECT_OFFSET(KeySpec, has_default, 72);
RT_EXPECT_OFFSET(KeySpec, description, 80);
RT_EXPECT_OFFSET(KeySpec, choices, 112);
RT_EXPECT_OFFSET(KeySpec, min, 136);
RT_EXPECT_OFFSET(KeySpec, max, 144);
RT_EXPECT_OFFSET(KeySpec, absolute_only, 152);
RT_EXPECT_OFFSET(KeySpec, value_check, 160);
RT_EXPECT_LAYOUT(SinkSchema, 24, 8);

RT_EXPECT_LAYOUT(SinkContext, 144, 8);
static_assert(SinkContextLayout::sink_name == 0);
static_assert(SinkContextLayout::output_dir == 32);
static_assert(SinkContextLayout::rank == 64);
static_assert(SinkContextLayout::local_rank == 68);
static_assert(SinkContextLayout::world_size == 72);
static_assert(SinkContextLayout::session == 76);
static_assert(SinkContextLayout::pid == 80);
static_assert(SinkContextLayout::host == 88);
static_assert(SinkContextLayout::values == 96);

RT_EXPECT_LAYOUT(Span, 32, 8);
RT_EXPECT_OFFSET(Span, depth, 4);
RT_EXPECT_OFFSET(Span, unwinding, 6);
RT_EXPECT_OFFSET(Span, open, 7);
RT_EXPECT_OFFSET(Span, step, 8);
RT_EXPECT_OFFSET(Span, begin_ns, 16);
RT_EXPECT_OFFSET(Span, end_ns, 24);
RT_EXPECT_LAYOUT(SpanBatch, 40, 8);
RT_EXPECT_OFFSET(SpanBatch, last, 32);
RT_EXPECT_OFFSET(SpanBatch, dropped, 36);
RT_EXPECT_OFFSET(SpanBatch, os_tid, 8);
RT_EXPECT_OFFSET(SpanBatch, spans, 16);
RT_EXPECT_OFFSET(SpanBatch, count, 24);

RT_EXPECT_LAYOUT(Sink, 8, 8);  // the vtable pointer only
#else
constexpr bool kLayoutPinned = false;
#endif

TEST(AbiLayout, LayoutIsPinnedOnThisPlatform) {
  if (!kLayoutPinned) GTEST_SKIP() << "layouts are pinned for LP64 libstdc++ (C++11 ABI) only";
  SUCCEED();
}

// The Itanium C++ ABI on x86-64 (GCC, Clang) represents a pointer to a
// virtual member function as 1 + its byte offset in the vtable: the order of
// Sink's virtual functions is checked here, since no static_assert sees it.
template <typename Fn>
std::ptrdiff_t slot_of(Fn fn) {
  std::ptrdiff_t raw[2];
  static_assert(sizeof(fn) == sizeof(raw));
  std::memcpy(raw, &fn, sizeof(raw));
  EXPECT_EQ(raw[0] & 1, 1) << "not a virtual function";
  return (raw[0] - 1) / static_cast<std::ptrdiff_t>(sizeof(void*));
}

TEST(AbiLayout, SinkVirtualFunctionsKeepTheirVtableSlots) {
#if defined(__GXX_ABI_VERSION) && defined(__x86_64__)
  // Slots 0 and 1: the destructors (complete, deleting).
  EXPECT_EQ(slot_of(&Sink::interests), 2);
  EXPECT_EQ(slot_of(&Sink::on_region_routed), 3);
  EXPECT_EQ(slot_of(&Sink::on_region_begin), 4);
  EXPECT_EQ(slot_of(&Sink::on_region_end), 5);
  EXPECT_EQ(slot_of(&Sink::on_step), 6);
  EXPECT_EQ(slot_of(&Sink::on_mark), 7);
  EXPECT_EQ(slot_of(&Sink::on_tensor), 8);
  EXPECT_EQ(slot_of(&Sink::on_snapshot_request), 9);
  EXPECT_EQ(slot_of(&Sink::on_spans), 10);
  EXPECT_EQ(slot_of(&Sink::flush), 11);
  EXPECT_EQ(slot_of(&Sink::close), 12);
#else
  GTEST_SKIP() << "vtable slots are checked under the Itanium C++ ABI only";
#endif
}

TEST(AbiLayout, BoundaryTypesLiveInTheVersionedNamespace) {
  // The mangled name carries the ABI version: two SDK versions in one
  // binary are two different types, not one type with two layouts.
  const std::string sink = typeid(Sink).name();
  const std::string context = typeid(SinkContext).name();
  const std::string event = typeid(RegionEvent).name();
  const std::string ns = "abi_v" + std::to_string(kAbiVersion);
  EXPECT_NE(sink.find(ns), std::string::npos) << sink;
  EXPECT_NE(context.find(ns), std::string::npos) << context;
  EXPECT_NE(event.find(ns), std::string::npos) << event;
}

}  // namespace
}  // namespace regiontrace::test
