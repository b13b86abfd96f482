#include "activation_records.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "activation_lines.hpp"
#include "dom_json_writer.hpp"
#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::cli {

std::uint32_t NamePool::intern(std::string_view name) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(names_.back(), id);
  return id;
}

std::uint32_t NamePool::find(std::string_view name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? kMissing : it->second;
}

std::string format_step(std::int64_t step) {
  return step == kNoStep ? std::string("null") : std::to_string(step);
}

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

constexpr const char* kChromeTrace =
    "a Chrome/Perfetto trace, not an activation trace (`regiontrace summary` reads those)";

// Doubles hold integers exactly up to 2^53; larger ones (hashes) stay text.
constexpr double kExactIntegerLimit = 9007199254740992.0;

enum class Role : std::uint8_t {
  kModule,
  kTensor,
  kStep,
  kVersion,
  kRank,
  kSeq,
  kDropped,  // the sink's closing line: {"v":1,"summary":{"records":N,"dropped":N,...}}
  kIgnored,
  kStat
};

struct KeyRole {
  std::string key;
  Role role = Role::kIgnored;
  std::uint32_t stat = 0;
};

Role role_of(std::string_view key) {
  if (key == "module") return Role::kModule;
  if (key == "tensor") return Role::kTensor;
  if (key == "step") return Role::kStep;
  if (key == "v") return Role::kVersion;
  if (key == "rank") return Role::kRank;
  if (key == "seq") return Role::kSeq;
  if (key == "pid" || key == "ts" || key == "timestamp") return Role::kIgnored;
  if (key == "summary" || key == "dropped" || key == "dropped_records") return Role::kDropped;
  return Role::kStat;
}

std::optional<std::int64_t> as_integer(element value) {
  switch (value.type()) {
    case element_type::INT64:
      return int64_t(value);
    case element_type::UINT64: {
      const uint64_t u = value;
      if (u > static_cast<uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
      return static_cast<std::int64_t>(u);
    }
    case element_type::DOUBLE: {
      const double d = value;
      if (std::floor(d) != d || std::fabs(d) > kExactIntegerLimit) return std::nullopt;
      return static_cast<std::int64_t>(d);
    }
    default:
      return std::nullopt;
  }
}

// Numbers records that share module/tensor/step in execution order.
void count_occurrences(std::vector<ActivationRecord>& records) {
  // Sort compact keys, not indices into the records: far fewer cache misses
  // on a million records. Equal keys stay in execution order (by index).
  struct Key {
    std::uint64_t names;
    std::int64_t step;
    std::uint32_t index;
  };
  std::vector<Key> keys(records.size());
  for (std::uint32_t i = 0; i < records.size(); ++i) {
    keys[i] = {(std::uint64_t{records[i].module} << 32) | records[i].tensor, records[i].step, i};
  }
  std::sort(keys.begin(), keys.end(), [](const Key& x, const Key& y) {
    if (x.names != y.names) return x.names < y.names;
    if (x.step != y.step) return x.step < y.step;
    return x.index < y.index;
  });
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const bool same =
        i > 0 && keys[i - 1].names == keys[i].names && keys[i - 1].step == keys[i].step;
    records[keys[i].index].occurrence = same ? records[keys[i - 1].index].occurrence + 1 : 0;
  }
}

class TraceLoader {
 public:
  TraceLoader(const std::string& path, NamePool& names) : names_(names), lines_(path) {
    trace_.path = path;
  }

  ActivationTrace load() {
    lines_.read([this](element doc) { add(doc); },
                [](std::string_view line) {
                  return looks_like_chrome_trace(line) ? std::string(kChromeTrace) : std::string();
                });
    if (trace_.records.empty()) {
      throw std::runtime_error(
          trace_.path + (lines_.line() == 0 ? ": empty file" : ": no activation records") +
          ": not an activation trace (one JSON object per line with \"module\" and "
          "\"tensor\", as the activation_trace sink writes)");
    }
    order_and_count_occurrences();
    return std::move(trace_);
  }

 private:
  const KeyRole& classify(std::size_t position, std::string_view key) {
    if (position < key_cache_.size() && key_cache_[position].key == key) {
      return key_cache_[position];
    }
    KeyRole role{std::string(key), role_of(key), 0};
    if (role.role == Role::kStat) role.stat = names_.intern(key);
    if (position >= key_cache_.size()) key_cache_.resize(position + 1);
    key_cache_[position] = std::move(role);
    return key_cache_[position];
  }

  // The torch_profiler and timeline sinks' files: {"traceEvents":[...]} whole
  // or one event per line.
  static bool looks_like_chrome_trace(std::string_view line) {
    return line.find("\"traceEvents\"") != std::string_view::npos ||
           (line.find("\"ph\"") != std::string_view::npos &&
            line.find("\"module\"") == std::string_view::npos);
  }

  [[noreturn]] void fail(const std::string& why) const { lines_.fail(why); }

  void add(element doc) {
    if (doc.type() != element_type::OBJECT) fail("expected a JSON object per line");
    if (doc["traceEvents"].error() == simdjson::SUCCESS ||
        (doc["ph"].error() == simdjson::SUCCESS && doc["module"].error() != simdjson::SUCCESS)) {
      fail(kChromeTrace);
    }
    ActivationRecord record;
    record.line = lines_.line();
    record.first_stat = static_cast<std::uint32_t>(trace_.stats.size());
    bool has_module = false;
    bool has_tensor = false;
    std::int64_t dropped = 0;
    std::size_t position = 0;
    for (auto field : simdjson::dom::object(doc)) {
      const KeyRole& role = classify(position++, field.key);
      switch (role.role) {
        case Role::kModule:
          if (field.value.type() != element_type::STRING) fail("\"module\" must be a string");
          record.module = names_.intern(std::string_view(field.value));
          has_module = true;
          break;
        case Role::kTensor:
          if (field.value.type() != element_type::STRING) fail("\"tensor\" must be a string");
          record.tensor = names_.intern(std::string_view(field.value));
          has_tensor = true;
          break;
        case Role::kStep:
          if (field.value.type() == element_type::NULL_VALUE) {
            record.step = kNoStep;
          } else if (auto step = as_integer(field.value)) {
            record.step = *step;
          } else {
            fail("\"step\" must be an integer or null");
          }
          break;
        case Role::kVersion: {
          auto version = as_integer(field.value);
          if (!version || *version != 1) {
            fail("unsupported record version \"v\": this regiontrace reads v1");
          }
          break;
        }
        case Role::kRank:
          if (auto rank = as_integer(field.value)) record.rank = *rank;
          break;
        case Role::kSeq:
          if (auto seq = as_integer(field.value)) record.seq = *seq;
          break;
        case Role::kDropped: {
          element count = field.value;
          if (count.type() == element_type::OBJECT && field.value["dropped"].get(count)) break;
          if (auto n = as_integer(count)) dropped = *n;
          break;
        }
        case Role::kIgnored:
          break;
        case Role::kStat:
          trace_.stats.push_back(decode_stat(role.stat, field.value));
          break;
      }
    }
    if (!has_module && !has_tensor) {  // metadata line: nothing to compare
      trace_.stats.resize(record.first_stat);
      trace_.text_arena.resize(arena_mark_);
      trace_.dropped += dropped;
      return;
    }
    if (!has_module) fail("record has \"tensor\" but no \"module\"");
    if (!has_tensor) fail("record has \"module\" but no \"tensor\"");
    arena_mark_ = trace_.text_arena.size();
    record.stat_count = static_cast<std::uint32_t>(trace_.stats.size() - record.first_stat);
    trace_.records.push_back(record);
  }

  StatValue decode_stat(std::uint32_t name, element value) {
    StatValue stat;
    stat.name = name;
    switch (value.type()) {
      case element_type::DOUBLE:
        stat.kind = StatKind::kNumber;
        stat.number = double(value);
        return stat;
      case element_type::INT64:
      case element_type::UINT64: {
        const double d =
            value.type() == element_type::INT64 ? double(int64_t(value)) : double(uint64_t(value));
        if (std::fabs(d) < kExactIntegerLimit) {
          stat.kind = StatKind::kNumber;
          stat.number = d;
          return stat;
        }
        break;  // too big to hold exactly: compare its text
      }
      case element_type::NULL_VALUE:
        stat.kind = StatKind::kNull;
        return stat;
      case element_type::STRING: {
        const std::string_view s(value);
        if (s == "NaN" || s == "Infinity" || s == "-Infinity") {
          stat.kind = StatKind::kNumber;
          stat.number = s == "NaN"        ? std::numeric_limits<double>::quiet_NaN()
                        : s == "Infinity" ? std::numeric_limits<double>::infinity()
                                          : -std::numeric_limits<double>::infinity();
          return stat;
        }
        if (s.rfind("<error", 0) == 0) {
          stat.kind = StatKind::kError;
          set_text(stat, s);
          return stat;
        }
        break;
      }
      default:
        break;
    }
    stat.kind = StatKind::kText;
    scratch_.clear();
    append_json(scratch_, value);
    set_text(stat, scratch_);
    return stat;
  }

  void set_text(StatValue& stat, std::string_view text) {
    stat.text = {static_cast<std::uint32_t>(trace_.text_arena.size()),
                 static_cast<std::uint32_t>(text.size())};
    trace_.text_arena.append(text);
    if (trace_.text_arena.size() > std::numeric_limits<std::uint32_t>::max()) {
      fail("too much text in one file (over 4 GiB of string statistics)");
    }
  }

  void order_and_count_occurrences() {
    auto& records = trace_.records;
    trace_.ordered_by_seq =
        !records.empty() &&
        std::all_of(records.begin(), records.end(), [](const auto& r) { return r.seq >= 0; });
    if (trace_.ordered_by_seq) {
      std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
        return a.seq != b.seq ? a.seq < b.seq : a.rank < b.rank;
      });
    }
    count_occurrences(records);
  }

  NamePool& names_;
  ActivationTrace trace_;
  ActivationLineReader lines_;
  std::vector<KeyRole> key_cache_;
  std::string scratch_;
  std::size_t arena_mark_ = 0;
};

}  // namespace

ActivationTrace load_activation_trace(const std::string& path, NamePool& names) {
  return TraceLoader(path, names).load();
}

void adopt_names(ActivationTrace& trace, const NamePool& from, NamePool& into) {
  std::vector<std::uint32_t> id(from.size());
  for (std::uint32_t i = 0; i < from.size(); ++i) id[i] = into.intern(from.name(i));
  for (auto& r : trace.records) {
    r.module = id[r.module];
    r.tensor = id[r.tensor];
  }
  for (auto& s : trace.stats) s.name = id[s.name];
}

}  // namespace regiontrace::cli

namespace regiontrace::cli {

void rename_modules(ActivationTrace& trace, NamePool& names,
                    const std::function<std::string(const std::string&)>& rename) {
  std::unordered_map<std::uint32_t, std::uint32_t> renamed;
  for (auto& r : trace.records) {
    auto it = renamed.find(r.module);
    if (it == renamed.end()) {
      const std::string name = rename(names.name(r.module));  // a copy: intern may grow the pool
      it = renamed.emplace(r.module, names.intern(name)).first;
    }
    r.module = it->second;
  }
  // Two names that became one now share one count of occurrences.
  count_occurrences(trace.records);
}

}  // namespace regiontrace::cli
