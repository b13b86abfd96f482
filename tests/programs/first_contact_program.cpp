// A user's program that never calls regiontrace::init(): the entry point
// named by argv[1] is the first thing to reach regiontrace, so it alone must
// start it (or apply `on_error`). tests/core/implicit_start_test.cpp runs it.
#include <cstdio>
#include <string>

#include "regiontrace/regiontrace.hpp"

RT_DECLARE_REGION(kLoad, "load_weights", "declared by the program, entered by id");

namespace {

bool first_contact(const std::string& how) {
  if (how == "Region(id)") {
    const regiontrace::Region r(kLoad);
  } else if (how == "begin(id)") {
    regiontrace::end(regiontrace::begin(kLoad));
  } else if (how == "Region(name)") {
    const regiontrace::Region r("load_weights");
  } else if (how == "begin(name)") {
    regiontrace::end(regiontrace::begin("load_weights"));
  } else if (how == "RT_REGION") {
    RT_REGION("load_weights");
  } else if (how == "in_region") {
    regiontrace::in_region("load_weights", [] {});
  } else if (how == "set_step") {
    regiontrace::set_step(7);
  } else if (how == "mark") {
    regiontrace::mark("loaded");
  } else if (how == "snapshot") {
    regiontrace::snapshot("loaded");
  } else {
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || !first_contact(argv[1])) {
    std::fprintf(stderr,
                 "usage: %s Region(id)|begin(id)|Region(name)|begin(name)|RT_REGION|"
                 "in_region|set_step|mark|snapshot\n",
                 argv[0]);
    return 64;
  }
  // Reached only when the start succeeded or on_error is `continue`.
  std::printf("program went on, sinks %s\n", regiontrace::enabled() ? "on" : "off");
  return 0;
}
