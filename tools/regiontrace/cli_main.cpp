#include <iostream>
#include <map>

#include "command.hpp"

namespace regiontrace::cli {

std::vector<std::pair<int, Setup>>& registered_commands() {
  static std::vector<std::pair<int, Setup>> commands;
  return commands;
}

CommandRegistration::CommandRegistration(int order, Setup setup) {
  registered_commands().emplace_back(order, std::move(setup));
}

}  // namespace regiontrace::cli

int main(int argc, char** argv) {
  using namespace regiontrace::cli;
  CLI::App app{"regiontrace: check configurations, list regions, compare and summarise traces"};
  app.require_subcommand(1);
  auto commands = registered_commands();
  std::sort(commands.begin(), commands.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<CLI::App*, Runner>> runners;
  for (auto& [order, setup] : commands) {
    const std::size_t before = app.get_subcommands({}).size();
    Runner run = setup(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) runners.emplace_back(subs.back(), std::move(run));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) {
      try {
        return run();
      } catch (const std::exception& e) {
        std::cerr << "regiontrace " << sub->get_name() << ": " << e.what() << "\n";
        return kExitUsage;
      }
    }
  }
  return kExitUsage;
}
