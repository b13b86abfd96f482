// `regiontrace regions [catalog.yaml ...]`: the declared regions with their
// descriptions (the built-in catalog, plus any given).
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "command.hpp"
#include "regiontrace/inspect.hpp"

namespace regiontrace::cli {
namespace {

struct RegionsArgs {
  std::vector<std::string> catalogs;
};

int run_regions(const RegionsArgs& args) {
  const inspect::RegionList list = inspect::list_regions(args.catalogs);
  if (!list.errors.empty()) {
    for (const std::string& e : list.errors) std::cerr << e << "\n";
    return kExitUsage;
  }
  std::size_t width = 0;
  for (const inspect::RegionInfo& r : list.regions) width = std::max(width, r.name.size());
  for (const inspect::RegionInfo& r : list.regions) {
    std::cout << std::left << std::setw(static_cast<int>(width) + 2) << r.name << r.description;
    if (!r.short_name.empty()) std::cout << "  [short: " << r.short_name << "]";
    std::cout << "\n";
  }
  return kExitOk;
}

const CommandRegistration registration(20, [](CLI::App& app) -> Runner {
  auto args = std::make_shared<RegionsArgs>();
  CLI::App* cmd = app.add_subcommand("regions", "List the declared regions with descriptions");
  cmd->add_option("catalogs", args->catalogs, "region catalog files (YAML)")
      ->check(CLI::ExistingFile);
  return [args] { return run_regions(*args); };
});

}  // namespace
}  // namespace regiontrace::cli
