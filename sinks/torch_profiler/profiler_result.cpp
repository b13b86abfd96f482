#include "profiler_result.hpp"

#include <cstdint>
#include <exception>
#include <set>

#include "collected_profile.hpp"

namespace regiontrace::torch_profiler {
namespace {

using torch::autograd::profiler::KinetoEvent;

// libtorch 1.x stamps events in microseconds, 2.x in nanoseconds; the
// configure step found which this one has.
std::int64_t start_ns(const KinetoEvent& e) {
#if defined(REGIONTRACE_TP_KINETO_EVENT_NS)
  return static_cast<std::int64_t>(e.startNs());
#else
  return static_cast<std::int64_t>(e.startUs()) * 1000;
#endif
}

std::int64_t duration_ns(const KinetoEvent& e) {
#if defined(REGIONTRACE_TP_KINETO_EVENT_NS)
  return static_cast<std::int64_t>(e.durationNs());
#else
  return static_cast<std::int64_t>(e.durationUs()) * 1000;
#endif
}

}  // namespace

std::vector<OpRecord> read_ops(const CollectedProfile& profile,
                               const std::map<std::uint64_t, std::uint64_t>& trace_tids,
                               std::vector<ThreadInfo>* threads_seen) {
  std::vector<OpRecord> out;
  if (!profile.result) return out;
  const auto& events = profile.result->events();
  out.reserve(events.size());
  std::set<std::uint64_t> unknown;
  for (const KinetoEvent& e : events) {
    OpRecord r;
    r.name = e.name();
    r.start_ns = start_ns(e);
    r.duration_ns = duration_ns(e);
    r.device_type = static_cast<int>(e.deviceType());
    // An unsigned byte in 1.13, so "no device" (-1) reads 255.
    r.device_index = static_cast<int>(static_cast<std::int8_t>(e.deviceIndex()));
    if (r.name == "[memory]") {
      r.kind = OpRecord::Kind::kMemory;
      r.bytes = e.nBytes();
      r.duration_ns = 0;
    } else if (e.deviceType() != c10::DeviceType::CPU) {
      r.kind = OpRecord::Kind::kDevice;
      r.correlation_id = e.correlationId();
    }
    const std::uint64_t torch_tid = e.startThreadId();
    auto it = trace_tids.find(torch_tid);
    if (it != trace_tids.end()) {
      r.thread = it->second;
    } else {
      r.thread = torch_tid;
      if (r.kind != OpRecord::Kind::kDevice) unknown.insert(torch_tid);
    }
    if (e.hasShapes()) {
      r.has_shapes = true;
      for (const auto& s : e.shapes()) r.shapes.push_back(s);
    }
    if (e.hasTypes()) {
      for (const auto& t : e.dtypes()) r.dtypes.push_back(t);
    }
    r.flops = e.flops();
    if (e.hasStack()) {
      for (const auto& frame : e.stack()) r.stack.push_back(frame);
    }
    r.sequence_nr = e.sequenceNr();
    out.push_back(std::move(r));
  }
  for (std::uint64_t tid : unknown) {
    threads_seen->push_back({tid, "torch thread " + std::to_string(tid)});
  }
  return out;
}

bool save_torch_trace(CollectedProfile& profile, const std::string& path, std::string* why) {
  if (!profile.result) {
    *why = "no result";
    return false;
  }
  try {
    profile.result->save(path);
    return true;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    *why = what.substr(0, what.find('\n'));
    return false;
  }
}

}  // namespace regiontrace::torch_profiler
