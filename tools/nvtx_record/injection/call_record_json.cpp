#include "call_record_json.hpp"

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

void write_payload(json::Writer& w, const Record& r) {
  std::uint64_t bits = r.payload;
  switch (r.payload_type) {
    case 0:
      w.field("payload_type", nullptr).field("payload", nullptr);
      return;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
      w.field("payload_type", "uint64").field("payload", bits);
      return;
    case NVTX_PAYLOAD_TYPE_INT64:
      w.field("payload_type", "int64").field("payload", static_cast<std::int64_t>(bits));
      return;
    case NVTX_PAYLOAD_TYPE_DOUBLE: {
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      w.field("payload_type", "double").field("payload", d);
      return;
    }
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
      w.field("payload_type", "uint32").field("payload", static_cast<std::uint32_t>(bits));
      return;
    case NVTX_PAYLOAD_TYPE_INT32:
      w.field("payload_type", "int32").field("payload", static_cast<std::int32_t>(bits));
      return;
    case NVTX_PAYLOAD_TYPE_FLOAT: {
      float f;
      std::uint32_t low = static_cast<std::uint32_t>(bits);
      std::memcpy(&f, &low, sizeof(f));
      w.field("payload_type", "float").field("payload", static_cast<double>(f));
      return;
    }
    default:
      w.field("payload_type", "other").field("payload", bits);
  }
}

void write_color(json::Writer& w, const Record& r) {
  w.key("color");
  if (r.color_type != NVTX_COLOR_ARGB) {
    w.value(nullptr);
    return;
  }
  static const char kHex[] = "0123456789ABCDEF";
  char text[9] = {'#'};
  for (int i = 1, shift = 28; shift >= 0; ++i, shift -= 4) text[i] = kHex[(r.color >> shift) & 0xF];
  w.value(std::string_view(text, sizeof(text)));
}

void write_text(json::Writer& w, const char* key, const Record& r, const char* text_base) {
  w.key(key);
  if (r.has_text) {
    w.value(std::string_view(text_base + r.text_offset, r.text_length));
  } else {
    w.value(nullptr);
  }
}

void write_message(json::Writer& w, const Record& r, const char* text_base) {
  w.field("message_type", message_type_name(r.message_type));
  if (r.message_type == NVTX_MESSAGE_TYPE_REGISTERED) {
    w.key("message");
    if (r.string != nullptr) {
      w.raw_value(r.string->json_text);
    } else {
      w.value(nullptr);
    }
    w.field("string_id", r.string != nullptr ? r.string->id : 0);
  } else {
    write_text(w, "message", r, text_base);
  }
}

void write_attributes(json::Writer& w, const Record& r, const char* text_base) {
  write_message(w, r, text_base);
  write_color(w, r);
  w.field("category", r.category);
  write_payload(w, r);
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
  json::Writer w(out);
  w.begin_object()
      .field("seq", r.seq)
      .field("pid", pid)
      .field("tid", tid)
      .field("t", r.time_ns)
      .field("kind", kind_name(r.call))
      .field("call", call_name(r.call));
  w.key("domain");
  if (r.domain != nullptr) {
    w.raw_value(r.domain->json_name);
  } else {
    w.value("");
  }
  w.field("domain_id", r.domain != nullptr ? r.domain->id : 0);
  switch (r.call) {
    case Call::kMarkEx:
    case Call::kMarkA:
    case Call::kMarkW:
    case Call::kDomainMarkEx:
      write_attributes(w, r, text_base);
      break;
    case Call::kRangePushEx:
    case Call::kRangePushA:
    case Call::kRangePushW:
    case Call::kDomainRangePushEx:
      write_attributes(w, r, text_base);
      w.field("depth", r.depth);
      break;
    case Call::kRangePop:
    case Call::kDomainRangePop:
      w.field("depth", r.depth);
      break;
    case Call::kRangeStartEx:
    case Call::kRangeStartA:
    case Call::kRangeStartW:
    case Call::kDomainRangeStartEx:
      write_attributes(w, r, text_base);
      w.field("range_id", r.value);
      break;
    case Call::kRangeEnd:
    case Call::kDomainRangeEnd:
      w.field("range_id", r.value);
      break;
    case Call::kNameCategoryA:
    case Call::kNameCategoryW:
    case Call::kDomainNameCategoryA:
    case Call::kDomainNameCategoryW:
      w.field("category", r.value);
      write_text(w, "text", r, text_base);
      break;
    case Call::kNameOsThreadA:
    case Call::kNameOsThreadW:
      w.field("thread", r.value);
      write_text(w, "text", r, text_base);
      break;
    case Call::kDomainRegisterStringA:
    case Call::kDomainRegisterStringW:
      w.field("string_id", r.string != nullptr ? r.string->id : 0);
      w.key("text");
      if (r.string != nullptr) {
        w.raw_value(r.string->json_text);
      } else {
        w.value("");
      }
      break;
    case Call::kDomainResourceCreate:
    case Call::kDomainResourceDestroy:
      w.field("resource_id", r.value);
      break;
    case Call::kDomainCreateA:
    case Call::kDomainCreateW:
    case Call::kDomainDestroy:
    case Call::kInitialize:
      break;
  }
  w.end_object();
  out += '\n';
}

}  // namespace regiontrace::nvtx_record
