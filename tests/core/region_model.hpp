// The reference model of region selection and delivery, for the model-based
// test of the hot path (region_model_test.cpp). Written from the rules the
// public header and docs state, not from the dispatcher's code:
// - a region is delivered to a sink that selects its name (every name, exact
//   names, `prefix*` globs) and whose steps contain the current step (no
//   steps: every step) when it begins; its end goes to the same sinks;
// - an event sink gets begin and end events with the frame's depth and path
//   (every open region, selected or not); a span sink gets one span when it
//   ends, with the step at its end;
// - a scope's end is unwinding when more exceptions are in flight than at
//   its begin; an end() never is;
// - ending a region below others closes those above it (not unwinding),
//   then it, then reopens them, delivered as the step is now;
// - regions deeper than kMaxDepth are not recorded, nor regions while no
//   sink runs.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "regiontrace/sdk/events.hpp"

namespace regiontrace::test::model {

constexpr int kSinkCount = 4;  // 1, 2: region events; 3, 4: spans
constexpr bool is_span_sink(int sink) {
  return sink >= 3;
}
constexpr std::size_t kMaxDepth = 256;

struct SinkSetup {
  bool on = false;
  std::vector<std::string> regions;  // empty: every region; "x*": a prefix
  std::set<std::int64_t> steps;      // empty: every step
  bool timed = true;                 // event sinks only

  bool selects(std::string_view name) const {
    if (regions.empty()) return true;
    for (const std::string& r : regions) {
      if (!r.empty() && r.back() == '*') {
        if (name.substr(0, r.size() - 1) == std::string_view(r).substr(0, r.size() - 1)) {
          return true;
        }
      } else if (name == r) {
        return true;
      }
    }
    return false;
  }
  bool takes_step(std::int64_t step) const {
    if (steps.empty()) return true;
    return step != kNoStep && steps.count(step) != 0;
  }
};

// What one sink should get, as text: "b|name|depth|step|path",
// "e|name|depth|step|unwinding|path", "s|name|depth|step|unwinding".
struct Expected {
  int sink = 0;
  std::string line;
};

class ThreadModel {
 public:
  ThreadModel(const SinkSetup* sinks, const bool* running, const std::int64_t* step)
      : sinks_(sinks), running_(running), step_(step) {}

  // A region entered: returns its key for end(), 0 when it was not pushed.
  int enter(const std::string& name, int in_flight) {
    if (!*running_ || stack_.size() == kMaxDepth) return 0;
    Frame f{name, next_key_++, delivered_now(name), in_flight};
    push(f);
    return f.key;
  }

  // The region of `key` ends; `in_flight`: exceptions in flight now (a
  // scope's end), or -1 for end(), which is never unwinding.
  void end(int key, int in_flight) {
    if (key == 0) return;
    std::size_t i = stack_.size();
    while (i > 0 && stack_[i - 1].key != key) --i;
    if (i == 0) return;  // not open (ended by a restart, say)
    const std::size_t index = i - 1;
    const std::vector<Frame> above(stack_.begin() + static_cast<long>(index) + 1, stack_.end());
    while (stack_.size() > index + 1) pop(false);
    pop(in_flight >= 0 && in_flight > stack_.back().uncaught);
    for (Frame f : above) {
      f.delivered = delivered_now(f.name);
      f.uncaught = in_flight < 0 ? 0 : in_flight;
      push(f);
    }
  }

  // The sinks stopped: what they hold was collected; frames stay unpushed.
  void stopped() { stack_.clear(); }

  std::size_t depth() const { return stack_.size(); }
  std::vector<Expected>& out() { return out_; }

 private:
  struct Frame {
    std::string name;
    int key = 0;
    unsigned delivered = 0;  // bit s: sink s got it
    int uncaught = 0;
  };

  unsigned delivered_now(const std::string& name) const {
    unsigned d = 0;
    for (int s = 1; s <= kSinkCount; ++s) {
      if (sinks_[s].on && sinks_[s].selects(name) && sinks_[s].takes_step(*step_)) d |= 1u << s;
    }
    return d;
  }

  std::string path() const {
    std::string p;
    for (const Frame& f : stack_) {
      if (!p.empty()) p += '/';
      p += f.name;
    }
    return p;
  }

  void push(const Frame& f) {
    stack_.push_back(f);
    const std::string head = f.name + "|" + std::to_string(stack_.size() - 1) + "|" +
                             std::to_string(*step_) + "|" + path();
    for (int s = 1; s <= kSinkCount; ++s) {
      if ((f.delivered & (1u << s)) != 0 && !is_span_sink(s)) out_.push_back({s, "b|" + head});
    }
  }

  void pop(bool unwinding) {
    const Frame& f = stack_.back();
    const std::string common = f.name + "|" + std::to_string(stack_.size() - 1) + "|" +
                               std::to_string(*step_) + "|" + (unwinding ? "1" : "0");
    for (int s = 1; s <= kSinkCount; ++s) {
      if ((f.delivered & (1u << s)) == 0) continue;
      if (is_span_sink(s)) {
        out_.push_back({s, "s|" + common});
      } else {
        out_.push_back({s, "e|" + common + "|" + path()});
      }
    }
    stack_.pop_back();
  }

  const SinkSetup* sinks_;  // [1, kSinkCount]
  const bool* running_;
  const std::int64_t* step_;
  std::vector<Frame> stack_;
  std::vector<Expected> out_;
  int next_key_ = 1;
};

}  // namespace regiontrace::test::model
