// Reading what the NVTX recording injection saw in this process, for tests.
// The test programs run with NVTX_INJECTION64_PATH pointing at it (set by
// ctest) and NVTX_RECORD_FILE naming a file per process.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace regiontrace::test::nvtx {

using Calls = std::vector<nlohmann::json>;

// True when the injection is loaded in this process (some NVTX call ran).
bool injection_loaded();
// The file the injection writes for this process (it is removed when the
// test program ends).
std::string record_file();
// Every call recorded so far in this process, in `seq` order (flushes the
// injection's buffers first).
Calls recorded_calls();
// The calls in one domain (by name), in order.
Calls calls_in_domain(const std::string& domain);
Calls of_kind(const Calls& calls, const std::string& kind);
// Only push and pop calls.
Calls ranges(const Calls& calls);
// The registered string a call's message names (string_id), checked to
// have been registered before the call.
std::string registered_text(const Calls& calls, const nlohmann::json& call);

}  // namespace regiontrace::test::nvtx
