// Runs the user's command with extra environment variables and waits for
// it, letting Ctrl-C reach the command (not us) so its records still get
// reported.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace regiontrace::nvtx_record {

// The command's exit code; 128 + signal when a signal ended it; 127 when it
// could not be started (the reason goes to stderr).
int run_command_with_env(const std::vector<std::string>& command,
                         const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace regiontrace::nvtx_record
