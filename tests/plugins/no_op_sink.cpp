// A sink that does nothing: the benchmark's "one no-op sink" case.
#include "regiontrace/plugin.hpp"

namespace {
class NoOpSink : public regiontrace::Sink {
 public:
  explicit NoOpSink(const regiontrace::SinkContext&) {}
  // Doing nothing, it needs no clock and no output folder.
  std::uint32_t interests() const override {
    return (regiontrace::kInterestDefault & ~regiontrace::kInterestTimestamps) |
           regiontrace::kWritesNoFiles;
  }
};
}  // namespace

REGIONTRACE_SINK_PLUGIN(NoOpSink, "noop")
