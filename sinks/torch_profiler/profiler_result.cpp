#include "profiler_result.hpp"
#include "regiontrace/sdk/trace_time.hpp"

#include <kineto/ActivityType.h>

#include <cstdint>
#include <set>
#include <string>

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
  return sdk::units::us_to_ns(e.startUs());
#endif
}

std::int64_t duration_ns(const KinetoEvent& e) {
#if defined(REGIONTRACE_TP_KINETO_EVENT_NS)
  return static_cast<std::int64_t>(e.durationNs());
#else
  return sdk::units::us_to_ns(e.durationUs());
#endif
}

// The category Kineto writes for this activity in its own traces: its name
// table ships in the header, so ours cannot drift from it.
std::string kineto_category(std::uint8_t type) {
  if (type >= libkineto::activityTypeCount) return {};
  return libkineto::toString(static_cast<libkineto::ActivityType>(type));
}

}  // namespace

std::vector<OpRecord> read_ops(const CollectedProfile& profile,
                               const std::map<std::uint64_t, std::uint64_t>& trace_tids,
                               std::vector<ThreadInfo>* threads_seen) {
  std::vector<OpRecord> out;
  if (!profile.result) return out;
  const auto& events = profile.result->events();
  out.reserve(events.size());
  std::set<std::uint64_t> os_tids;
  for (const auto& [torch_tid, os_tid] : trace_tids) os_tids.insert(os_tid);
  std::set<std::uint64_t> unknown;
  std::map<std::uint64_t, std::string> device_tracks;
  for (const KinetoEvent& e : events) {
    OpRecord r;
    r.event_index = static_cast<std::int64_t>(out.size());
    r.name = e.name();
    r.category = kineto_category(e.activityType());
    r.start_ns = start_ns(e);
    r.duration_ns = duration_ns(e);
    r.device_type = static_cast<int>(e.deviceType());
    // An unsigned byte in 1.13, so "no device" (-1) reads 255.
    r.device_index = static_cast<int>(static_cast<std::int8_t>(e.deviceIndex()));
    // An op's kernels link to it; a CUDA runtime call links to its op too.
    const std::uint64_t linked = e.linkedCorrelationId();
    if (r.name == "[memory]") {
      r.kind = OpRecord::Kind::kMemory;
      r.bytes = e.nBytes();
      r.duration_ns = 0;
    } else if (e.deviceType() != c10::DeviceType::CPU) {
      r.kind = OpRecord::Kind::kDevice;
      r.correlation_id = e.correlationId();
      r.external_id = linked;
      r.stream = e.deviceResourceId();
      r.thread = device_track(r.device_index, r.stream);
      device_tracks.emplace(r.thread, "cuda:" + std::to_string(r.device_index) + " stream " +
                                          std::to_string(r.stream));
    } else if (linked != 0) {
      r.correlation_id = e.correlationId();
      r.external_id = linked;
    } else {
      r.external_id = e.correlationId();
    }
    if (r.kind != OpRecord::Kind::kDevice) {
      // Ops carry RecordFunction's thread id, CUDA runtime calls the OS one.
      const std::uint64_t tid = e.startThreadId();
      auto it = trace_tids.find(tid);
      if (it != trace_tids.end()) {
        r.thread = it->second;
      } else {
        r.thread = tid;
        if (os_tids.count(tid) == 0) unknown.insert(tid);
      }
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
    if (r.sequence_nr >= 0) r.fwd_thread = e.fwdThreadId();
    out.push_back(std::move(r));
  }
  for (std::uint64_t tid : unknown) {
    threads_seen->push_back({tid, "torch thread " + std::to_string(tid)});
  }
  for (auto& [tid, name] : device_tracks) threads_seen->push_back({tid, std::move(name)});
  return out;
}

}  // namespace regiontrace::torch_profiler
