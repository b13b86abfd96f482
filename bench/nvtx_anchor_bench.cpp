// Anchor: NVTX3 push/pop in a domain with a registered string, no tool
// attached (what every NVTX-instrumented library pays when Nsight is absent).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>

namespace {

void BM_NvtxRawNoTool(benchmark::State& state) {
  unsetenv("NVTX_INJECTION64_PATH");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("regiontrace_bench");
  nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "bench.nvtx");
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = name;
  for (auto _ : state) {
    nvtxDomainRangePushEx(domain, &attr);
    nvtxDomainRangePop(domain);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_NvtxRawNoTool);

}  // namespace
