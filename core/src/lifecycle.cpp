#include "lifecycle.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "config/config_loader.hpp"
#include "dispatcher.hpp"
#include "flush_thread.hpp"
#include "logger.hpp"
#include "output_folders.hpp"
#include "plugin_search_report.hpp"
#include "region_registry.hpp"
#include "regiontrace/detail/tensor_dispatch.hpp"
#include "regiontrace/sdk/trace_time.hpp"
#include "regiontrace/sdk/whole_file_writer.hpp"
#include "suggest.hpp"
#include "unfinished_runs.hpp"

namespace regiontrace::detail {
namespace {

std::int64_t host_step() {
  return Dispatcher::instance().step();
}
// When stop() began closing the sinks; 0 while they run.
std::atomic<std::int64_t> g_stop_ns{0};
std::int64_t host_stop_ns() {
  return g_stop_ns.load(std::memory_order_acquire);
}
const HostApi g_host{&log_from_sink, &now_ns, &host_step, &host_stop_ns};
// Starts that went live in this process: the next one's session number.
int g_sessions = 0;

// Never destroyed: a thread may still tick while static destructors run.
FlushThread& flush_thread() {
  static FlushThread* t = new FlushThread();
  return *t;
}

std::recursive_mutex& lifecycle_mutex() {
  static std::recursive_mutex* m = new std::recursive_mutex();
  return *m;
}
bool g_starting = false;

// When this process first started regiontrace: runs that ended unfinished
// before it are not its concern.
std::time_t process_started() {
  static const std::time_t started = std::time(nullptr) - 1;  // mtimes are in whole seconds
  return started;
}

// What start() wrote, kept to write it again at shutdown with the end pair
// of clock readings.
struct WrittenConfig {
  EffectiveConfig config;
  std::set<std::string> dirs;
};
WrittenConfig*& written_config() {
  static WrittenConfig* w = nullptr;
  return w;
}

// --- SIGINT/SIGTERM: the handler only writes a byte; a thread of ours does
// the (not async-signal-safe) flushing, then lets the signal take its course.
int g_signal_pipe[2] = {-1, -1};
struct sigaction g_previous[2];
const int kSignals[2] = {SIGINT, SIGTERM};
bool g_signals_installed = false;

void on_signal(int signo) {
  const unsigned char b = static_cast<unsigned char>(signo);
  ssize_t ignored = ::write(g_signal_pipe[1], &b, 1);
  (void)ignored;
}

void restore_signals() {
  if (!g_signals_installed) return;
  for (int i = 0; i < 2; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
  g_signals_installed = false;
}

void signal_watcher() {
  unsigned char b = 0;
  while (::read(g_signal_pipe[0], &b, 1) != 1) {
  }
  const int signo = b;
  log(LogLevel::kInfo, std::string("caught ") + (signo == SIGINT ? "SIGINT" : "SIGTERM") +
                           ": flushing and closing sinks");
  regiontrace::shutdown();
  {
    std::lock_guard<std::recursive_mutex> lock(lifecycle_mutex());
    restore_signals();
  }
  // The previous disposition (default: terminate) now applies.
  kill(getpid(), signo);
}

void install_signals() {
  if (g_signals_installed) return;
  if (g_signal_pipe[0] < 0) {
    if (pipe(g_signal_pipe) != 0) return;
    std::thread(signal_watcher).detach();
  }
  struct sigaction sa {};
  sa.sa_handler = &on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < 2; ++i) {
    sigaction(kSignals[i], &sa, &g_previous[i]);
    // A signal the process ignores (SIGINT of a background job started by a
    // shell) stays ignored: flushing and re-raising it would change nothing
    // but our files.
    if (g_previous[i].sa_handler == SIG_IGN) sigaction(kSignals[i], &g_previous[i], nullptr);
  }
  g_signals_installed = true;
}

void at_exit() {
  regiontrace::shutdown();
}

// exit() runs atexit handlers and static destructors in one list, newest
// first, after the main thread's thread_local destructors. A function-local
// static constructed after our handler was registered (one of libtorch's, or
// a sink's) is destroyed before the handler closes the sinks that use it. So
// the handler is registered again once the sinks are built: everything their
// constructors created (sinks construct there what their close() needs) then
// outlives it. Our own state on exit paths is never destroyed at all (leaked
// on purpose), and libtorch calls at exit run on a fresh thread, since the
// main thread's thread_locals are gone by then. One entry per start(): the
// handler is idempotent, older entries run later and find nothing to do.
void register_exit_handler() {
  std::atexit(&at_exit);
}

void close_quietly(SinkSlot& slot) {
  try {
    slot.sink->close();
  } catch (...) {
  }
}

// Sinks are never destroyed (see SinkSlot); ones that never ran wait here.
std::vector<std::unique_ptr<SinkSlot>>& idle_slots() {
  static auto* slots = new std::vector<std::unique_ptr<SinkSlot>>();
  return *slots;
}

void in_forked_child() {
  // The child must never write into its parent's files: forget the parent's
  // sinks without flushing them. regiontrace::init() starts fresh ones.
  new (&lifecycle_mutex()) std::recursive_mutex();
  new (&RegionRegistry::instance().mutex()) std::mutex();
  Dispatcher::instance().abandon_after_fork();
  flush_thread().forget_after_fork();
  g_tensors_wanted.store(false);
  g_state.store(kStateOff);
  if (g_signals_installed) {
    for (int i = 0; i < 2; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
    g_signals_installed = false;
  }
  g_signal_pipe[0] = g_signal_pipe[1] = -1;  // the watcher thread stayed in the parent
  // The parent's file, not ours to rewrite. Freed, not dropped: memory no
  // pointer reaches is a leak to LeakSanitizer.
  delete written_config();
  written_config() = nullptr;
  // Another process: its files carry its own pid, its first session is 0.
  g_sessions = 0;
  g_stop_ns.store(0);
}

void install_process_hooks() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  pthread_atfork(nullptr, nullptr, &in_forked_child);
}

// The folders running sinks write files into; `described`: only those that
// get the run's configuration beside their files (`config_snapshot`).
std::set<std::string> written_folders(const EffectiveConfig& cfg,
                                      const std::vector<std::unique_ptr<SinkSlot>>& slots,
                                      bool described = false) {
  std::set<std::string> dirs;
  for (const SinkSettings& s : cfg.sinks) {
    if (described && !s.config_snapshot) continue;
    for (const auto& slot : slots) {
      if (slot->name == s.name && (slot->interests & kWritesNoFiles) == 0) {
        dirs.insert(s.output_dir);
      }
    }
  }
  return dirs;
}

void write_effective_config(const EffectiveConfig& cfg, const std::set<std::string>& dirs) {
  const std::string json = effective_config_json(cfg);
  // Named like every other output, so runs into one folder never overwrite it.
  const std::string session = cfg.session > 0 ? "_" + std::to_string(cfg.session) : "";
  const std::string name = "regiontrace_config" + session + "_rank" +
                           std::to_string(cfg.rank.rank) + "_pid" + std::to_string(cfg.pid) +
                           ".json";
  for (const std::string& dir : dirs) {
    // In a subfolder: the output folder itself holds what trace viewers and
    // HolisticTraceAnalysis load, every *.json there taken for a trace.
    const std::filesystem::path folder = std::filesystem::path(dir) / kConfigSnapshotFolder;
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec) {
      log(LogLevel::kWarn, "the effective configuration: cannot create " + folder.string() + " (" +
                               ec.message() + ")");
      continue;
    }
    // Whole or absent, never cut short: a full disk must not leave invalid
    // JSON under the name tools read.
    const std::string error = sdk::WholeFileWriter::write_file((folder / name).string(), json);
    if (!error.empty()) log(LogLevel::kWarn, "the effective configuration: " + error);
  }
}

std::string rank_list_text(const std::vector<long long>& ranks) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) out << (i != 0 ? ", " : "") << ranks[i];
  if (ranks.size() > 8) out << ", ... (" << ranks.size() << " ranks)";
  return out.str();
}

// `ranks: [0, 8]` in a job of 4 is most likely a typo that leaves a sink
// off everywhere it was meant to run. Said once per job (by rank 0), and only
// where a launcher gave the size: a profile tried out in one process is no job.
void warn_of_ranks_outside_the_job(const EffectiveConfig& cfg) {
  if (cfg.rank.rank != 0 || cfg.rank.source == "default") return;
  for (const SinkSettings& s : cfg.sinks) {
    if (!s.enabled || s.plugin == nullptr) continue;
    std::vector<long long> outside;
    for (long long r : s.ranks) {
      if (r >= cfg.rank.world_size) outside.push_back(r);
    }
    if (outside.empty()) continue;
    log(LogLevel::kWarn, "sink `" + s.name + "`: " + s.ranks_origin + " names rank" +
                             (outside.size() == 1 ? " " : "s ") + rank_list_text(outside) +
                             ", outside this job of " + std::to_string(cfg.rank.world_size) +
                             " ranks (0-" + std::to_string(cfg.rank.world_size - 1) + ")");
  }
}

OnError policy_of(const Error& e) {
  const auto* config = dynamic_cast<const ConfigurationError*>(&e);
  return config != nullptr ? config->on_error() : OnError::kExit;
}

// Printed whatever the log level: the process is about to exit, or runs on
// without the sinks it was asked for.
void report_failed_implicit_start(const std::string& message, OnError policy) {
  const std::string consequence =
      policy == OnError::kExit
          ? "exiting with status 2 (on_error: exit; set `on_error: continue` or "
            "REGIONTRACE_ON_ERROR=continue to run on with sinks off)"
          : "running on with every sink off (on_error: continue)";
  log_unconditionally(LogLevel::kError, message +
                                            "\nregiontrace started at the first region and "
                                            "could not: " +
                                            consequence);
}

}  // namespace

void start_implicitly() {
  std::lock_guard<std::recursive_mutex> lock(lifecycle_mutex());
  // Another thread may have started (or failed to) while this one waited.
  if (g_state.load() != kStateUninitialized || g_starting) return;
  OnError policy = OnError::kExit;
  std::string message;
  try {
    start(Options{}, /*explicit_init=*/false);
    return;
  } catch (const Error& e) {
    policy = policy_of(e);
    message = e.what();
  } catch (const std::exception& e) {
    message = std::string("regiontrace failed to start: ") + e.what();
  } catch (...) {
    message = "regiontrace failed to start: an exception that is not a std::exception";
  }
  g_tensors_wanted.store(false);
  g_state.store(kStateOff);
  report_failed_implicit_start(message, policy);
  if (policy == OnError::kExit) std::exit(2);
}

namespace {

// The sink of one enabled setting, for this rank: null when it is left
// out (an error goes to `errors`; a sink with nothing to do is kept idle).
std::unique_ptr<SinkSlot> build_slot(const SinkSettings& s, int index, const EffectiveConfig& cfg,
                                     OutputFolders& folders, std::vector<std::string>& errors) {
  auto slot = std::make_unique<SinkSlot>();
  slot->index = index;
  slot->name = s.name;
  slot->plugin_file = s.plugin->path;
  slot->regions =
      RegionFilter::compile(s.regions, s.regions_origin, RegionRegistry::instance(), &errors);
  slot->steps = StepFilter(s.steps);
  if (const std::string why = folders.prepare(s.output_dir); !why.empty()) {
    errors.push_back("output folder " + s.output_dir + " of sink `" + s.name + "` " + why);
    return nullptr;
  }
  SinkContext ctx(s.name, s.output_dir, cfg.rank.rank, cfg.rank.local_rank, cfg.rank.world_size,
                  cfg.pid, &g_host, cfg.session);
  for (const auto& [k, v] : s.values) ctx.set_value(k, v);
  try {
    slot->sink = s.plugin->descriptor->create(ctx);
    slot->interests = slot->sink->interests();
    if ((slot->interests & kAppliesStepsItself) != 0) slot->steps = StepFilter();
  } catch (const std::exception& e) {
    errors.push_back("sink `" + s.name + "` (" + s.plugin->path + ") failed to start: " + e.what());
    return nullptr;
  }
  if ((slot->interests & ~std::uint32_t{kWritesNoFiles | kAppliesStepsItself}) == 0) {
    // The sink has nothing to do in this process (e.g. nvtx with no tool
    // attached): leaving it out keeps regions on the disabled fast path.
    log(LogLevel::kInfo, "sink `" + s.name + "` asked for no events; not started");
    close_quietly(*slot);
    idle_slots().push_back(std::move(slot));
    return nullptr;
  }
  return slot;
}

// Every sink this rank runs, built; throws ConfigurationError listing
// every problem at once, after closing what was built (no event reached
// those sinks, so no other thread can hold them).
std::vector<std::unique_ptr<SinkSlot>> build_sinks(const EffectiveConfig& cfg,
                                                   OutputFolders& folders) {
  std::vector<std::string> errors;
  std::vector<std::unique_ptr<SinkSlot>> slots;
  std::string other_ranks;  // sinks whose `ranks` leave this rank out
  for (const SinkSettings& s : cfg.sinks) {
    if (!s.enabled || s.plugin == nullptr) continue;
    if (!s.runs_on(cfg.rank.rank)) {
      // Never built: on this rank regions stay on the disabled fast path.
      other_ranks += std::string(other_ranks.empty() ? "" : "; ") + "`" + s.name + "` runs on " +
                     rank_list_text(s.ranks) + " (" + s.ranks_origin + ")";
      continue;
    }
    if (slots.size() == 64) {
      errors.push_back("more than 64 sinks configured; `" + s.name + "` and later ones ignored");
      break;
    }
    if (auto slot = build_slot(s, static_cast<int>(slots.size()), cfg, folders, errors)) {
      slots.push_back(std::move(slot));
    }
  }
  if (!errors.empty()) {
    for (auto& slot : slots) {
      close_quietly(*slot);
      delete slot->sink;
    }
    folders.remove_unused({});
    std::string msg = "configuration error:";
    for (const std::string& e : errors) msg += "\n  - " + e;
    throw ConfigurationError(msg, cfg.on_error);
  }
  warn_of_ranks_outside_the_job(cfg);
  if (!other_ranks.empty()) {
    log(LogLevel::kInfo, "rank " + std::to_string(cfg.rank.rank) + " (" + cfg.rank.source +
                             ") starts no sink that is limited to other ranks: " + other_ranks);
  }
  return slots;
}

// A plugin path only says where sinks are: one given with no sink enabled
// would record nothing without a word.
void warn_of_plugins_nothing_enables(const EffectiveConfig& cfg) {
  for (const SinkSettings& s : cfg.sinks) {
    if (s.enabled) return;
  }
  std::vector<std::string> found;
  std::string first;
  for (const PluginFile& f : cfg.plugins) {
    if (f.origin == kBuiltinSinksOrigin || f.sink_name.empty()) continue;
    found.push_back("`" + f.sink_name + "` (" + f.path + ", from " + f.origin + ")");
    if (first.empty()) first = f.sink_name;
  }
  if (found.empty()) {
    // A folder above the plugins (a build folder, a prefix) finds none.
    if (cfg.plugin_paths.empty()) return;
    std::string origin = "plugins.paths";
    for (const EffectiveValue& v : cfg.values) {
      if (v.key == "plugins.paths" && !v.source.empty()) origin = v.source;
    }
    std::vector<std::pair<std::string, std::string>> dirs;
    for (const std::string& d : cfg.plugin_paths) dirs.emplace_back(d, origin);
    log(LogLevel::kWarn,
        "no sink is enabled and the plugin path holds no sink plugin, so nothing "
        "is recorded; searched: " +
            describe_plugin_search(dirs));
    return;
  }
  log(LogLevel::kWarn,
      "no sink is enabled, so nothing is recorded: the plugin path only says "
      "where sinks are. It has " +
          join(found, ", ") + ". Enable one with REGIONTRACE_SINKS=" + first + " or `sinks: {" +
          first + ": {}}` in a profile");
}

// Hands the built sinks to the dispatcher and turns regions on.
void go_live(const EffectiveConfig& cfg, std::vector<std::unique_ptr<SinkSlot>> slots) {
  const std::set<std::string> described = written_folders(cfg, slots, true);
  write_effective_config(cfg, described);
  delete written_config();
  written_config() = new WrittenConfig{cfg, described};
  bool tensors = false;
  std::string names;
  for (const auto& slot : slots) {
    tensors = tensors || (slot->interests & (kInterestTensors | kInterestOpOutputs)) != 0;
    names += (names.empty() ? "" : ", ") + slot->name;
  }
  Dispatcher::instance().start(std::move(slots));
  g_tensors_wanted.store(tensors);
  if (cfg.flush_interval_s > 0 && Dispatcher::instance().has_flight_recorders()) {
    flush_thread().start(std::chrono::nanoseconds(sdk::units::seconds_to_ns(cfg.flush_interval_s)),
                         [] { Dispatcher::instance().flush_flight_recorders(); });
  }
  if (cfg.handle_signals) install_signals();
  register_exit_handler();
  g_state.store(kStateOn);
  log(LogLevel::kInfo, "running sinks: " + names + " (rank " + std::to_string(cfg.rank.rank) + ")");
}

}  // namespace

void start(const Options& options, bool explicit_init) {
  std::lock_guard<std::recursive_mutex> lock(lifecycle_mutex());
  process_started();
  if (g_starting) return;  // a sink's constructor opened a region
  if (g_state.load() == kStateOn) {
    // A thread that lost the race through the lazy start finds the sinks
    // running, as it should: nothing to report.
    if (!explicit_init) return;
    log_once(LogLevel::kInfo, "init-running",
             "regiontrace::init() while sinks run: keeping the running ones (one profiler per "
             "process); call shutdown() first to reconfigure");
    return;
  }
  g_starting = true;
  struct Reset {
    ~Reset() { g_starting = false; }
  } reset;
  install_process_hooks();

  // Read before anything slow, so the pair brackets the whole run.
  const sdk::clock_sync::Pair clock_start = sdk::clock_sync::read();
  LoadMode mode;
  mode.create_output_dirs = false;  // made below, only for sinks that get built
  EffectiveConfig cfg = load_configuration(options, capture_environment(), mode);
  cfg.clock_start = clock_start;
  cfg.session = g_sessions;
  set_log_level(cfg.log_level);
  for (const std::string& c : cfg.catalogs) {
    load_region_catalog_file(c, RegionRegistry::instance());
  }
  OutputFolders folders;
  std::vector<std::unique_ptr<SinkSlot>> slots = build_sinks(cfg, folders);
  const std::set<std::string> written = written_folders(cfg, slots);
  folders.remove_unused(written);
  if (slots.empty()) {
    warn_of_plugins_nothing_enables(cfg);
    g_tensors_wanted.store(false);
    g_state.store(kStateOff);
    return;
  }
  g_stop_ns.store(0, std::memory_order_release);
  ++g_sessions;
  go_live(cfg, std::move(slots));
}

void stop() {
  std::lock_guard<std::recursive_mutex> lock(lifecycle_mutex());
  if (g_state.load() != kStateOn) {
    if (g_state.load() == kStateUninitialized) {
      g_tensors_wanted.store(false);
      g_state.store(kStateOff);
    }
    return;
  }
  const sdk::clock_sync::Pair clock_end = sdk::clock_sync::read();
  g_state.store(kStateOff);
  g_tensors_wanted.store(false);
  // One end for every sink: what is still open ends here, also in a sink
  // that closes after another's slow close (a trace export).
  g_stop_ns.store(now_ns(), std::memory_order_release);
  flush_thread().stop();
  Dispatcher::instance().stop();
  if (WrittenConfig* w = written_config()) {
    // Again, now with the end pair: the file says when this rank's
    // recording ended on both clocks.
    w->config.clock_end = clock_end;
    write_effective_config(w->config, w->dirs);
    warn_of_unfinished_runs(w->dirs, w->config.pid, w->config.host, process_started());
    delete w;
    written_config() = nullptr;
  }
}

}  // namespace regiontrace::detail
