#include "prometheus_metrics.hpp"

#include <prometheus/text_serializer.h>

#include <limits>
#include <sstream>

#include "regiontrace/sdk/trace_time.hpp"

namespace regiontrace::region_stats {

std::vector<prometheus::MetricFamily> metric_families(const std::vector<PathSummary>& regions,
                                                      const std::vector<double>& bounds_s,
                                                      int rank) {
  prometheus::MetricFamily durations;
  durations.name = "regiontrace_region_duration_seconds";
  durations.help = "Wall time of each completed region, by region path";
  durations.type = prometheus::MetricType::Histogram;
  prometheus::MetricFamily calls;
  calls.name = "regiontrace_region_calls_total";
  calls.help = "Completed regions, by region path";
  calls.type = prometheus::MetricType::Counter;
  prometheus::MetricFamily self;
  self.name = "regiontrace_region_self_seconds_total";
  self.help = "Time in a region outside its selected child regions, by region path";
  self.type = prometheus::MetricType::Counter;
  const std::string rank_text = std::to_string(rank);
  for (const PathSummary& p : regions) {
    prometheus::ClientMetric m;
    m.label = {{"path", p.path}, {"rank", rank_text}, {"region", p.name}};
    prometheus::ClientMetric h = m;
    h.histogram.sample_count = p.totals.count;
    h.histogram.sample_sum = sdk::units::to_seconds(p.totals.total_ns);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bounds_s.size(); ++i) {
      cumulative += i < p.bound_counts.size() ? p.bound_counts[i] : 0;
      h.histogram.bucket.push_back({cumulative, bounds_s[i]});
    }
    h.histogram.bucket.push_back({p.totals.count, std::numeric_limits<double>::infinity()});
    durations.metric.push_back(std::move(h));
    prometheus::ClientMetric c = m;
    c.counter.value = static_cast<double>(p.totals.count);
    calls.metric.push_back(std::move(c));
    prometheus::ClientMetric s = m;
    s.counter.value = sdk::units::to_seconds(p.totals.self_ns);
    self.metric.push_back(std::move(s));
  }
  return {std::move(durations), std::move(calls), std::move(self)};
}

std::string exposition_text(const std::vector<prometheus::MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace regiontrace::region_stats
