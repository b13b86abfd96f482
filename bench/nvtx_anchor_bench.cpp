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

// The pair as most code writes it: nvtxRangePushA with a literal, in the
// default domain. With no tool each call is a load of NVTX's function pointer
// and a branch, the floor RT_REGION is held to.
void BM_NvtxPushPopNoTool(benchmark::State& state) {
  unsetenv("NVTX_INJECTION64_PATH");
  for (auto _ : state) {
    nvtxRangePushA("bench.nvtx");
    nvtxRangePop();
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_NvtxPushPopNoTool);

}  // namespace
