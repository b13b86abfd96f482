// The `region_stats` sink: per region path (and per thread, per step) count,
// total, self time, mean, min, max and percentiles; a table at shutdown,
// region_stats_rank<r>_pid<p>.json, and Prometheus metrics live (an HTTP
// endpoint) or in a textfile. Guide: docs/region-stats.md.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>

#include "metrics_server.hpp"
#include "prometheus_metrics.hpp"
#include "region_stats_settings.hpp"
#include "regiontrace/plugin.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "stats_report.hpp"
#include "textfile_exporter.hpp"
#include "thread_registry.hpp"

namespace regiontrace::region_stats {

class RegionStatsSink : public Sink {
 public:
  static SinkSchema schema() { return RegionStatsSettings::schema(); }
  explicit RegionStatsSink(const SinkContext& ctx);
  ~RegionStatsSink() override;

  std::uint32_t interests() const override {
    return kInterestRegions | kInterestSteps | kInterestTimestamps;
  }
  void on_region_begin(const RegionEvent& e) override {
    if (!closed_.load(std::memory_order_relaxed)) threads_.for_thread(e.thread_id).begin(e);
  }
  void on_region_end(const RegionEvent& e) override {
    if (!closed_.load(std::memory_order_relaxed)) threads_.for_thread(e.thread_id).end(e);
  }
  void on_step(const StepEvent& e) override;
  void close() override;

 private:
  std::vector<prometheus::MetricFamily> collect() const;
  void write_outputs();

  const SinkContext ctx_;
  const RegionStatsSettings settings_;
  const sdk::clock_sync::Pair start_pair_;
  const std::int64_t start_ns_;
  ThreadRegistry threads_;
  std::atomic<bool> closed_{false};
  std::mutex close_mutex_;

  std::mutex steps_mutex_;
  std::deque<StepSpan> step_spans_;
  std::uint64_t steps_seen_ = 0;

  std::unique_ptr<MetricsServer> server_;
  std::unique_ptr<TextfileExporter> textfile_;
};

}  // namespace regiontrace::region_stats
