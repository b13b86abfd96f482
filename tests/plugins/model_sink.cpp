// A sink for the model-based test of the region hot path
// (tests/core/region_model_test.cpp): every region event or span it gets
// goes to the in-memory journal (tests/model/journal.hpp), as received.
// Built four times (model_e1, model_e2: region events; model_s1, model_s2:
// spans), so that a test can mix sink kinds freely.
#include <chrono>
#include <thread>

#include "journal.hpp"
#include "regiontrace/plugin.hpp"

#ifndef MODEL_SINK_NAME
#error "MODEL_SINK_NAME and MODEL_SINK_NUMBER are set by tests/CMakeLists.txt"
#endif

namespace {

using regiontrace::KeySpec;
namespace journal = regiontrace::test::journal;

class ModelSink : public regiontrace::Sink {
 public:
  static regiontrace::SinkSchema schema() {
    return {
        KeySpec::boolean("spans", false, "take regions as spans (kInterestSpans)"),
        KeySpec::boolean("timed", true, "ask for time_ns (kInterestTimestamps)"),
        KeySpec::integer("slow_us", 0, "sleep this long in every on_spans"),
    };
  }

  explicit ModelSink(const regiontrace::SinkContext& ctx)
      : spans_(ctx.get_bool("spans")),
        timed_(ctx.get_bool("timed")),
        slow_us_(ctx.get_int("slow_us")) {}

  std::uint32_t interests() const override {
    return (spans_ ? regiontrace::kInterestSpans : regiontrace::kInterestRegions) |
           (timed_ ? regiontrace::kInterestTimestamps : 0u) | regiontrace::kWritesNoFiles;
  }

  void on_region_begin(const regiontrace::RegionEvent& e) override { add('b', e); }
  void on_region_end(const regiontrace::RegionEvent& e) override { add('e', e); }

  void on_spans(const regiontrace::SpanBatch& b) override {
    if (slow_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(slow_us_));
    if (b.dropped != 0) journal::add_dropped(MODEL_SINK_NUMBER, b.dropped);
    for (std::size_t i = 0; i < b.count; ++i) {
      const regiontrace::Span& s = b.spans[i];
      journal::Record r;
      r.sink = MODEL_SINK_NUMBER;
      r.kind = 's';
      r.id = s.id;
      r.depth = s.depth;
      r.step = s.step;
      r.thread = b.thread_id;
      r.unwinding = s.unwinding != 0;
      r.open = s.open != 0;
      r.last_batch = b.last != 0;
      r.time_ns = s.end_ns;
      r.begin_ns = s.begin_ns;
      r.dropped = b.dropped;
      journal::add(std::move(r));
    }
  }

 private:
  void add(char kind, const regiontrace::RegionEvent& e) {
    journal::Record r;
    r.sink = MODEL_SINK_NUMBER;
    r.kind = kind;
    r.id = e.id;
    r.depth = e.depth;
    r.step = e.step;
    r.thread = e.thread_id;
    r.unwinding = e.unwinding;
    r.time_ns = e.time_ns;
    r.begin_ns = e.begin_time_ns;
    r.path = std::string(e.path);
    journal::add(std::move(r));
  }

  const bool spans_;
  const bool timed_;
  const long long slow_us_;
};

}  // namespace

REGIONTRACE_SINK_PLUGIN(ModelSink, MODEL_SINK_NAME)
