#include "injection_path.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace regiontrace::nvtx_record {
namespace {

namespace fs = std::filesystem;

fs::path own_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

std::string find_injection(const std::string& requested) {
  std::vector<fs::path> candidates;
  if (!requested.empty()) {
    candidates.push_back(requested);
  } else {
    if (const char* env = std::getenv("NVTX_RECORD_INJECTION"); env && *env) {
      candidates.push_back(env);
    }
    const fs::path dir = own_directory();
    if (!dir.empty()) candidates.push_back(dir / REGIONTRACE_NVTX_INJECTION_RELATIVE);
    candidates.push_back(REGIONTRACE_NVTX_INJECTION_BUILD_PATH);
  }
  std::string tried;
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return fs::absolute(p, ec).lexically_normal().string();
    tried += "\n  " + p.string();
  }
  throw std::runtime_error("the NVTX recording library (libregiontrace_nvtx_record.so) is not in" +
                           tried + "\npoint --injection or NVTX_RECORD_INJECTION at it");
}

}  // namespace regiontrace::nvtx_record
