// From Options + environment to a validated EffectiveConfig: profiles, then
// environment, then program overrides; plugins discovered (and loaded for the
// sinks that run) so their schemas validate their keys.
#pragma once

#include "regiontrace/export.hpp"

#include <string>
#include <vector>

#include "config_tree.hpp"
#include "effective_config.hpp"
#include "regiontrace/regiontrace.hpp"

namespace regiontrace::detail {

// A start-up error that also carries the `on_error` policy the configuration
// asked for, as far as it could be read (`exit` when it could not).
class REGIONTRACE_INTERNAL ConfigurationError : public Error {
 public:
  ConfigurationError(const std::string& message, OnError on_error)
      : Error(message), on_error_(on_error) {}
  OnError on_error() const { return on_error_; }

 private:
  OnError on_error_;
};

struct LoadMode {
  bool load_all_plugins = false;            // `regiontrace check`: validate disabled sinks too
  bool create_output_dirs = true;           // false: only check that they could be created
  std::vector<std::string> extra_profiles;  // before Options::profiles
};

// Throws ConfigurationError listing every problem found, one per line.
REGIONTRACE_INTERNAL EffectiveConfig load_configuration(const Options& options,
                                                        const Environment& env,
                                                        const LoadMode& mode = {});

// The merged tree alone (no validation), for tests of the layers.
REGIONTRACE_INTERNAL ConfigTree build_config_tree(const Options& options, const Environment& env,
                                                  const std::vector<std::string>& known_sinks,
                                                  std::vector<std::string>* errors);

// Schemas of the core's own keys and of the keys every sink has.
REGIONTRACE_INTERNAL const SinkSchema& core_schema();
REGIONTRACE_INTERNAL const SinkSchema& common_sink_schema();

}  // namespace regiontrace::detail
