#include "record_format.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cstring>
#include <string_view>

#include "regiontrace/sdk/json_writer.hpp"

namespace regiontrace::nvtx_record {
namespace {

namespace json = regiontrace::json;

const char* message_type_name(std::int8_t t) {
  switch (t) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return "ascii";
    case NVTX_MESSAGE_TYPE_UNICODE:
      return "unicode";
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return "registered";
    case NVTX_MESSAGE_UNKNOWN:
      return "none";
    default:
      return "other";
  }
}

void append_payload(std::string& out, const Record& r) {
  out += ",\"payload_type\":";
  std::uint64_t bits = r.payload;
  switch (r.payload_type) {
    case 0:
      out += "null,\"payload\":null";
      return;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
      out += "\"uint64\",\"payload\":";
      json::append_uint(out, bits);
      return;
    case NVTX_PAYLOAD_TYPE_INT64:
      out += "\"int64\",\"payload\":";
      json::append_int(out, static_cast<std::int64_t>(bits));
      return;
    case NVTX_PAYLOAD_TYPE_DOUBLE: {
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      out += "\"double\",\"payload\":";
      json::append_double(out, d);
      return;
    }
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
      out += "\"uint32\",\"payload\":";
      json::append_uint(out, static_cast<std::uint32_t>(bits));
      return;
    case NVTX_PAYLOAD_TYPE_INT32:
      out += "\"int32\",\"payload\":";
      json::append_int(out, static_cast<std::int32_t>(bits));
      return;
    case NVTX_PAYLOAD_TYPE_FLOAT: {
      float f;
      std::uint32_t low = static_cast<std::uint32_t>(bits);
      std::memcpy(&f, &low, sizeof(f));
      out += "\"float\",\"payload\":";
      json::append_double(out, static_cast<double>(f));
      return;
    }
    default:
      out += "\"other\",\"payload\":";
      json::append_uint(out, bits);
  }
}

void append_color(std::string& out, const Record& r) {
  out += ",\"color\":";
  if (r.color_type != NVTX_COLOR_ARGB) {
    out += "null";
    return;
  }
  static const char kHex[] = "0123456789ABCDEF";
  out += "\"#";
  for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(r.color >> shift) & 0xF];
  out += '"';
}

void append_text(std::string& out, const char* key, const Record& r, const char* text_base) {
  out += ",\"";
  out += key;
  out += "\":";
  if (r.has_text) {
    json::append_escaped(out, std::string_view(text_base + r.text_offset, r.text_length));
  } else {
    out += "null";
  }
}

void append_message(std::string& out, const Record& r, const char* text_base) {
  out += ",\"message_type\":\"";
  out += message_type_name(r.message_type);
  out += "\",\"message\":";
  if (r.message_type == NVTX_MESSAGE_TYPE_REGISTERED) {
    if (r.string != nullptr) {
      out += r.string->json_text;
    } else {
      out += "null";
    }
    out += ",\"string_id\":";
    json::append_uint(out, r.string != nullptr ? r.string->id : 0);
  } else if (r.has_text) {
    json::append_escaped(out, std::string_view(text_base + r.text_offset, r.text_length));
  } else {
    out += "null";
  }
}

void append_attributes(std::string& out, const Record& r, const char* text_base) {
  append_message(out, r, text_base);
  append_color(out, r);
  out += ",\"category\":";
  json::append_uint(out, r.category);
  append_payload(out, r);
}

}  // namespace

const char* call_name(Call call) {
  switch (call) {
    case Call::kMarkEx:
      return "nvtxMarkEx";
    case Call::kMarkA:
      return "nvtxMarkA";
    case Call::kMarkW:
      return "nvtxMarkW";
    case Call::kRangeStartEx:
      return "nvtxRangeStartEx";
    case Call::kRangeStartA:
      return "nvtxRangeStartA";
    case Call::kRangeStartW:
      return "nvtxRangeStartW";
    case Call::kRangeEnd:
      return "nvtxRangeEnd";
    case Call::kRangePushEx:
      return "nvtxRangePushEx";
    case Call::kRangePushA:
      return "nvtxRangePushA";
    case Call::kRangePushW:
      return "nvtxRangePushW";
    case Call::kRangePop:
      return "nvtxRangePop";
    case Call::kNameCategoryA:
      return "nvtxNameCategoryA";
    case Call::kNameCategoryW:
      return "nvtxNameCategoryW";
    case Call::kNameOsThreadA:
      return "nvtxNameOsThreadA";
    case Call::kNameOsThreadW:
      return "nvtxNameOsThreadW";
    case Call::kDomainMarkEx:
      return "nvtxDomainMarkEx";
    case Call::kDomainRangeStartEx:
      return "nvtxDomainRangeStartEx";
    case Call::kDomainRangeEnd:
      return "nvtxDomainRangeEnd";
    case Call::kDomainRangePushEx:
      return "nvtxDomainRangePushEx";
    case Call::kDomainRangePop:
      return "nvtxDomainRangePop";
    case Call::kDomainResourceCreate:
      return "nvtxDomainResourceCreate";
    case Call::kDomainResourceDestroy:
      return "nvtxDomainResourceDestroy";
    case Call::kDomainNameCategoryA:
      return "nvtxDomainNameCategoryA";
    case Call::kDomainNameCategoryW:
      return "nvtxDomainNameCategoryW";
    case Call::kDomainRegisterStringA:
      return "nvtxDomainRegisterStringA";
    case Call::kDomainRegisterStringW:
      return "nvtxDomainRegisterStringW";
    case Call::kDomainCreateA:
      return "nvtxDomainCreateA";
    case Call::kDomainCreateW:
      return "nvtxDomainCreateW";
    case Call::kDomainDestroy:
      return "nvtxDomainDestroy";
    case Call::kInitialize:
      return "nvtxInitialize";
  }
  return "?";
}

const char* kind_name(Call call) {
  switch (call) {
    case Call::kMarkEx:
    case Call::kMarkA:
    case Call::kMarkW:
    case Call::kDomainMarkEx:
      return "mark";
    case Call::kRangeStartEx:
    case Call::kRangeStartA:
    case Call::kRangeStartW:
    case Call::kDomainRangeStartEx:
      return "range_start";
    case Call::kRangeEnd:
    case Call::kDomainRangeEnd:
      return "range_end";
    case Call::kRangePushEx:
    case Call::kRangePushA:
    case Call::kRangePushW:
    case Call::kDomainRangePushEx:
      return "push";
    case Call::kRangePop:
    case Call::kDomainRangePop:
      return "pop";
    case Call::kNameCategoryA:
    case Call::kNameCategoryW:
    case Call::kDomainNameCategoryA:
    case Call::kDomainNameCategoryW:
      return "name_category";
    case Call::kNameOsThreadA:
    case Call::kNameOsThreadW:
      return "name_thread";
    case Call::kDomainRegisterStringA:
    case Call::kDomainRegisterStringW:
      return "register_string";
    case Call::kDomainCreateA:
    case Call::kDomainCreateW:
      return "domain_create";
    case Call::kDomainDestroy:
      return "domain_destroy";
    case Call::kDomainResourceCreate:
      return "resource_create";
    case Call::kDomainResourceDestroy:
      return "resource_destroy";
    case Call::kInitialize:
      return "initialize";
  }
  return "?";
}

void append_record_line(std::string& out, const Record& r, const char* text_base, long pid,
                        long tid) {
  out += "{\"seq\":";
  json::append_uint(out, r.seq);
  out += ",\"pid\":";
  json::append_int(out, pid);
  out += ",\"tid\":";
  json::append_int(out, tid);
  out += ",\"t\":";
  json::append_int(out, r.time_ns);
  out += ",\"kind\":\"";
  out += kind_name(r.call);
  out += "\",\"call\":\"";
  out += call_name(r.call);
  out += "\",\"domain\":";
  out += r.domain != nullptr ? std::string_view(r.domain->json_name) : std::string_view("\"\"");
  out += ",\"domain_id\":";
  json::append_uint(out, r.domain != nullptr ? r.domain->id : 0);
  switch (r.call) {
    case Call::kMarkEx:
    case Call::kMarkA:
    case Call::kMarkW:
    case Call::kDomainMarkEx:
      append_attributes(out, r, text_base);
      break;
    case Call::kRangePushEx:
    case Call::kRangePushA:
    case Call::kRangePushW:
    case Call::kDomainRangePushEx:
      append_attributes(out, r, text_base);
      out += ",\"depth\":";
      json::append_int(out, r.depth);
      break;
    case Call::kRangePop:
    case Call::kDomainRangePop:
      out += ",\"depth\":";
      json::append_int(out, r.depth);
      break;
    case Call::kRangeStartEx:
    case Call::kRangeStartA:
    case Call::kRangeStartW:
    case Call::kDomainRangeStartEx:
      append_attributes(out, r, text_base);
      out += ",\"range_id\":";
      json::append_uint(out, r.value);
      break;
    case Call::kRangeEnd:
    case Call::kDomainRangeEnd:
      out += ",\"range_id\":";
      json::append_uint(out, r.value);
      break;
    case Call::kNameCategoryA:
    case Call::kNameCategoryW:
    case Call::kDomainNameCategoryA:
    case Call::kDomainNameCategoryW:
      out += ",\"category\":";
      json::append_uint(out, r.value);
      append_text(out, "text", r, text_base);
      break;
    case Call::kNameOsThreadA:
    case Call::kNameOsThreadW:
      out += ",\"thread\":";
      json::append_uint(out, r.value);
      append_text(out, "text", r, text_base);
      break;
    case Call::kDomainRegisterStringA:
    case Call::kDomainRegisterStringW:
      out += ",\"string_id\":";
      json::append_uint(out, r.string != nullptr ? r.string->id : 0);
      out += ",\"text\":";
      out += r.string != nullptr ? std::string_view(r.string->json_text) : std::string_view("\"\"");
      break;
    case Call::kDomainResourceCreate:
    case Call::kDomainResourceDestroy:
      out += ",\"resource_id\":";
      json::append_uint(out, r.value);
      break;
    case Call::kDomainCreateA:
    case Call::kDomainCreateW:
    case Call::kDomainDestroy:
    case Call::kInitialize:
      break;
  }
  out += "}\n";
}

}  // namespace regiontrace::nvtx_record
