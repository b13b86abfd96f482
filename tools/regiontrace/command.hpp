// How a subcommand of `regiontrace` plugs in: a *_command.cpp file defines a
// static CommandRegistration whose setup adds a CLI11 subcommand and returns
// the function that runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace regiontrace::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // invalid config, divergent traces, ...
inline constexpr int kExitUsage = 2;     // bad arguments or unreadable input

using Runner = std::function<int()>;
using Setup = std::function<Runner(CLI::App& app)>;

struct CommandRegistration {
  CommandRegistration(int order, Setup setup);
};

std::vector<std::pair<int, Setup>>& registered_commands();

}  // namespace regiontrace::cli
