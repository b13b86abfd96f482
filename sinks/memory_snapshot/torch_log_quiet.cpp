#include "glog_quiet.hpp"

#include <glog/logging.h>

namespace regiontrace::memory {

GlogQuiet::GlogQuiet() {
  if (google::IsGoogleLoggingInitialized()) return;
  previous_ = FLAGS_minloglevel;
  if (previous_ >= google::GLOG_ERROR) return;
  FLAGS_minloglevel = google::GLOG_ERROR;
  changed_ = true;
}

void GlogQuiet::restore() {
  if (!changed_) return;
  changed_ = false;
  // Someone else changed it meanwhile: theirs stands.
  if (FLAGS_minloglevel == google::GLOG_ERROR) FLAGS_minloglevel = previous_;
}

}  // namespace regiontrace::memory
