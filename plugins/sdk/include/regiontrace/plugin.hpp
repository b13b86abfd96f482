// regiontrace plugin SDK: write a sink that receives the application's regions.
//
// Why: the application marks its phases once (RT_REGION("inference_denoising"));
// what happens at those marks is chosen per run by loading sinks. A sink is a
// shared library built against this header only (no link to libregiontrace).
//
// The five things you need:
//
//   #include <regiontrace/plugin.hpp>
//
//   class CsvSink : public regiontrace::Sink {
//    public:
//     static regiontrace::SinkSchema schema() {          // 1. declare your keys
//       return {regiontrace::KeySpec::string("separator", ",", "field separator")};
//     }
//     explicit CsvSink(const regiontrace::SinkContext& ctx)   // 2. read them
//         : out_(ctx.output_path("regions", "csv")), sep_(ctx.get_string("separator")) {}
//     void on_region_end(const regiontrace::RegionEvent& e) override { ... }  // 3. react
//     void close() override { ... }                      // 4. finish your files
//   };
//   REGIONTRACE_SINK_PLUGIN(CsvSink, "csv")              // 5. export it
//
// and build it with CMake:
//
//   find_package(RegionTrace REQUIRED)
//   regiontrace_add_sink(csv SOURCES csv_sink.cpp)
//
// It loads when a profile or REGIONTRACE_SINKS names "csv" and its folder is in
// REGIONTRACE_PLUGIN_PATH. Every sink also gets the common keys `enabled`,
// `regions`, `steps`, `ranks` and `output_dir`, applied by the host: a sink
// only sees events it selected.
//
// Advanced: interests() asks for tensors (on_tensor), on_region_routed gives
// per-region facts once, before that region's first event. See sdk/sink.hpp
// for which thread calls what.
//
// ABI: REGIONTRACE_SINK_PLUGIN also exports regiontrace_plugin_build_info()
// (plain C: the SDK's ABI version, the compiler and standard library the
// plugin was built with). The loader reads it first and refuses a plugin of
// another ABI version or standard-library ABI with a message naming both
// builds. See sdk/abi.hpp for the rule.
#pragma once

#include <memory>
#include <type_traits>

#include "regiontrace/sdk/abi.hpp"
#include "regiontrace/sdk/config_schema.hpp"
#include "regiontrace/sdk/events.hpp"
#include "regiontrace/sdk/sink.hpp"
#include "regiontrace/sdk/sink_context.hpp"

REGIONTRACE_SDK_BEGIN_NAMESPACE

// What a plugin exports. Read by the loader only after the build info
// (exported separately, in plain C) matched.
struct PluginDescriptor {
  const char* sink_name;
  SinkSchema (*schema)();
  Sink* (*create)(const SinkContext&);  // may throw: a start-up error naming the sink
};

REGIONTRACE_SDK_END_NAMESPACE

// Compiled into the plugin only; never crosses the boundary.
namespace regiontrace::detail {
template <typename T, typename = void>
struct HasSchema : std::false_type {};
template <typename T>
struct HasSchema<T, std::void_t<decltype(T::schema())>> : std::true_type {};

template <typename T>
SinkSchema schema_of() {
  if constexpr (HasSchema<T>::value) {
    return T::schema();
  } else {
    return {};
  }
}
}  // namespace regiontrace::detail

#define REGIONTRACE_SINK_PLUGIN(ClassName, sink_name_literal)                              \
  static_assert(std::is_base_of_v<::regiontrace::Sink, ClassName>,                         \
                #ClassName " must derive from regiontrace::Sink");                         \
  extern "C" REGIONTRACE_PLUGIN_EXPORT const ::regiontrace_build_info*                     \
  regiontrace_plugin_build_info() {                                                        \
    return &::regiontrace::kBuildInfo;                                                     \
  }                                                                                        \
  /* The same, readable from the file without loading it (abi.hpp). */                     \
  __attribute__((                                                                          \
      section(REGIONTRACE_SDK_BUILD_NOTE_SECTION), used,                                   \
      aligned(4))) static const ::regiontrace_build_note regiontrace_plugin_build_note = { \
      12, sizeof(::regiontrace_build_note::desc), 1, "regiontrace",                        \
      REGIONTRACE_SDK_BUILD_NOTE_TEXT};                                                    \
  /* What hosts before ABI 2 read: they refuse this plugin by its number. */               \
  extern "C" REGIONTRACE_PLUGIN_EXPORT int regiontrace_plugin_abi_version() {              \
    return ::regiontrace::kAbiVersion;                                                     \
  }                                                                                        \
  extern "C" REGIONTRACE_PLUGIN_EXPORT const ::regiontrace::PluginDescriptor*              \
  regiontrace_plugin_descriptor() {                                                        \
    static const ::regiontrace::PluginDescriptor descriptor{                               \
        sink_name_literal, &::regiontrace::detail::schema_of<ClassName>,                   \
        [](const ::regiontrace::SinkContext& ctx) -> ::regiontrace::Sink* {                \
          return new ClassName(ctx);                                                       \
        }};                                                                                \
    return &descriptor;                                                                    \
  }
