// Where the NVTX recording injection is: --injection, else
// $NVTX_RECORD_INJECTION, else next to this program as installed
// (<bindir>/../<libdir>/regiontrace), else where the build tree put it.
#pragma once

#include <string>

namespace regiontrace::nvtx_record {

// Throws std::runtime_error listing the places looked at.
std::string find_injection(const std::string& requested);

}  // namespace regiontrace::nvtx_record
