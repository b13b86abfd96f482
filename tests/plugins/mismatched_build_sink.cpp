// A real sink, exported with REGIONTRACE_SINK_PLUGIN, that the build compiles
// against something the host does not speak: another SDK ABI version
// (-DREGIONTRACE_SDK_ABI_VERSION_OVERRIDE=999) or another std::string ABI
// (-D_GLIBCXX_USE_CXX11_ABI=0). The loader must refuse it from its build info.
#include "constructor_mark.hpp"
#include "regiontrace/plugin.hpp"

#ifndef MISMATCHED_SINK_NAME
#error "MISMATCHED_SINK_NAME names the sink"
#endif

class MismatchedBuildSink : public regiontrace::Sink {
 public:
  explicit MismatchedBuildSink(const regiontrace::SinkContext&) {}
};

REGIONTRACE_SINK_PLUGIN(MismatchedBuildSink, MISMATCHED_SINK_NAME)
REGIONTRACE_TEST_CONSTRUCTOR_MARK(MISMATCHED_SINK_NAME)
