// The handles this tool gives out. NVTX declares the structs behind
// nvtxDomainHandle_t, nvtxStringHandle_t and nvtxResourceHandle_t but leaves
// their definition to the tool; these are ours. They are never freed, so a
// record can point at them until it is written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct nvtxDomainRegistration_st {
  std::uint64_t id = 0;  // 1, 2, ... (0 is NVTX's default domain, the null handle)
  std::string name;
  std::string json_name;  // `name` as a JSON string, escaped once, not per record
};

struct nvtxStringRegistration_st {
  std::uint64_t id = 0;  // 1, 2, ... across domains
  const nvtxDomainRegistration_st* domain = nullptr;
  std::string text;
  std::string json_text;  // `text` as a JSON string
};

struct nvtxResourceHandle {
  std::uint64_t id = 0;
};

namespace regiontrace::nvtx_record {

using Domain = nvtxDomainRegistration_st;
using RegisteredString = nvtxStringRegistration_st;

// The same name gives the same handle, as NVTX tools do: a domain is a name.
Domain* domain_named(std::string_view name);
// The same (domain, text) gives the same handle.
RegisteredString* register_string(const Domain* domain, std::string_view text);
nvtxResourceHandle* new_resource();

}  // namespace regiontrace::nvtx_record
