// The timeline while the program runs: every flush (the host's flush thread,
// flush_interval_s) puts the records recorded since the last one into the
// flight file under the trace's own name, so that a process killed by
// SIGKILL or ended by os._exit() leaves a trace that opens everywhere the
// finished one does. Its "regiontrace" member says `"incomplete": true` and
// until when it holds events (`written_until_ns`); regions open at that
// moment end there with `open_at_end`, and so does the current step. A run
// that closes normally replaces it with the whole trace (trace_builder.cpp).
//
// Records are formatted once each, a flush's pieces of one thread newest
// first (as at close); a span's path names the regions that enclose it
// among those recorded in the same flush or open at it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "event_format.hpp"
#include "flight_file.hpp"
#include "regiontrace/plugin.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "trace_builder.hpp"

namespace regiontrace::timeline {

class FlightRecorder {
 public:
  // Writes the empty document at once. Throws std::system_error naming
  // the file.
  FlightRecorder(std::string path, const SinkContext& context, std::string span_prefix,
                 std::int64_t base_ns, sdk::clock_sync::Pair start_pair);

  // A piece of a thread's records (whole records), in the spill file or
  // copied out of a chunk the disk had no room for.
  struct Piece {
    std::uint64_t spill_offset = 0;
    std::vector<unsigned char> memory;  // empty: in the spill file
    std::size_t bytes = 0;
  };
  // One thread's pieces since the last commit (oldest first) and the
  // regions open on it now.
  struct Thread {
    long os_tid = 0;
    std::string name;
    std::vector<Piece> pieces;
    std::vector<OpenSpan> open;
  };
  // What one commit writes.
  struct Update {
    const std::vector<std::string>* region_names = nullptr;
    std::vector<Thread> threads;
    std::vector<StepMark> new_steps;  // set since the last commit, by time
    std::int64_t now_ns = 0;
    std::string statistics;  // the "timeline" member's object
    // Reads a spilled piece into `out` (resized to its bytes).
    std::function<void(const Piece&, std::vector<unsigned char>& out)> read;
    // Asked between pieces: true gives the commit up (the process stops).
    std::function<bool()> give_up;
  };
  // False when given up: what was formatted is never written, and no
  // commit follows (the trace written at close replaces the file). Throws
  // std::system_error on a failed write (the file keeps its last whole
  // document).
  bool commit(const Update& update);
  // The file is about to be replaced by the whole trace, or the disk needs
  // its room: no commit from now on.
  void remove() { file_.remove(); }
  std::uint64_t bytes() const { return file_.bytes(); }

 private:
  // The separator before the next event; `events` counts those before it.
  static const char* separator(std::uint64_t events) { return events == 0 ? "\n" : ",\n"; }
  // False when given up.
  bool thread(const Thread& t, const Update& update, const EventFormat& format);
  void steps(const std::vector<StepMark>& steps, const EventFormat& format);
  std::string tail(const Update& update, const EventFormat& format);

  FlightFile file_;
  const SinkContext& context_;
  std::string span_prefix_;
  std::int64_t base_ns_;
  sdk::clock_sync::Pair start_pair_;
  std::uint64_t events_ = 0;  // in the body
  std::set<long> named_threads_;
  bool given_up_ = false;
  bool have_step_ = false;
  StepMark current_step_;  // the step still running, written in the tail
  std::string text_;
};

}  // namespace regiontrace::timeline
