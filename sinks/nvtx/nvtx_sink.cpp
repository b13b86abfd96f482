#include "nvtx_sink.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace regiontrace::nvtx {

NvtxSink::NvtxSink(const SinkContext& ctx)
    : settings_([&ctx] {
        try {
          return NvtxSettings::from(ctx);
        } catch (const std::invalid_argument& e) {
          throw std::runtime_error("sinks.nvtx." + std::string(e.what()));
        }
      }()),
      mark_prefix_(settings_.prefix + ".mark::") {
  // NVTX reads NVTX_INJECTION64_PATH at its first call, here; a tool cannot
  // attach later, so what we learn now holds for the whole run.
  if (!settings_.domain.empty()) domain_ = nvtxDomainCreateA(settings_.domain.c_str());
  step_string_ = nvtxDomainRegisterStringA(domain_, (settings_.prefix + ".step").c_str());
  tool_attached_ = step_string_ != nullptr;
  if (!tool_attached_) {
    ctx.info(
        "no NVTX tool attached (run under Nsight Systems, `nsys profile`, or "
        "regiontrace-nvtx-record); NVTX ranges would go nowhere, so this sink asks for no events");
  }
}

std::uint32_t NvtxSink::interests() const {
  if (!tool_attached_) return 0;
  std::uint32_t i = kInterestRegions | kWritesNoFiles;
  if (settings_.marks) i |= kInterestMarks;
  if (settings_.step_marks) i |= kInterestSteps;
  return i;
}

nvtxEventAttributes_t NvtxSink::blank_attributes() {
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof(a));
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

std::uint32_t NvtxSink::category_of(std::string_view region_name) {
  // A family is the name up to the first '.' or '/': `blocks.3` -> `blocks`.
  const std::string_view family = region_name.substr(0, region_name.find_first_of("./"));
  auto it = categories_.find(family);
  if (it != categories_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(categories_.size() + 1);  // 0 means none in NVTX
  const std::string name(family);
  categories_.emplace(name, id);
  nvtxDomainNameCategoryA(domain_, id, name.c_str());
  return id;
}

void NvtxSink::on_region_routed(const RegionInfo& info) {
  if (!tool_attached_) return;
  std::lock_guard<std::mutex> lock(routed_mutex_);
  if (regions_.find(info.id) != nullptr) return;
  RegionEntry entry;
  entry.attributes = blank_attributes();
  const std::string message = settings_.prefix + ".region::" + std::string(info.name);
  entry.attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  entry.attributes.message.registered = nvtxDomainRegisterStringA(domain_, message.c_str());
  entry.attributes.colorType = NVTX_COLOR_ARGB;
  entry.attributes.color = region_color(info.name, info.color, settings_.colors);
  if (settings_.categories) entry.attributes.category = category_of(info.name);
  regions_.set(info.id, entry);
}

void NvtxSink::put_payload(nvtxEventAttributes_t& a, std::int64_t step) const {
  if (settings_.step_payload && step != kNoStep) {
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = step;
  }
}

void NvtxSink::on_region_begin(const RegionEvent& e) {
  if (closed_.load(std::memory_order_relaxed)) return;
  const RegionEntry* r = regions_.find(e.id);
  if (r == nullptr) return;
  nvtxEventAttributes_t a = r->attributes;
  put_payload(a, e.step);
  nvtxDomainRangePushEx(domain_, &a);
}

void NvtxSink::on_region_end(const RegionEvent& e) {
  // Pop only what on_region_begin pushed: the same lookup decides both.
  if (closed_.load(std::memory_order_relaxed) || regions_.find(e.id) == nullptr) return;
  nvtxDomainRangePop(domain_);
}

void NvtxSink::on_step(const StepEvent& e) {
  if (closed_.load(std::memory_order_relaxed) || !settings_.step_marks) return;
  nvtxEventAttributes_t a = blank_attributes();
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = step_string_;
  put_payload(a, e.step);
  nvtxDomainMarkEx(domain_, &a);
}

void NvtxSink::on_mark(const MarkEvent& e) {
  if (closed_.load(std::memory_order_relaxed) || !settings_.marks) return;
  // Mark names are arbitrary and come as string_views: build the NUL-ended
  // message in a per-thread buffer (truncated if absurdly long), never on
  // the heap.
  thread_local char text[512];
  const std::size_t p = std::min(mark_prefix_.size(), sizeof(text) - 1);
  std::memcpy(text, mark_prefix_.data(), p);
  const std::size_t n = std::min(e.name.size(), sizeof(text) - 1 - p);
  std::memcpy(text + p, e.name.data(), n);
  text[p + n] = '\0';
  nvtxEventAttributes_t a = blank_attributes();
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;
  put_payload(a, e.step);
  nvtxDomainMarkEx(domain_, &a);
}

void NvtxSink::close() {
  // Ranges still open on other threads stay open in the tool: NVTX has no
  // way to pop another thread's range. The domain is never destroyed since
  // callbacks racing with close() may still use it.
  closed_.store(true);
}

}  // namespace regiontrace::nvtx

REGIONTRACE_SINK_PLUGIN(regiontrace::nvtx::NvtxSink, "nvtx")
