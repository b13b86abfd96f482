#include <algorithm>

#include "effective_config.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::detail {
namespace {

void write_value(json::Writer& w, const EffectiveValue& v) {
  auto scalar = [&](const std::string& s) {
    if (v.type == KeyType::kBool) {
      w.value(s == "true");
    } else if (v.type == KeyType::kInt || v.type == KeyType::kIntList ||
               v.type == KeyType::kDouble) {
      // Numbers as the configuration spelled them (already validated).
      s.empty() ? w.value(nullptr) : w.raw_value(s);
    } else {
      w.value(s);
    }
  };
  if (v.type == KeyType::kStringList || v.type == KeyType::kIntList) {
    w.begin_array();
    for (const std::string& item : v.items) scalar(item);
    w.end_array();
  } else if (v.items.empty()) {
    w.value(nullptr);
  } else {
    scalar(v.items[0]);
  }
}

}  // namespace

std::string effective_config_json(const EffectiveConfig& config) {
  std::string out;
  json::Writer w(out);
  // Read by people (`regiontrace check --json`, the snapshot beside the
  // outputs): a line per member and per configuration key.
  w.lines_to_depth(2);
  w.begin_object()
      .field("rank", config.rank.rank)
      .field("local_rank", config.rank.local_rank)
      .field("world_size", config.rank.world_size)
      .field("pid", config.pid)
      .field("host", config.host)
      .field("job_id", config.rank.job_id);
  if (config.clock_start) {
    w.key("clockSync").begin_object().key("start");
    sdk::clock_sync::write_pair(w, *config.clock_start);
    w.key("end");
    if (config.clock_end) {
      sdk::clock_sync::write_pair(w, *config.clock_end);
    } else {
      w.value(nullptr);
    }
    w.end_object();
  }
  w.key("profiles").begin_array();
  for (const std::string& profile : config.profiles) w.value(profile);
  w.end_array().key("sinks").begin_array();
  for (const SinkSettings& s : config.sinks) {
    if (s.enabled) w.value(s.name);
  }
  w.end_array().key("values").begin_object();
  for (const EffectiveValue& v : config.values) {
    w.key(v.key).begin_object().key("value");
    write_value(w, v);
    w.field("source", v.source).end_object();
  }
  w.end_object().end_object();
  out += '\n';
  return out;
}

std::string effective_config_text(const EffectiveConfig& config) {
  std::vector<std::string> shown;
  std::size_t key_width = 0;
  std::size_t value_width = 0;
  for (const EffectiveValue& v : config.values) {
    std::string value;
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      if (i != 0) value += ", ";
      value += v.items[i];
    }
    if (v.type == KeyType::kStringList || v.type == KeyType::kIntList) value = "[" + value + "]";
    key_width = std::max(key_width, v.key.size());
    value_width = std::max(value_width, std::min<std::size_t>(value.size(), 60));
    shown.push_back(std::move(value));
  }
  std::string out;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const EffectiveValue& v = config.values[i];
    out += "  " + v.key + std::string(key_width - v.key.size() + 2, ' ') + shown[i];
    out += std::string(shown[i].size() < value_width ? value_width - shown[i].size() : 0, ' ');
    out += "  <- " + v.source + "\n";
  }
  return out;
}

}  // namespace regiontrace::detail
