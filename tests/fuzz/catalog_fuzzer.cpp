// libFuzzer target: a region catalog (`catalogs:` in a profile). Any input
// either declares its regions or throws regiontrace::Error naming the line.
// The registry is the process's own (its constructor is private): regions
// accumulate over the run, as catalogs loaded one after another do.
#include <cstddef>
#include <cstdint>
#include <string>

#include "region_registry.hpp"
#include "regiontrace/regiontrace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    regiontrace::detail::load_region_catalog(yaml, "fuzz_catalog.yaml",
                                             regiontrace::detail::RegionRegistry::instance());
  } catch (const regiontrace::Error&) {
  }
  return 0;
}
