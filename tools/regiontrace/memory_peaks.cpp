#include "memory_peaks.hpp"

#include <simdjson.h>

#include <stdexcept>

#include "dom_fields.hpp"
#include "gzip_io.hpp"

namespace regiontrace::cli {

bool is_memory_summary_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.rfind("memory_summary", 0) == 0;
}

RankMemoryPeaks read_memory_peaks(const std::string& path) {
  RankMemoryPeaks out;
  out.source = path;
  const PaddedText text = read_text_file(path);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(text.padded(0, text.size())).get(root)) {
    throw std::runtime_error(path + ": not valid JSON (" + simdjson::error_message(error) + ")");
  }
  simdjson::dom::object top;
  simdjson::dom::array regions;
  if (root.get_object().get(top) || top["regions"].get_array().get(regions)) {
    throw std::runtime_error(path +
                             ": not a memory summary (expected an object with a \"regions\" "
                             "array, as memory_summary_rank<r>_pid<p>.json has)");
  }
  const auto rank = integer_field(top, "rank");
  if (!rank) throw std::runtime_error(path + ": memory summary without an integer \"rank\"");
  out.rank = *rank;
  for (simdjson::dom::element r : regions) {
    simdjson::dom::object region;
    simdjson::dom::object devices;
    if (r.get_object().get(region) || region["devices"].get_object().get(devices)) continue;
    auto name = string_field(region, "path");
    if (!name) name = string_field(region, "name");
    if (!name) continue;
    for (auto device : devices) {
      simdjson::dom::object figures;
      if (device.value.get_object().get(figures)) continue;
      if (auto peak = integer_field(figures, "highest_peak_bytes")) {
        auto& slot = out.peak_bytes[{std::string(*name), std::string(device.key)}];
        slot = std::max(slot, *peak);
      }
    }
  }
  return out;
}

}  // namespace regiontrace::cli
