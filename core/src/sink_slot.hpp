// A running sink and the selection the dispatcher applies for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "region_filter.hpp"
#include "regiontrace/sdk/sink.hpp"
#include "step_filter.hpp"

namespace regiontrace::detail {

struct SinkSlot {
  int index = 0;  // bit in every routing mask
  std::string name;
  std::string plugin_file;
  Sink* sink = nullptr;  // never deleted: callbacks on other threads may race close()
  std::uint32_t interests = 0;
  RegionFilter regions;
  StepFilter steps;
  std::atomic<bool> failed{false};
};

}  // namespace regiontrace::detail
