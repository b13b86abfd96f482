// Anchor: NVTX push/pop with a registered string, colour and payload (what
// the nvtx sink sends), the recording tool attached and writing to
// /dev/null: the cost of a range that a tool records.
#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>

#include <cstring>

#include "timeline_bench_anchors.hpp"

namespace regiontrace::bench {

void prepare_anchors() {
  setenv("NVTX_INJECTION64_PATH", REGIONTRACE_NVTX_INJECTION, 1);
  setenv("NVTX_RECORD_FILE", "/dev/null", 0);
}

namespace {

void BM_NvtxRawWithTool(benchmark::State& state) {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("bench_timeline");
  static nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "bench.nvtx");
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof(a));
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF4C72B0;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = name;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = 7;
  for (auto _ : state) {
    nvtxDomainRangePushEx(domain, &a);
    nvtxDomainRangePop(domain);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_NvtxRawWithTool);

}  // namespace
}  // namespace regiontrace::bench
