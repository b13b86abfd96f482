// An NVTX tool that records every NVTX call to a JSONL file: what Nsight
// Systems would see, on a machine without a GPU or Nsight.
//
// Attach it to any program that uses NVTX3 (the `nvtx` sink, nvtx3::
// scoped_range, nvtxRangePushA, libraries built with NVTX):
//
//   export NVTX_INJECTION64_PATH=/path/to/libregiontrace_nvtx_record.so
//   NVTX_RECORD_FILE=/tmp/calls_%p.jsonl ./my_program
//
// or let `regiontrace-nvtx-record -- ./my_program` do it and print the ranges
// as a tree. `%p` in NVTX_RECORD_FILE becomes the process id (default:
// $TMPDIR/nvtx_record_%p.jsonl); the file is appended to.
//
// One line per call, in `seq` order within a thread (sort by `seq` for the
// order across threads):
//   seq, pid, tid, t (CLOCK_MONOTONIC ns), kind, call (the NVTX function),
//   domain (name, "" for NVTX's default domain), domain_id (0 for default)
// and by kind:
//   push, mark, range_start: message_type ("registered", "ascii", "unicode",
//     "none"), message (the text, registered strings resolved), string_id
//     (registered only), color ("#AARRGGBB" or null), category,
//     payload_type ("int64", "uint64", "double", ... or null), payload;
//     push also depth (level opened), range_start also range_id
//   pop: depth (level closed; -1 when nothing was open in that domain)
//   range_end: range_id
//   register_string: string_id, text          domain_create: (domain)
//   name_category: category, text             name_thread: thread, text
//   resource_create / resource_destroy: resource_id
//
// NVTX is header-only: every shared object that uses it keeps its own state
// and calls InitializeInjectionNvtx2 once; all of them share this library,
// its handles and its file. regiontrace_nvtx_record_flush() writes what is
// buffered (tests call it through dlsym).
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "record_store.hpp"

namespace regiontrace::nvtx_record {
namespace {

ThreadBuffer& buf() {
  return this_thread_buffer();
}

void copy_attributes(ThreadBuffer& b, Record& r, const nvtxEventAttributes_t* a) {
  if (a == nullptr) {
    r.message_type = NVTX_MESSAGE_UNKNOWN;
    return;
  }
  // Older callers may pass a shorter struct: read only what `size` covers.
  nvtxEventAttributes_t full;
  std::memset(&full, 0, sizeof(full));
  std::memcpy(&full, a, std::min<std::size_t>(a->size != 0 ? a->size : sizeof(full), sizeof(full)));
  r.category = full.category;
  r.color_type = static_cast<std::int8_t>(full.colorType);
  r.color = full.color;
  r.payload_type = full.payloadType;
  std::memcpy(&r.payload, &full.payload, sizeof(r.payload));
  r.message_type = static_cast<std::int8_t>(full.messageType);
  switch (full.messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      b.set_text(full.message.ascii);
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      b.set_text(full.message.unicode);
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      b.current().string = reinterpret_cast<const RegisteredString*>(full.message.registered);
      break;
    default:
      break;
  }
}

template <typename Text>
void record_text_call(Call call, const Domain* domain, const Text* text, std::int8_t type,
                      std::uint64_t value = 0) {
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.domain = domain;
  r.message_type = type;
  r.value = value;
  b.set_text(text);
  b.commit();
}

// --- marks and ranges -------------------------------------------------------

void mark_ex(const Domain* d, Call call, const nvtxEventAttributes_t* a) {
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.domain = d;
  copy_attributes(b, r, a);
  b.commit();
}

int push_ex(const Domain* d, Call call, const nvtxEventAttributes_t* a) {
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.domain = d;
  copy_attributes(b, r, a);
  const std::int32_t depth = b.push_level(d);
  b.current().depth = depth;
  b.commit();
  return depth;
}

template <typename Text>
int push_text(Call call, const Text* text, std::int8_t type) {
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.message_type = type;
  b.set_text(text);
  const std::int32_t depth = b.push_level(nullptr);
  b.current().depth = depth;
  b.commit();
  return depth;
}

int pop(const Domain* d, Call call) {
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.domain = d;
  r.depth = b.pop_level(d);
  const std::int32_t depth = r.depth;
  b.commit();
  return depth;
}

nvtxRangeId_t start_ex(const Domain* d, Call call, const nvtxEventAttributes_t* a) {
  const std::uint64_t id = next_range_id();
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.domain = d;
  r.value = id;
  copy_attributes(b, r, a);
  b.commit();
  return id;
}

template <typename Text>
nvtxRangeId_t start_text(Call call, const Text* text, std::int8_t type) {
  const std::uint64_t id = next_range_id();
  record_text_call(call, nullptr, text, type, id);
  return id;
}

void end(const Domain* d, Call call, nvtxRangeId_t id) {
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.domain = d;
  r.value = id;
  b.commit();
}

const Domain* dom(nvtxDomainHandle_t d) {
  return reinterpret_cast<const Domain*>(d);
}

// CORE: the calls without a domain (NVTX's default domain).
void NVTX_API MarkEx(const nvtxEventAttributes_t* a) {
  mark_ex(nullptr, Call::kMarkEx, a);
}
void NVTX_API MarkA(const char* m) {
  record_text_call(Call::kMarkA, nullptr, m, NVTX_MESSAGE_TYPE_ASCII);
}
void NVTX_API MarkW(const wchar_t* m) {
  record_text_call(Call::kMarkW, nullptr, m, NVTX_MESSAGE_TYPE_UNICODE);
}
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) {
  return start_ex(nullptr, Call::kRangeStartEx, a);
}
nvtxRangeId_t NVTX_API RangeStartA(const char* m) {
  return start_text(Call::kRangeStartA, m, NVTX_MESSAGE_TYPE_ASCII);
}
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* m) {
  return start_text(Call::kRangeStartW, m, NVTX_MESSAGE_TYPE_UNICODE);
}
void NVTX_API RangeEnd(nvtxRangeId_t id) {
  end(nullptr, Call::kRangeEnd, id);
}
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) {
  return push_ex(nullptr, Call::kRangePushEx, a);
}
int NVTX_API RangePushA(const char* m) {
  return push_text(Call::kRangePushA, m, NVTX_MESSAGE_TYPE_ASCII);
}
int NVTX_API RangePushW(const wchar_t* m) {
  return push_text(Call::kRangePushW, m, NVTX_MESSAGE_TYPE_UNICODE);
}
int NVTX_API RangePop() {
  return pop(nullptr, Call::kRangePop);
}
void NVTX_API NameCategoryA(uint32_t category, const char* name) {
  record_text_call(Call::kNameCategoryA, nullptr, name, kNoMessage, category);
}
void NVTX_API NameCategoryW(uint32_t category, const wchar_t* name) {
  record_text_call(Call::kNameCategoryW, nullptr, name, kNoMessage, category);
}
void NVTX_API NameOsThreadA(uint32_t thread, const char* name) {
  record_text_call(Call::kNameOsThreadA, nullptr, name, kNoMessage, thread);
}
void NVTX_API NameOsThreadW(uint32_t thread, const wchar_t* name) {
  record_text_call(Call::kNameOsThreadW, nullptr, name, kNoMessage, thread);
}

// CORE2: domains, registered strings, resources.
void NVTX_API DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  mark_ex(dom(d), Call::kDomainMarkEx, a);
}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return start_ex(dom(d), Call::kDomainRangeStartEx, a);
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  end(dom(d), Call::kDomainRangeEnd, id);
}
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return push_ex(dom(d), Call::kDomainRangePushEx, a);
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) {
  return pop(dom(d), Call::kDomainRangePop);
}
nvtxResourceHandle_t NVTX_API DomainResourceCreate(nvtxDomainHandle_t d,
                                                   nvtxResourceAttributes_t* attributes) {
  (void)attributes;
  nvtxResourceHandle* h = new_resource();
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(Call::kDomainResourceCreate);
  r.domain = dom(d);
  r.value = h->id;
  b.commit();
  return h;
}
void NVTX_API DomainResourceDestroy(nvtxResourceHandle_t h) {
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(Call::kDomainResourceDestroy);
  r.value = h != nullptr ? h->id : 0;
  b.commit();
}
void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char* name) {
  record_text_call(Call::kDomainNameCategoryA, dom(d), name, kNoMessage, category);
}
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
  record_text_call(Call::kDomainNameCategoryW, dom(d), name, kNoMessage, category);
}

nvtxStringHandle_t register_and_record(Call call, nvtxDomainHandle_t d, const std::string& text) {
  RegisteredString* s = register_string(dom(d), text);
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.domain = dom(d);
  r.string = s;
  b.commit();
  return s;
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t d, const char* text) {
  return register_and_record(Call::kDomainRegisterStringA, d, text != nullptr ? text : "");
}
std::string narrow(const wchar_t* text) {
  // Handles are what matter here; non-ASCII wide names keep their code
  // points as UTF-8 through the same path as messages.
  std::string out;
  for (const wchar_t* p = text; p != nullptr && *p != 0; ++p) {
    const auto c = static_cast<std::uint32_t>(*p);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t* text) {
  return register_and_record(Call::kDomainRegisterStringW, d, narrow(text));
}

nvtxDomainHandle_t create_and_record(Call call, const std::string& name) {
  Domain* d = domain_named(name);
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(call);
  r.domain = d;
  b.commit();
  return d;
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  return create_and_record(Call::kDomainCreateA, name != nullptr ? name : "");
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) {
  return create_and_record(Call::kDomainCreateW, narrow(name));
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t d) {
  // The handle stays valid: records still point at it, and NVTX domains are
  // names, created again by the next DomainCreate.
  ThreadBuffer& b = buf();
  Record& r = b.begin_record(Call::kDomainDestroy);
  r.domain = dom(d);
  b.commit();
}
void NVTX_API Initialize(const void* reserved) {
  (void)reserved;
  ThreadBuffer& b = buf();
  b.begin_record(Call::kInitialize);
  b.commit();
}

template <typename Fn>
void install(NvtxFunctionTable table, unsigned int size, unsigned int id, Fn fn) {
  if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

bool fill_core(const NvtxExportTableCallbacks* callbacks) {
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || t == nullptr) return false;
  install(t, n, NVTX_CBID_CORE_MarkEx, MarkEx);
  install(t, n, NVTX_CBID_CORE_MarkA, MarkA);
  install(t, n, NVTX_CBID_CORE_MarkW, MarkW);
  install(t, n, NVTX_CBID_CORE_RangeStartEx, RangeStartEx);
  install(t, n, NVTX_CBID_CORE_RangeStartA, RangeStartA);
  install(t, n, NVTX_CBID_CORE_RangeStartW, RangeStartW);
  install(t, n, NVTX_CBID_CORE_RangeEnd, RangeEnd);
  install(t, n, NVTX_CBID_CORE_RangePushEx, RangePushEx);
  install(t, n, NVTX_CBID_CORE_RangePushA, RangePushA);
  install(t, n, NVTX_CBID_CORE_RangePushW, RangePushW);
  install(t, n, NVTX_CBID_CORE_RangePop, RangePop);
  install(t, n, NVTX_CBID_CORE_NameCategoryA, NameCategoryA);
  install(t, n, NVTX_CBID_CORE_NameCategoryW, NameCategoryW);
  install(t, n, NVTX_CBID_CORE_NameOsThreadA, NameOsThreadA);
  install(t, n, NVTX_CBID_CORE_NameOsThreadW, NameOsThreadW);
  return true;
}

bool fill_core2(const NvtxExportTableCallbacks* callbacks) {
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || t == nullptr) {
    return false;
  }
  install(t, n, NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, DomainRangeStartEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangeEnd, DomainRangeEnd);
  install(t, n, NVTX_CBID_CORE2_DomainRangePushEx, DomainRangePushEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangePop, DomainRangePop);
  install(t, n, NVTX_CBID_CORE2_DomainResourceCreate, DomainResourceCreate);
  install(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, DomainResourceDestroy);
  install(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, DomainNameCategoryA);
  install(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, DomainNameCategoryW);
  install(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, DomainRegisterStringA);
  install(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, DomainRegisterStringW);
  install(t, n, NVTX_CBID_CORE2_DomainCreateA, DomainCreateA);
  install(t, n, NVTX_CBID_CORE2_DomainCreateW, DomainCreateW);
  install(t, n, NVTX_CBID_CORE2_DomainDestroy, DomainDestroy);
  install(t, n, NVTX_CBID_CORE2_Initialize, Initialize);
  return true;
}

}  // namespace
}  // namespace regiontrace::nvtx_record

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  using namespace regiontrace::nvtx_record;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  start_store();
  if (!fill_core(callbacks) || !fill_core2(callbacks)) return 0;
  const auto* version =
      static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
  if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  return 1;
}

// Writes every buffered record now (tests call it before reading the file).
extern "C" __attribute__((visibility("default"))) void regiontrace_nvtx_record_flush() {
  regiontrace::nvtx_record::flush_store();
}

// The file this process records to.
extern "C" __attribute__((visibility("default"))) const char* regiontrace_nvtx_record_path() {
  return regiontrace::nvtx_record::record_path().c_str();
}
