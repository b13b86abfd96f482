// A trace file as the torch_profiler sink writes it: whole or not at all
// (a temporary file renamed into place by commit(), so a reader, a crash or
// a signal never sees half a trace under the final name), gzip-compressed
// on the way when asked: the SDK's TraceFileWriter, compressing on a thread
// of its own.
#pragma once

#include <string>

#include "regiontrace/sdk/trace_file_writer.hpp"

namespace regiontrace::torch_profiler {

using TraceFile = sdk::TraceFileWriter;

// zlib's fastest level: a trace is written where the program waits (a
// window closing, the exit), and level 6 took twice as long for a file
// 15% smaller (1M ops: 11.7 MiB against Kineto's 274 MiB of JSON).
constexpr int kTraceGzipLevel = 1;

// Reads a file, gunzipping it when it starts with the gzip magic bytes.
std::string read_maybe_gzip(const std::string& path);

}  // namespace regiontrace::torch_profiler
