// How a sink declares its configuration keys. One declaration feeds the
// validator, REGIONTRACE_<SINK>_<KEY> variables, `regiontrace check` and the
// configuration reference in docs/.
#pragma once

#include "regiontrace/sdk/abi.hpp"

#include <limits>
#include <string>
#include <utility>
#include <vector>

REGIONTRACE_SDK_BEGIN_NAMESPACE

enum class KeyType {
  kBool,  // true/false, 1/0, yes/no, on/off
  kInt,   // 64-bit signed
  kDouble,
  kString,
  kPath,        // a file or folder; ${...} expanded; absolute() when `absolute_only`
  kEnum,        // one of `choices`
  kStringList,  // YAML sequence or comma list; items limited to `choices` when given
  kIntList,     // YAML sequence or comma list of integers, ranges "a-b" allowed
};

const char* to_string(KeyType type);

// Checks one value beyond its type: returns why it cannot be used (the host
// prefixes key and source), or an empty string. The host calls it wherever
// the value is validated (start-up, `regiontrace check`), while the plugin
// that declared it is loaded. A plain function: nothing to own across the
// boundary. Examples: a regex the sink compiles, a colour table, a file path
// that must not name a folder (sdk::not_a_folder below).
using ValueCheck = std::string (*)(const std::string& value);

struct KeySpec {
  std::string name;
  KeyType type = KeyType::kString;
  std::string default_value;  // as written in YAML; empty with has_default=false: unset
  bool has_default = true;
  std::string description;
  std::vector<std::string> choices;  // kEnum, kStringList
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool absolute_only = false;        // kPath
  ValueCheck value_check = nullptr;  // per item, after the type's own checks

  // Builders, so a schema reads as a table.
  static KeySpec boolean(std::string name, bool def, std::string description) {
    return make(std::move(name), KeyType::kBool, def ? "true" : "false", std::move(description));
  }
  static KeySpec integer(std::string name, long long def, std::string description) {
    return make(std::move(name), KeyType::kInt, std::to_string(def), std::move(description));
  }
  static KeySpec real(std::string name, double def, std::string description) {
    return make(std::move(name), KeyType::kDouble, std::to_string(def), std::move(description));
  }
  static KeySpec string(std::string name, std::string def, std::string description) {
    return make(std::move(name), KeyType::kString, std::move(def), std::move(description));
  }
  static KeySpec path(std::string name, std::string def, std::string description) {
    return make(std::move(name), KeyType::kPath, std::move(def), std::move(description));
  }
  static KeySpec one_of(std::string name, std::string def, std::vector<std::string> choices,
                        std::string description) {
    KeySpec k = make(std::move(name), KeyType::kEnum, std::move(def), std::move(description));
    k.choices = std::move(choices);
    return k;
  }
  static KeySpec list(std::string name, std::string def, std::string description,
                      std::vector<std::string> choices = {}) {
    KeySpec k = make(std::move(name), KeyType::kStringList, std::move(def), std::move(description));
    k.choices = std::move(choices);
    return k;
  }
  static KeySpec int_list(std::string name, std::string def, std::string description) {
    return make(std::move(name), KeyType::kIntList, std::move(def), std::move(description));
  }

  KeySpec& range(double lo, double hi) {
    min = lo;
    max = hi;
    return *this;
  }
  KeySpec& absolute() {
    absolute_only = true;
    return *this;
  }
  KeySpec& checked_by(ValueCheck check) {
    value_check = check;
    return *this;
  }
  KeySpec& no_default() {
    has_default = false;
    default_value.clear();
    return *this;
  }

 private:
  static KeySpec make(std::string name, KeyType type, std::string def, std::string description) {
    KeySpec k;
    k.name = std::move(name);
    k.type = type;
    k.default_value = std::move(def);
    k.description = std::move(description);
    return k;
  }
};

using SinkSchema = std::vector<KeySpec>;

inline const char* to_string(KeyType type) {
  switch (type) {
    case KeyType::kBool:
      return "bool";
    case KeyType::kInt:
      return "int";
    case KeyType::kDouble:
      return "double";
    case KeyType::kString:
      return "string";
    case KeyType::kPath:
      return "path";
    case KeyType::kEnum:
      return "enum";
    case KeyType::kStringList:
      return "list";
    case KeyType::kIntList:
      return "int list";
  }
  return "?";
}

REGIONTRACE_SDK_END_NAMESPACE
