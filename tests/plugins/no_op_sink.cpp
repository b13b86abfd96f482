// A sink that does nothing: the benchmark's "one no-op sink" case.
#include "regiontrace/plugin.hpp"

namespace {
class NoOpSink : public regiontrace::Sink {
 public:
  explicit NoOpSink(const regiontrace::SinkContext&) {}
};
}  // namespace

REGIONTRACE_SINK_PLUGIN(NoOpSink, "noop")
