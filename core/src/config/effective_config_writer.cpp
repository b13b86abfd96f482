#include <algorithm>

#include "effective_config.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::detail {
namespace {

void append_value(std::string& out, const EffectiveValue& v) {
  auto scalar = [&](const std::string& s) {
    if (v.type == KeyType::kBool) {
      out += s == "true" ? "true" : "false";
    } else if (v.type == KeyType::kInt || v.type == KeyType::kIntList ||
               v.type == KeyType::kDouble) {
      out += s.empty() ? "null" : s;
    } else {
      json::append_escaped(out, s);
    }
  };
  if (v.type == KeyType::kStringList || v.type == KeyType::kIntList) {
    out += '[';
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      if (i != 0) out += ", ";
      scalar(v.items[i]);
    }
    out += ']';
  } else if (v.items.empty()) {
    out += "null";
  } else {
    scalar(v.items[0]);
  }
}

}  // namespace

std::string effective_config_json(const EffectiveConfig& config) {
  std::string out = "{\n  \"rank\": " + std::to_string(config.rank.rank) +
                    ",\n  \"local_rank\": " + std::to_string(config.rank.local_rank) +
                    ",\n  \"world_size\": " + std::to_string(config.rank.world_size) +
                    ",\n  \"pid\": " + std::to_string(config.pid) + ",\n  \"host\": ";
  json::append_escaped(out, config.host);
  out += ",\n  \"job_id\": ";
  json::append_escaped(out, config.rank.job_id);
  if (config.clock_start) {
    out += ",\n  \"clockSync\": {\"start\": ";
    sdk::clock_sync::append_pair(out, *config.clock_start);
    out += ", \"end\": ";
    if (config.clock_end) {
      sdk::clock_sync::append_pair(out, *config.clock_end);
    } else {
      out += "null";
    }
    out += '}';
  }
  out += ",\n  \"profiles\": [";
  for (std::size_t i = 0; i < config.profiles.size(); ++i) {
    if (i != 0) out += ", ";
    json::append_escaped(out, config.profiles[i]);
  }
  out += "],\n  \"sinks\": [";
  bool first = true;
  for (const SinkSettings& s : config.sinks) {
    if (!s.enabled) continue;
    if (!first) out += ", ";
    first = false;
    json::append_escaped(out, s.name);
  }
  out += "],\n  \"values\": {";
  for (std::size_t i = 0; i < config.values.size(); ++i) {
    const EffectiveValue& v = config.values[i];
    out += i == 0 ? "\n    " : ",\n    ";
    json::append_escaped(out, v.key);
    out += ": {\"value\": ";
    append_value(out, v);
    out += ", \"source\": ";
    json::append_escaped(out, v.source);
    out += '}';
  }
  out += "\n  }\n}\n";
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
