// Why the metrics endpoint could not listen, from the error its bind or
// listen returned, and a port to suggest instead.
#pragma once

#include <string>

#include "region_stats_settings.hpp"

namespace regiontrace::region_stats {

// A sentence for the error message, starting lower-case: a port in use, an
// address this host does not have, a port that needs privileges.
std::string listen_error_text(const ListenAddress& address, int error);

// A port of `address`'s host that is free now (the system's choice), or 0.
// The error suggests it rather than a fixed example that may be the very
// port in use.
int free_port_on(const ListenAddress& address);

}  // namespace regiontrace::region_stats
