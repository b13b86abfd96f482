// What the host gives a sink when it builds it: the sink's own settings
// (validated against its schema, defaults filled in), where to write, and who
// this process is in a distributed run.
#pragma once

#include "regiontrace/sdk/abi.hpp"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

REGIONTRACE_SDK_BEGIN_NAMESPACE

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// Services of the host process, passed as plain function pointers so that a
// plugin never links against libregiontrace.
struct HostApi {
  void (*log)(LogLevel level, const char* sink_name, const char* message) = nullptr;
  std::int64_t (*now_ns)() = nullptr;        // the clock events are stamped with
  std::int64_t (*current_step)() = nullptr;  // regiontrace::step()
  // When the host began closing the sinks (now_ns's clock); 0 while they
  // run. ABI 7.
  std::int64_t (*stop_ns)() = nullptr;
};

class SinkContext {
 public:
  SinkContext() = default;
  SinkContext(std::string sink_name, std::string output_dir, int rank, int local_rank,
              int world_size, long pid, const HostApi* host, int session = 0)
      : sink_name_(std::move(sink_name)),
        output_dir_(std::move(output_dir)),
        rank_(rank),
        local_rank_(local_rank),
        world_size_(world_size),
        session_(session),
        pid_(pid),
        host_(host) {}

  const std::string& sink_name() const { return sink_name_; }
  // Absolute; created by the host before the sink is built.
  const std::string& output_dir() const { return output_dir_; }
  int rank() const { return rank_; }
  int local_rank() const { return local_rank_; }
  int world_size() const { return world_size_; }
  long pid() const { return pid_; }
  // Which start of regiontrace in this process built the sink: 0 for the
  // first init(), 1 for the one after the first shutdown(), ...
  int session() const { return session_; }

  // "<output_dir>/<stem>_rank<r>_pid<p>.<extension>", and for a later
  // session "<stem>_<session>_rank<r>_pid<p>.<extension>": ranks, forked
  // processes and an init() after shutdown() never write to the same file.
  // Every file a sink names itself goes through here (the one naming rule).
  std::string output_path(std::string_view stem, std::string_view extension) const {
    std::string p = output_dir_;
    if (!p.empty() && p.back() != '/') p += '/';
    p.append(stem);
    if (session_ > 0) p += "_" + std::to_string(session_);
    p += "_rank" + std::to_string(rank_) + "_pid" + std::to_string(pid_);
    if (!extension.empty()) {
      if (extension.front() != '.') p += '.';
      p.append(extension);
    }
    return p;
  }

  // Settings. Types were checked by the host against the sink's schema, so
  // these only fail for a key the schema does not declare (a sink bug).
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const std::string& get_string(const std::string& key) const { return scalar(key); }
  bool get_bool(const std::string& key) const { return scalar(key) == "true"; }
  long long get_int(const std::string& key) const { return std::stoll(scalar(key)); }
  double get_double(const std::string& key) const { return std::stod(scalar(key)); }
  const std::vector<std::string>& get_list(const std::string& key) const { return items(key); }
  std::vector<long long> get_int_list(const std::string& key) const {
    std::vector<long long> out;
    for (const std::string& s : items(key)) out.push_back(std::stoll(s));
    return out;
  }
  const std::map<std::string, std::vector<std::string>>& values() const { return values_; }

  void log(LogLevel level, const std::string& message) const {
    if (host_ != nullptr && host_->log != nullptr)
      host_->log(level, sink_name_.c_str(), message.c_str());
  }
  void warn(const std::string& message) const { log(LogLevel::kWarn, message); }
  void info(const std::string& message) const { log(LogLevel::kInfo, message); }
  void error(const std::string& message) const { log(LogLevel::kError, message); }
  std::int64_t now_ns() const { return host_ != nullptr && host_->now_ns ? host_->now_ns() : 0; }
  // Where what is still open at close() ends: when the host began closing
  // the sinks, not when this sink's close() runs, which may come after
  // another sink's slow one (a trace export). now_ns() while running.
  std::int64_t end_of_run_ns() const {
    const std::int64_t stop = stop_ns();
    return stop != 0 ? stop : now_ns();
  }
  // When the host began closing the sinks; 0 while they run (and without
  // a host). A flush() that sees it set comes right before close().
  std::int64_t stop_ns() const { return host_ != nullptr && host_->stop_ns ? host_->stop_ns() : 0; }
  std::int64_t current_step() const {
    return host_ != nullptr && host_->current_step ? host_->current_step() : 0;
  }

  // Used by the host while building the context.
  void set_value(const std::string& key, std::vector<std::string> items) {
    values_[key] = std::move(items);
  }

 private:
  friend struct SinkContextLayout;  // tests/core/abi_layout_test.cpp checks the private layout

  const std::vector<std::string>& items(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) {
      throw std::out_of_range("regiontrace: sink '" + sink_name_ + "' read key '" + key +
                              "' that its schema does not declare");
    }
    return it->second;
  }
  const std::string& scalar(const std::string& key) const {
    const std::vector<std::string>& v = items(key);
    // Never destroyed: a sink may read its settings from close() in the
    // host's exit handler, after later-constructed statics are gone.
    static const std::string* const empty = new std::string();
    return v.empty() ? *empty : v.front();
  }

  std::string sink_name_;
  std::string output_dir_;
  int rank_ = 0;
  int local_rank_ = 0;
  int world_size_ = 1;
  int session_ = 0;  // in what was padding: the layout around it is ABI 6's
  long pid_ = 0;
  const HostApi* host_ = nullptr;
  std::map<std::string, std::vector<std::string>> values_;
};

REGIONTRACE_SDK_END_NAMESPACE
