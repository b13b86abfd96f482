// While the sink listens, libtorch's CPU allocator logs through glog when a
// tensor allocated before the sink started is freed ("Memory block of
// unknown size was allocated before the profiling started"), prefixed by
// glog's "Logging before InitGoogleLogging()" in a program that never set
// glog up. Both are expected and harmless (docs/memory.md). In such a
// program the sink raises glog's threshold to errors while it runs, and puts
// it back when it closes; a program that initialised glog keeps its own.
#pragma once

namespace regiontrace::memory {

class GlogQuiet {
 public:
  GlogQuiet();
  ~GlogQuiet() { restore(); }
  GlogQuiet(const GlogQuiet&) = delete;
  GlogQuiet& operator=(const GlogQuiet&) = delete;
  void restore();

 private:
  bool changed_ = false;
  int previous_ = 0;
};

}  // namespace regiontrace::memory
