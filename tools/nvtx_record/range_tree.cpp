#include "range_tree.hpp"

#include <algorithm>
#include <utility>

namespace regiontrace::nvtx_record {
namespace {

const std::string& shown(const std::string& message) {
  static const std::string none = "(no message)";
  return message.empty() ? none : message;
}

// Builds one process's trees from its calls (already in seq order).
class ProcessBuilder {
 public:
  explicit ProcessBuilder(long pid) { process_.pid = pid; }

  void add(const NvtxCall& c) {
    last_t_ = std::max(last_t_, c.t);
    if (c.kind == "push") {
      Open& o = stack(c.tid, c.domain);
      RangeNode* parent = o.frames.empty() ? &tree(o).root : o.frames.back().node;
      o.frames.push_back({parent->child(shown(c.message), false), c.t});
    } else if (c.kind == "pop") {
      Open& o = stack(c.tid, c.domain);
      if (o.frames.empty()) {
        ++tree(o).unmatched_pops;
      } else {
        o.frames.back().node->add(c.t - o.frames.back().start);
        o.frames.pop_back();
      }
    } else if (c.kind == "mark") {
      Open& o = stack(c.tid, c.domain);
      RangeNode* parent = o.frames.empty() ? &tree(o).root : o.frames.back().node;
      parent->child(shown(c.message), true)->count++;
    } else if (c.kind == "range_start") {
      started_[c.range_id] = {c.domain, shown(c.message), c.t};
    } else if (c.kind == "range_end") {
      auto it = started_.find(c.range_id);
      if (it == started_.end()) return;
      process_.start_end_ranges[it->second.domain]
          .child(it->second.name, false)
          ->add(c.t - it->second.start);
      started_.erase(it);
    } else if (c.kind == "name_thread") {
      thread_names_[static_cast<long>(c.thread)] = c.text;
    }
  }

  ProcessTree finish() {
    // Ranges still open when the process ended last until its last call.
    for (auto& [key, o] : stacks_) {
      for (const Frame& f : o.frames) {
        f.node->add(last_t_ - f.start);
        f.node->open++;
      }
    }
    for (auto& [id, s] : started_) {
      RangeNode* n = process_.start_end_ranges[s.domain].child(s.name, false);
      n->add(last_t_ - s.start);
      n->open++;
    }
    for (ThreadTree& t : process_.threads) {
      auto it = thread_names_.find(t.tid);
      if (it != thread_names_.end()) t.name = it->second;
    }
    return std::move(process_);
  }

 private:
  struct Frame {
    RangeNode* node;
    std::int64_t start;
  };
  struct Open {
    std::size_t thread = 0;
    std::size_t domain = 0;
    std::vector<Frame> frames;
  };
  struct Started {
    std::string domain;
    std::string name;
    std::int64_t start;
  };

  Open& stack(long tid, const std::string& domain) {
    auto key = std::make_pair(tid, domain);
    auto it = stacks_.find(key);
    if (it != stacks_.end()) return it->second;
    Open o;
    auto t = std::find_if(process_.threads.begin(), process_.threads.end(),
                          [tid](const ThreadTree& x) { return x.tid == tid; });
    if (t == process_.threads.end()) {
      process_.threads.push_back(ThreadTree{tid, {}, {}});
      t = process_.threads.end() - 1;
    }
    o.thread = static_cast<std::size_t>(t - process_.threads.begin());
    o.domain = t->domains.size();
    t->domains.push_back(DomainTree{domain, {}, 0});
    return stacks_.emplace(std::move(key), std::move(o)).first->second;
  }
  // By index: the vectors grow, but nodes (heap-allocated) never move.
  DomainTree& tree(const Open& o) { return process_.threads[o.thread].domains[o.domain]; }

  ProcessTree process_;
  std::map<std::pair<long, std::string>, Open> stacks_;
  std::map<std::uint64_t, Started> started_;
  std::map<long, std::string> thread_names_;
  std::int64_t last_t_ = 0;
};

bool wanted(const NvtxCall& c, const std::vector<std::string>& domains) {
  if (domains.empty()) return true;
  if (c.kind == "name_thread") return true;
  return std::find(domains.begin(), domains.end(), c.domain) != domains.end();
}

}  // namespace

RangeNode* RangeNode::child(const std::string& child_name, bool mark) {
  for (auto& c : children) {
    if (c->name == child_name && c->is_mark == mark) return c.get();
  }
  children.push_back(std::make_unique<RangeNode>());
  children.back()->name = child_name;
  children.back()->is_mark = mark;
  return children.back().get();
}

void RangeNode::add(std::int64_t duration_ns) {
  ++count;
  total_ns += duration_ns;
  min_ns = std::min(min_ns, duration_ns);
  max_ns = std::max(max_ns, duration_ns);
}

RangeForest build_forest(const CallLog& log, const std::vector<std::string>& domains) {
  RangeForest forest;
  forest.malformed_lines = log.malformed_lines;
  std::size_t i = 0;
  while (i < log.calls.size()) {
    const long pid = log.calls[i].pid;
    ProcessBuilder builder(pid);
    for (; i < log.calls.size() && log.calls[i].pid == pid; ++i) {
      if (wanted(log.calls[i], domains)) builder.add(log.calls[i]);
    }
    ProcessTree p = builder.finish();
    if (!p.threads.empty() || !p.start_end_ranges.empty()) forest.processes.push_back(std::move(p));
  }
  return forest;
}

}  // namespace regiontrace::nvtx_record
