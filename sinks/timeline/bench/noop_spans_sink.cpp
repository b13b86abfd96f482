// A sink that asks for spans (kInterestSpans) and does nothing with them:
// the host's own cost of recording a span, without the timeline's copy.
#include "regiontrace/plugin.hpp"

namespace {
class NoOpSpansSink : public regiontrace::Sink {
 public:
  explicit NoOpSpansSink(const regiontrace::SinkContext&) {}
  std::uint32_t interests() const override {
    return regiontrace::kInterestSpans | regiontrace::kWritesNoFiles;
  }
};
}  // namespace

REGIONTRACE_SINK_PLUGIN(NoOpSpansSink, "noop_spans")
