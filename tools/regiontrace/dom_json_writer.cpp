#include "dom_json_writer.hpp"

#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::cli {

void append_json(std::string& out, simdjson::dom::element value) {
  using simdjson::dom::element_type;
  switch (value.type()) {
    case element_type::OBJECT: {
      out += '{';
      bool first = true;
      for (auto field : simdjson::dom::object(value)) {
        if (!first) out += ',';
        first = false;
        json::append_escaped(out, field.key);
        out += ':';
        append_json(out, field.value);
      }
      out += '}';
      break;
    }
    case element_type::ARRAY: {
      out += '[';
      bool first = true;
      for (auto item : simdjson::dom::array(value)) {
        if (!first) out += ',';
        first = false;
        append_json(out, item);
      }
      out += ']';
      break;
    }
    case element_type::STRING:
      json::append_escaped(out, std::string_view(value));
      break;
    case element_type::INT64:
      json::append_int(out, int64_t(value));
      break;
    case element_type::UINT64:
      json::append_uint(out, uint64_t(value));
      break;
    case element_type::DOUBLE:
      json::append_double(out, double(value));
      break;
    case element_type::BOOL:
      out += bool(value) ? "true" : "false";
      break;
    case element_type::NULL_VALUE:
      out += "null";
      break;
  }
}

}  // namespace regiontrace::cli
