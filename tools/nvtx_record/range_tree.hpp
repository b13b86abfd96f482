// NVTX calls folded into what a timeline viewer shows: per process, per
// thread, per domain, the nested ranges, with the ranges of the same name
// under the same parent merged (count, total, min, max), and the marks
// placed in the range they happened in. Start/end ranges, which need not
// nest or stay on one thread, are listed per domain beside the tree.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "call_records.hpp"

namespace regiontrace::nvtx_record {

struct RangeNode {
  std::string name;
  bool is_mark = false;
  std::uint64_t count = 0;
  std::uint64_t open = 0;  // still open when the process ended (timed to its last call)
  std::int64_t total_ns = 0;
  std::int64_t min_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ns = 0;
  std::vector<std::unique_ptr<RangeNode>> children;  // in order of first appearance

  RangeNode* child(const std::string& child_name, bool mark);
  void add(std::int64_t duration_ns);
};

struct DomainTree {
  std::string domain;
  RangeNode root;
  std::uint64_t unmatched_pops = 0;  // pops with nothing open: a bug in the program
};

struct ThreadTree {
  long tid = 0;
  std::string name;  // from nvtxNameOsThread, if any
  std::vector<DomainTree> domains;
};

struct ProcessTree {
  long pid = 0;
  std::vector<ThreadTree> threads;
  std::map<std::string, RangeNode> start_end_ranges;  // per domain, children by name
};

struct RangeForest {
  std::vector<ProcessTree> processes;
  std::size_t malformed_lines = 0;
};

// Only `domains` when not empty.
RangeForest build_forest(const CallLog& log, const std::vector<std::string>& domains = {});

}  // namespace regiontrace::nvtx_record
