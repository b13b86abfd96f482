#include "region_stats_sink.hpp"

#include <cmath>
#include <iostream>
#include <stdexcept>

#include "listen_diagnosis.hpp"
#include "metrics_server.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "regiontrace/sdk/whole_file_writer.hpp"
#include "stats_json.hpp"
#include "stats_table.hpp"

namespace regiontrace::region_stats {
namespace {

std::vector<std::int64_t> bounds_in_ns(const std::vector<double>& seconds) {
  std::vector<std::int64_t> out;
  for (double s : seconds) out.push_back(sdk::units::seconds_to_ns(s));
  return out;
}

}  // namespace

RegionStatsSink::RegionStatsSink(const SinkContext& ctx)
    : ctx_(ctx),
      settings_(RegionStatsSettings::from(ctx)),
      start_pair_(sdk::clock_sync::read()),
      start_ns_(ctx.now_ns() != 0 ? ctx.now_ns() : start_pair_.monotonic_ns),
      threads_(bounds_in_ns(settings_.prometheus_buckets),
               static_cast<std::size_t>(settings_.max_steps)) {
  if (!settings_.prometheus_listen.empty()) {
    const ListenAddress address = parse_listen_address(settings_.prometheus_listen);
    try {
      server_ =
          std::make_unique<MetricsServer>(address, [this] { return exposition_text(collect()); });
    } catch (const std::invalid_argument& e) {
      const int free = free_port_on(address);
      const std::string instead =
          free != 0 ? address.host + ":" + std::to_string(free) + " (free now)" : "another port";
      throw std::invalid_argument("prometheus_listen: cannot serve metrics on `" +
                                  settings_.prometheus_listen + "`: " + e.what() + "; give " +
                                  instead + ", or " + address.host +
                                  ":0 to take a free port (the one taken is logged), or leave "
                                  "prometheus_listen empty");
    }
    // Port 0: the system chose; say which, since scrapers need it.
    ListenAddress served = address;
    served.port = server_->port();
    ctx_.info("serving Prometheus metrics on http://" + served.text() + "/metrics" +
              (served.text() == settings_.prometheus_listen
                   ? std::string()
                   : " (prometheus_listen `" + settings_.prometheus_listen + "`: a free port)"));
  }
  if (!settings_.prometheus_textfile.empty()) {
    try {
      textfile_ = std::make_unique<TextfileExporter>(
          settings_.prometheus_textfile, settings_.prometheus_textfile_interval_s,
          [this] { return exposition_text(collect()); },
          [this](const std::string& error) { ctx_.warn("prometheus_textfile: " + error); });
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("prometheus_textfile: ") + e.what());
    }
  }
}

RegionStatsSink::~RegionStatsSink() = default;

std::vector<prometheus::MetricFamily> RegionStatsSink::collect() const {
  return metric_families(merge_by_path(threads_.snapshot()), settings_.prometheus_buckets,
                         ctx_.rank());
}

void RegionStatsSink::on_step(const StepEvent& e) {
  if (closed_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(steps_mutex_);
  ++steps_seen_;
  if (settings_.max_steps == 0) return;
  if (!step_spans_.empty() && step_spans_.back().end_ns == 0) step_spans_.back().end_ns = e.time_ns;
  step_spans_.push_back({e.step, e.time_ns, 0});
  while (step_spans_.size() > static_cast<std::size_t>(settings_.max_steps)) {
    step_spans_.pop_front();
  }
}

void RegionStatsSink::close() {
  std::lock_guard<std::mutex> lock(close_mutex_);
  if (closed_.exchange(true)) return;
  // The last values reach the textfile; the endpoint goes before the report
  // so no scrape races the end of the process.
  if (textfile_) textfile_->stop();
  server_.reset();
  write_outputs(true);
}

void RegionStatsSink::flush() {
  // The host flushes every sink right before it closes them, which writes
  // the finished files anyway.
  if (closed_.load() || ctx_.stop_ns() != 0) return;
  std::lock_guard<std::mutex> lock(close_mutex_);
  if (!closed_.load()) write_outputs(false);
}

void RegionStatsSink::write_outputs(bool finished) {
  const sdk::clock_sync::Pair end_pair = sdk::clock_sync::read();
  // The run ended when the host began closing sinks, not when this one closes.
  const std::int64_t end_ns =
      finished && ctx_.end_of_run_ns() != 0 ? ctx_.end_of_run_ns() : end_pair.monotonic_ns;
  std::uint64_t folded = 0;
  std::vector<PathRecord> records = threads_.snapshot(&folded);
  StatsReport report = build_report(records, folded);
  report.rank = ctx_.rank();
  report.pid = ctx_.pid();
  report.wall_ns = end_ns - start_ns_;
  report.max_steps = static_cast<std::size_t>(settings_.max_steps);
  {
    std::lock_guard<std::mutex> lock(steps_mutex_);
    report.steps_seen = steps_seen_;
    report.step_spans.assign(step_spans_.begin(), step_spans_.end());
  }
  // The last step runs to the end of recording, as step spans do in traces.
  if (!report.step_spans.empty() && report.step_spans.back().end_ns == 0) {
    report.step_spans.back().end_ns = end_ns;
  }
  std::string table = stats_table(report, settings_.table_paths);
  if (!finished) {
    table =
        "(incomplete: measured while the process ran; it ended without closing regiontrace "
        "if this line is still here)\n" +
        table;
  }
  if (settings_.table == TableTarget::kStderr && finished) {
    std::cerr << table << std::flush;
  } else if (settings_.table == TableTarget::kFile) {
    const std::string error =
        sdk::WholeFileWriter::write_file(ctx_.output_path("region_stats", "txt"), table);
    if (!error.empty()) ctx_.error(error);
  }
  if (settings_.json) {
    JsonExtras extras;
    extras.context = &ctx_;
    extras.start = start_pair_;
    extras.end = end_pair;
    extras.prometheus_listen = settings_.prometheus_listen;
    extras.prometheus_textfile = settings_.prometheus_textfile;
    extras.prometheus_buckets = settings_.prometheus_buckets;
    extras.incomplete = !finished;
    const std::string error = sdk::WholeFileWriter::write_file(
        ctx_.output_path("region_stats", "json"), stats_json(report, extras));
    if (!error.empty()) ctx_.error(error);
  }
}

}  // namespace regiontrace::region_stats

REGIONTRACE_SINK_PLUGIN(regiontrace::region_stats::RegionStatsSink, "region_stats")
