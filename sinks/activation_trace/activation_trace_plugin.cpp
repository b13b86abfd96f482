// The plugin's exported entry points: the sink is built by the host as
// `activation_trace`.
#include "activation_trace_sink.hpp"

REGIONTRACE_SINK_PLUGIN(regiontrace::activation::ActivationTraceSink, "activation_trace")
