#include "thread_stack.hpp"

#include "region_registry.hpp"

namespace regiontrace::detail {

std::string_view ThreadStack::path(std::size_t depth) {
  if (depth > frames_.size()) depth = frames_.size();
  if (path_depth_ < depth) {
    const RegionRegistry& registry = RegionRegistry::instance();
    for (std::size_t i = path_depth_; i < depth; ++i) {
      if (i != 0) path_ += '/';
      path_ += registry.entry(frames_[i].id).name;
      frames_[i].path_end = static_cast<std::uint32_t>(path_.size());
    }
    path_depth_ = depth;
  }
  return std::string_view(path_.data(), depth == 0 ? 0 : frames_[depth - 1].path_end);
}

void ThreadStack::truncate_path(std::size_t depth) {
  if (path_depth_ > depth) {
    path_depth_ = depth;
    path_.resize(depth == 0 ? 0 : frames_[depth - 1].path_end);
  }
}

}  // namespace regiontrace::detail
