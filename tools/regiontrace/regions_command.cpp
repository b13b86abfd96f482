// `regiontrace regions [catalog.yaml ...]`: the declared regions with their
// descriptions (the built-in catalog, plus any given).
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "command.hpp"
#include "region_registry.hpp"
#include "regiontrace/regiontrace.hpp"

namespace regiontrace::cli {
namespace {

struct RegionsArgs {
  std::vector<std::string> catalogs;
};

int run_regions(const RegionsArgs& args) {
  detail::RegionRegistry& registry = detail::RegionRegistry::instance();
  for (const std::string& c : args.catalogs) {
    try {
      detail::load_region_catalog_file(c, registry);
    } catch (const Error& e) {
      std::cerr << e.what() << "\n";
      return kExitUsage;
    }
  }
  const auto regions = registry.declared();
  const auto prefixes = registry.short_prefixes();
  std::size_t width = 0;
  for (const auto* r : regions) width = std::max(width, r->name.size());
  for (const auto* r : regions) {
    std::string short_name;
    for (const std::string& p : prefixes) {
      if (r->name.rfind(p, 0) == 0) short_name = r->name.substr(p.size());
    }
    std::cout << std::left << std::setw(static_cast<int>(width) + 2) << r->name << r->description;
    if (!short_name.empty()) std::cout << "  [short: " << short_name << "]";
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
