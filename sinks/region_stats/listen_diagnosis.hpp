// Why the metrics endpoint could not listen. civetweb only says "possible
// problem binding to port"; binding the address ourselves tells a port in
// use from an address this host does not have, and, when our own bind
// succeeds, from an HTTP server built without IPv6 (Debian's civetweb).
#pragma once

#include <string>

#include "region_stats_settings.hpp"

namespace regiontrace::region_stats {

// A sentence for the error message, starting lower-case.
std::string diagnose_listen_failure(const ListenAddress& address);

// A port of `address`'s host that is free now (the system's choice), or 0.
// The error suggests it rather than a fixed example that may be the very
// port in use.
int free_port_on(const ListenAddress& address);

}  // namespace regiontrace::region_stats
