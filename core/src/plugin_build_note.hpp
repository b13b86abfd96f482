// Reads a plugin's build facts from its file (the ELF note that
// REGIONTRACE_SINK_PLUGIN writes, abi.hpp) without loading it: none of the
// plugin's code runs, so a plugin of another ABI is refused, and a file
// that is no plugin of ours is looked at, without its constructors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace regiontrace::detail {

struct BuildNote {
  std::uint32_t abi_version = 0;
  std::string sdk_version;
  std::string compiler;
  std::string stdlib;
  int stdlib_kind = 0;
  int cxx11_abi = -1;
  std::string text;  // "ABI 8, SDK 1.4.0, GCC 12.2.0, ..." as the loader's messages say it
};

struct FileBuildFacts {
  std::optional<BuildNote> note;  // absent: an SDK before ABI 7, or no plugin of ours
  // Dynamic symbols of an older SDK's plugin, for the message when there is no note.
  bool exports_build_info = false;
  bool exports_abi_version = false;
  std::string error;  // not an ELF shared object this process can read
};

FileBuildFacts read_build_facts(const std::string& path);

}  // namespace regiontrace::detail
