// A sink that does nothing with the SDK's default interests, timestamps
// included: what any timed sink pays before its own work (the benchmark
// compares it with two bare clock reads).
#include "regiontrace/plugin.hpp"

namespace {
class NoOpTimedSink : public regiontrace::Sink {
 public:
  explicit NoOpTimedSink(const regiontrace::SinkContext&) {}
  std::uint32_t interests() const override {
    return regiontrace::kInterestDefault | regiontrace::kWritesNoFiles;
  }
};
}  // namespace

REGIONTRACE_SINK_PLUGIN(NoOpTimedSink, "noop_timed")
