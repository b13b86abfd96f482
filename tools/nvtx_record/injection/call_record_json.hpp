// One record as one JSON line. The fields are described in
// recording_injection.cpp, which is the tool's front page.
#pragma once

#include <string>

#include "record_store.hpp"

namespace regiontrace::nvtx_record {

void append_record_line(std::string& out, const Record& r, const char* text_base, long pid,
                        long tid);

}  // namespace regiontrace::nvtx_record
