// While the sink listens, libtorch's CPU allocator logs a warning when a
// tensor allocated before the sink started is freed ("Memory block of
// unknown size was allocated before the profiling started"). It is expected
// and harmless (docs/memory.md). The sink raises libtorch's log threshold to
// errors while it runs and puts it back when it closes. libtorch logs
// through c10's own logger (PyPI wheels: FLAGS_caffe2_log_level) or through
// glog where it was built with it; there a program that set glog up keeps
// its own threshold.
#pragma once

namespace regiontrace::memory {

class TorchLogQuiet {
 public:
  TorchLogQuiet();
  ~TorchLogQuiet() { restore(); }
  TorchLogQuiet(const TorchLogQuiet&) = delete;
  TorchLogQuiet& operator=(const TorchLogQuiet&) = delete;
  void restore();

 private:
  bool changed_ = false;
  int previous_ = 0;
};

}  // namespace regiontrace::memory
