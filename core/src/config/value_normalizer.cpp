#include "value_normalizer.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "../suggest.hpp"

namespace regiontrace::detail {
namespace {

std::string where(const std::string& key, const std::string& source) {
  return "`" + key + "` (" + source + ")";
}

bool parse_int(const std::string& s, long long* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_double(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  // strtod reads "nan" and "inf" too; no setting means either.
  return end == s.c_str() + s.size() && std::isfinite(*out);
}

std::string range_text(const KeySpec& spec) {
  auto num = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  return "[" + (std::isinf(spec.min) ? std::string("-inf") : num(spec.min)) + ", " +
         (std::isinf(spec.max) ? std::string("inf") : num(spec.max)) + "]";
}

// One item of an integer list: N, A-B or A-B:S. Returns why it is not one.
std::string expand_int_item(const std::string& v, std::vector<long long>* out) {
  long long a = 0;
  long long b = 0;
  long long stride = 1;
  const auto dash = v.find('-', 1);
  if (dash == std::string::npos) {
    if (parse_int(v, &a)) {
      out->push_back(a);
      return {};
    }
    return "`" + v + "` is not an integer or a range like 2-5";
  }
  const auto colon = v.find(':', dash);
  const std::string end_text =
      v.substr(dash + 1, colon == std::string::npos ? std::string::npos : colon - dash - 1);
  if (!parse_int(v.substr(0, dash), &a) || !parse_int(end_text, &b) ||
      (colon != std::string::npos && !parse_int(v.substr(colon + 1), &stride))) {
    return "`" + v + "` is not an integer or a range like 2-5";
  }
  if (stride < 1) return "range `" + v + "` has a stride below 1";
  // Unsigned: b - a of two far-apart numbers overflows a long long.
  const unsigned long long span =
      static_cast<unsigned long long>(b) - static_cast<unsigned long long>(a);
  if (b < a || span > 1000000) {
    return "range `" + v + "` must go upwards and span at most 1000000 values";
  }
  for (unsigned long long k = 0; k <= span / static_cast<unsigned long long>(stride); ++k) {
    out->push_back(a + static_cast<long long>(k * static_cast<unsigned long long>(stride)));
  }
  return {};
}

}  // namespace

bool parse_bool(const std::string& text, bool* out) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "true" || t == "1" || t == "yes" || t == "on") {
    *out = true;
    return true;
  }
  if (t == "false" || t == "0" || t == "no" || t == "off") {
    *out = false;
    return true;
  }
  return false;
}

std::optional<std::string> expand_placeholders(const std::string& text, const std::string& key,
                                               const std::string& source,
                                               const ExpansionContext& ctx,
                                               std::vector<std::string>* errors) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find("${", i);
    if (open == std::string::npos) {
      out.append(text, i, std::string::npos);
      break;
    }
    out.append(text, i, open - i);
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) {
      errors->push_back(where(key, source) + ": `" + text + "` has an unclosed `${`");
      return std::nullopt;
    }
    const std::string name = text.substr(open + 2, close - open - 2);
    if (name == "rank") {
      out += std::to_string(ctx.rank);
    } else if (name == "local_rank") {
      out += std::to_string(ctx.local_rank);
    } else if (name == "world_size") {
      out += std::to_string(ctx.world_size);
    } else if (name == "job_id") {
      out += ctx.job_id;
    } else if (name == "pid") {
      out += std::to_string(ctx.pid);
    } else if (name == "output_dir" && !ctx.output_dir.empty()) {
      out += ctx.output_dir;
    } else if (name.rfind("env:", 0) == 0) {
      const std::string var = name.substr(4);
      auto it = ctx.env != nullptr ? ctx.env->find(var) : Environment::const_iterator();
      if (ctx.env == nullptr || it == ctx.env->end()) {
        errors->push_back(where(key, source) + ": `${env:" + var + "}` but " + var + " is not set");
        return std::nullopt;
      }
      out += it->second;
    } else {
      errors->push_back(
          where(key, source) + ": unknown placeholder `${" + name +
          "}` (valid: ${rank}, ${local_rank}, ${world_size}, ${job_id}, ${pid}, ${env:NAME}" +
          (ctx.output_dir.empty() ? std::string(")") : ", ${output_dir})"));
      return std::nullopt;
    }
    i = close + 1;
  }
  return out;
}

std::vector<std::string> default_items(const KeySpec& spec) {
  if (!spec.has_default) return {};
  if (spec.type == KeyType::kStringList || spec.type == KeyType::kIntList) {
    return split_list(spec.default_value);
  }
  return {spec.default_value};
}

std::optional<std::vector<std::string>> normalize_value(
    const KeySpec& spec, const ConfigTree::Node& node, const std::string& key,
    const std::string& source, const ExpansionContext& ctx, std::vector<std::string>* errors) {
  const bool list_type = spec.type == KeyType::kStringList || spec.type == KeyType::kIntList;
  const bool is_list = ConfigTree::is_list(node);
  if (!list_type && is_list) {
    errors->push_back(where(key, source) + ": expected a single " + to_string(spec.type) +
                      ", got a list");
    return std::nullopt;
  }
  if (!node.empty() && !is_list) {
    errors->push_back(where(key, source) + ": expected a " + to_string(spec.type) + ", got a map");
    return std::nullopt;
  }
  std::vector<std::string> raw =
      list_type ? ConfigTree::items(node) : std::vector<std::string>{node.data()};
  std::vector<std::string> out;
  const std::size_t errors_before = errors->size();
  for (const std::string& item_raw : raw) {
    std::optional<std::string> item = expand_placeholders(item_raw, key, source, ctx, errors);
    if (!item) return std::nullopt;
    const std::string& v = *item;
    switch (spec.type) {
      case KeyType::kBool: {
        bool b = false;
        if (!parse_bool(v, &b)) {
          errors->push_back(where(key, source) + ": `" + v +
                            "` is not a boolean (true/false, 1/0, yes/no, on/off)");
        } else {
          out.push_back(b ? "true" : "false");
        }
        break;
      }
      case KeyType::kInt: {
        long long n = 0;
        if (!parse_int(v, &n)) {
          errors->push_back(where(key, source) + ": `" + v + "` is not an integer");
        } else if (n < spec.min || n > spec.max) {
          errors->push_back(where(key, source) + ": " + v + " is out of range " + range_text(spec));
        } else {
          out.push_back(std::to_string(n));
        }
        break;
      }
      case KeyType::kDouble: {
        double d = 0;
        if (!parse_double(v, &d)) {
          errors->push_back(where(key, source) + ": `" + v + "` is not a number");
        } else if (d < spec.min || d > spec.max) {
          errors->push_back(where(key, source) + ": " + v + " is out of range " + range_text(spec));
        } else {
          out.push_back(v);
        }
        break;
      }
      case KeyType::kPath: {
        if (v.empty()) {
          out.push_back(v);
          break;
        }
        const std::filesystem::path p(v);
        if (spec.absolute_only && !p.is_absolute()) {
          errors->push_back(where(key, source) + ": `" + v + "` must be an absolute path");
        } else {
          out.push_back(std::filesystem::absolute(p).lexically_normal().string());
        }
        break;
      }
      case KeyType::kEnum:
        if (std::find(spec.choices.begin(), spec.choices.end(), v) == spec.choices.end()) {
          errors->push_back(where(key, source) + ": `" + v + "` is not one of " +
                            join(spec.choices, ", ") + did_you_mean(v, spec.choices));
        } else {
          out.push_back(v);
        }
        break;
      case KeyType::kStringList:
        if (!spec.choices.empty() &&
            std::find(spec.choices.begin(), spec.choices.end(), v) == spec.choices.end()) {
          errors->push_back(where(key, source) + ": list item `" + v + "` is not one of " +
                            join(spec.choices, ", ") + did_you_mean(v, spec.choices));
        } else {
          out.push_back(v);
        }
        break;
      case KeyType::kIntList: {
        std::vector<long long> expanded;
        if (const std::string why = expand_int_item(v, &expanded); !why.empty()) {
          errors->push_back(where(key, source) + ": " + why +
                            " (valid items: 3, 2-5, 0-7:2 for every second one; a YAML list or "
                            "a comma list such as `0,3,8-15:4`)");
        } else {
          for (long long n : expanded) out.push_back(std::to_string(n));
        }
        break;
      }
      case KeyType::kString:
        out.push_back(v);
        break;
    }
    if (spec.value_check != nullptr && errors->size() == errors_before && !v.empty()) {
      const std::string why = spec.value_check(out.back());
      if (!why.empty()) errors->push_back(where(key, source) + ": " + why);
    }
  }
  if (errors->size() != errors_before) return std::nullopt;
  return out;
}

}  // namespace regiontrace::detail
