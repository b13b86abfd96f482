// One observed tensor, as the producer hands it to the writer thread: names
// copied into one allocation, statistics already computed (the tensor itself
// is only valid during the callback).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "regiontrace/sdk/events.hpp"
#include "regiontrace/tensor_stats.hpp"

namespace regiontrace::activation {

struct ActivationRecord {
  std::uint64_t seq = 0;  // set by the writer when the record is accepted
  std::int64_t step = kNoStep;
  TensorStats stats;

  ActivationRecord() = default;
  // `tensor` is the label ("out[0]"); op records are labelled "<op>:<label>".
  ActivationRecord(std::string_view module, std::string_view label, std::string_view op,
                   std::int64_t step_, TensorStats&& stats_)
      : step(step_), stats(std::move(stats_)) {
    const std::size_t tensor_size = op.empty() ? label.size() : op.size() + 1 + label.size();
    names_.reserve(module.size() + tensor_size + op.size());
    names_.append(module);
    if (!op.empty()) {
      names_.append(op);
      names_ += ':';
    }
    names_.append(label);
    names_.append(op);
    module_size_ = static_cast<std::uint32_t>(module.size());
    tensor_size_ = static_cast<std::uint32_t>(tensor_size);
  }

  std::string_view module() const { return std::string_view(names_).substr(0, module_size_); }
  std::string_view tensor() const {
    return std::string_view(names_).substr(module_size_, tensor_size_);
  }
  std::string_view op() const {
    return std::string_view(names_).substr(module_size_ + tensor_size_);
  }

 private:
  std::string names_;  // module, tensor, op back to back
  std::uint32_t module_size_ = 0;
  std::uint32_t tensor_size_ = 0;
};

}  // namespace regiontrace::activation
