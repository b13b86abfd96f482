// Symbol visibility of libregiontrace_torch.
#pragma once

#if defined(_WIN32)
#define REGIONTRACE_TORCH_API __declspec(dllexport)
#else
#define REGIONTRACE_TORCH_API __attribute__((visibility("default")))
#endif
