// The `nvtx` sink: every selected region becomes an NVTX range in a domain,
// seen by Nsight Systems (or any NVTX tool, e.g. regiontrace-nvtx-record).
//
// Per region, once (on_region_routed): a registered string
// `<prefix>.region::<name>`, a colour and a category, kept in a lock-free
// table by RegionId. Per event: one attributes copy, the step as int64
// payload, and nvtxDomainRangePushEx / nvtxDomainRangePop on the calling
// thread (the host guarantees an end arrives on its begin's thread). No
// allocation, no lock, no string work on the hot path.
//
// With no NVTX tool attached, NVTX calls are no-ops: the sink notices at
// start-up (the tool hands out registered-string handles, nobody else does),
// says so once and asks the host for no events at all.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "nvtx_settings.hpp"
#include "region_table.hpp"
#include "regiontrace/plugin.hpp"

namespace regiontrace::nvtx {

class NvtxSink : public Sink {
 public:
  static SinkSchema schema() { return NvtxSettings::schema(); }
  explicit NvtxSink(const SinkContext& ctx);

  std::uint32_t interests() const override;
  // Host's registry lock held; once per region, before its first event.
  void on_region_routed(const RegionInfo& info) override;
  // Application threads, concurrently; never block.
  void on_region_begin(const RegionEvent& e) override;
  void on_region_end(const RegionEvent& e) override;
  void on_step(const StepEvent& e) override;
  void on_mark(const MarkEvent& e) override;
  // NVTX has nothing to flush; later callbacks are ignored.
  void close() override;

 private:
  struct RegionEntry {
    nvtxEventAttributes_t attributes;
  };
  static nvtxEventAttributes_t blank_attributes();
  std::uint32_t category_of(std::string_view region_name);  // routed_mutex_ held
  void put_payload(nvtxEventAttributes_t& a, std::int64_t step) const;

  const NvtxSettings settings_;
  nvtxDomainHandle_t domain_ = nullptr;
  nvtxStringHandle_t step_string_ = nullptr;
  bool tool_attached_ = false;
  std::string mark_prefix_;  // "<prefix>.mark::"
  RegionTable<RegionEntry> regions_;
  std::mutex routed_mutex_;  // categories_ (the host serialises routing, this is cheap insurance)
  std::map<std::string, std::uint32_t, std::less<>> categories_;
  std::atomic<bool> closed_{false};
};

}  // namespace regiontrace::nvtx
