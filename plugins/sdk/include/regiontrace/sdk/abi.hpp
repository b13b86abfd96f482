// The plugin ABI: what a sink built against this SDK and the host that loads
// it must agree on, and how a mismatch is caught before it can crash.
//
// The rule (docs/writing-a-sink.md, "The ABI rule"):
//  - Every type, enum value, virtual function and documented meaning in
//    plugins/sdk that crosses the plugin boundary (Sink, the events,
//    RegionInfo, SinkContext, HostApi, KeySpec, PluginDescriptor) lives in
//    the inline namespace regiontrace::abi_v<N>. Code spells them
//    regiontrace::Sink as before; the linker and the demangler see
//    regiontrace::abi_v8::Sink, so two SDK versions mixed in one binary fail to
//    link instead of sharing a vtable layout they disagree on.
//  - Changing one of them (a field, a virtual, an enum value, what time_ns
//    means) bumps REGIONTRACE_SDK_ABI_VERSION_CURRENT and updates the layout
//    test (tests/core/abi_layout_test.cpp), which fails on any change to a
//    size or offset made without the bump.
//  - Every plugin exports regiontrace_plugin_build_info() (plain C, written by
//    REGIONTRACE_SINK_PLUGIN): the ABI version, the SDK version, the compiler
//    and the C++ standard library it was built with. The loader reads it
//    before anything else and refuses a plugin of another ABI version or
//    another standard-library ABI (std::string, std::vector and std::map
//    cross the boundary), naming the file and both builds.
//
// ABI versions: 1 = the first SDK. 2 = kInterestTimestamps (time_ns is 0
// unless some sink asks for it), the build-info entry point, the inline
// namespace. 3 = KeySpec::value_check (sinks' own checks of a value, run by
// `regiontrace check` too). 4 = end events carry begin_time_ns. 5 =
// kInterestSpans, Sink::on_spans, Span and SpanBatch. 6 = SpanBatch::dropped.
// 7 = SinkContext::session (output_path names a later session's files
// apart), HostApi::stop_ns. 8 = kInterestPeriodicFlush (the host's flush
// thread calls flush(), and hands flight recorders provisional open spans).
#pragma once

#include <cstdint>

#define REGIONTRACE_SDK_VERSION_MAJOR 1
#define REGIONTRACE_SDK_VERSION_MINOR 4
#define REGIONTRACE_SDK_VERSION_PATCH 0
#define REGIONTRACE_SDK_VERSION_STRING "1.4.0"

#define REGIONTRACE_SDK_ABI_VERSION_CURRENT 8

// For the loader's own tests only: builds a plugin that claims another ABI
// version (and puts its types in that version's namespace), so that the
// refusal can be tested with a real plugin. Never set it for a real sink.
#if defined(REGIONTRACE_SDK_ABI_VERSION_OVERRIDE)
#define REGIONTRACE_SDK_ABI_VERSION REGIONTRACE_SDK_ABI_VERSION_OVERRIDE
#else
#define REGIONTRACE_SDK_ABI_VERSION REGIONTRACE_SDK_ABI_VERSION_CURRENT
#endif

#define REGIONTRACE_SDK_STRINGIFY_INNER(x) #x
#define REGIONTRACE_SDK_STRINGIFY(x) REGIONTRACE_SDK_STRINGIFY_INNER(x)
#define REGIONTRACE_SDK_ABI_NAMESPACE_INNER(v) abi_v##v
#define REGIONTRACE_SDK_ABI_NAMESPACE_OF(v) REGIONTRACE_SDK_ABI_NAMESPACE_INNER(v)
// abi_v<N>: the inline namespace of the boundary types.
#define REGIONTRACE_SDK_ABI_NAMESPACE REGIONTRACE_SDK_ABI_NAMESPACE_OF(REGIONTRACE_SDK_ABI_VERSION)
#define REGIONTRACE_SDK_BEGIN_NAMESPACE \
  namespace regiontrace {               \
  inline namespace REGIONTRACE_SDK_ABI_NAMESPACE {
#define REGIONTRACE_SDK_END_NAMESPACE \
  }                                   \
  }

#if defined(_WIN32)
#define REGIONTRACE_PLUGIN_EXPORT __declspec(dllexport)
#else
#define REGIONTRACE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

// How the including translation unit is built: the compiler and its C++
// standard library.
#if defined(__clang__)
#define REGIONTRACE_SDK_COMPILER                                                     \
  "Clang " REGIONTRACE_SDK_STRINGIFY(__clang_major__) "." REGIONTRACE_SDK_STRINGIFY( \
      __clang_minor__) "." REGIONTRACE_SDK_STRINGIFY(__clang_patchlevel__)
#elif defined(__GNUC__)
#define REGIONTRACE_SDK_COMPILER                                            \
  "GCC " REGIONTRACE_SDK_STRINGIFY(__GNUC__) "." REGIONTRACE_SDK_STRINGIFY( \
      __GNUC_MINOR__) "." REGIONTRACE_SDK_STRINGIFY(__GNUC_PATCHLEVEL__)
#elif defined(_MSC_VER)
#define REGIONTRACE_SDK_COMPILER "MSVC " REGIONTRACE_SDK_STRINGIFY(_MSC_VER)
#else
#define REGIONTRACE_SDK_COMPILER "unknown compiler"
#endif

#if defined(_LIBCPP_VERSION)
#define REGIONTRACE_SDK_STDLIB_KIND 2
#define REGIONTRACE_SDK_STDLIB "libc++ " REGIONTRACE_SDK_STRINGIFY(_LIBCPP_VERSION)
#elif defined(__GLIBCXX__)
#define REGIONTRACE_SDK_STDLIB_KIND 1
#if defined(_GLIBCXX_RELEASE)
#define REGIONTRACE_SDK_STDLIB                                                             \
  "libstdc++ " REGIONTRACE_SDK_STRINGIFY(_GLIBCXX_RELEASE) " (" REGIONTRACE_SDK_STRINGIFY( \
      __GLIBCXX__) ")"
#else
#define REGIONTRACE_SDK_STDLIB "libstdc++ (" REGIONTRACE_SDK_STRINGIFY(__GLIBCXX__) ")"
#endif
#elif defined(_MSC_VER)
#define REGIONTRACE_SDK_STDLIB_KIND 3
#define REGIONTRACE_SDK_STDLIB "MSVC STL"
#else
#define REGIONTRACE_SDK_STDLIB_KIND 0
#define REGIONTRACE_SDK_STDLIB "unknown standard library"
#endif

#if defined(_GLIBCXX_USE_CXX11_ABI)
#define REGIONTRACE_SDK_CXX11_ABI _GLIBCXX_USE_CXX11_ABI
#else
#define REGIONTRACE_SDK_CXX11_ABI (-1)
#endif

extern "C" {

// What regiontrace_plugin_build_info() returns. Plain C and outside every
// versioned namespace: the one thing a host of any version can read from a
// plugin of any version. Fields are only ever appended; `size` says how many
// the plugin knows.
struct regiontrace_build_info {
  std::uint32_t size;         // sizeof(regiontrace_build_info) in the plugin's SDK
  std::uint32_t abi_version;  // REGIONTRACE_SDK_ABI_VERSION
  const char* sdk_version;    // "1.1.0"
  const char* compiler;       // "GCC 12.2.0", "Clang 15.0.7"
  const char* stdlib;         // "libstdc++ 12 (20220819)", "libc++ 15000"
  std::int32_t stdlib_kind;   // 0 unknown, 1 libstdc++, 2 libc++, 3 MSVC STL
  std::int32_t cxx11_abi;     // _GLIBCXX_USE_CXX11_ABI (0 or 1); -1 without libstdc++
};

}  // extern "C"

// The same facts as text in an ELF note (section .note.regiontrace, note
// name "regiontrace", type 1), one "key=value" per line: a host reads them
// from the file before it loads the plugin, so that a plugin of another
// ABI is refused, and `regiontrace check` inspects one, without any of its
// code (static constructors included) running. Since ABI 7.
#define REGIONTRACE_SDK_BUILD_NOTE_TEXT \
  "abi=" REGIONTRACE_SDK_STRINGIFY(REGIONTRACE_SDK_ABI_VERSION) "\n"             \
  "sdk=" REGIONTRACE_SDK_VERSION_STRING "\n"                                     \
  "compiler=" REGIONTRACE_SDK_COMPILER "\n"                                      \
  "stdlib=" REGIONTRACE_SDK_STDLIB "\n"                                          \
  "stdlib_kind=" REGIONTRACE_SDK_STRINGIFY(REGIONTRACE_SDK_STDLIB_KIND) "\n"     \
  "cxx11_abi=" REGIONTRACE_SDK_STRINGIFY(REGIONTRACE_SDK_CXX11_ABI) "\n"
#define REGIONTRACE_SDK_BUILD_NOTE_SECTION ".note.regiontrace"

struct regiontrace_build_note {
  std::uint32_t name_size;  // 12
  std::uint32_t desc_size;  // sizeof(desc)
  std::uint32_t type;       // 1
  char name[12];            // "regiontrace"
  char desc[(sizeof(REGIONTRACE_SDK_BUILD_NOTE_TEXT) + 3) / 4 * 4];
};

REGIONTRACE_SDK_BEGIN_NAMESPACE

inline constexpr int kAbiVersion = REGIONTRACE_SDK_ABI_VERSION;

// The build facts of the translation unit that calls it (the plugin's, from
// REGIONTRACE_SINK_PLUGIN; the host's, from the loader).
inline constexpr regiontrace_build_info kBuildInfo = {
    sizeof(regiontrace_build_info), static_cast<std::uint32_t>(REGIONTRACE_SDK_ABI_VERSION),
    REGIONTRACE_SDK_VERSION_STRING, REGIONTRACE_SDK_COMPILER,
    REGIONTRACE_SDK_STDLIB,         REGIONTRACE_SDK_STDLIB_KIND,
    REGIONTRACE_SDK_CXX11_ABI,
};

REGIONTRACE_SDK_END_NAMESPACE
