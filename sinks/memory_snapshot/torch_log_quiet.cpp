#include "torch_log_quiet.hpp"

#include <c10/util/Logging.h>

namespace regiontrace::memory {
namespace {

#if defined(C10_USE_GLOG)
int& threshold() {
  return FLAGS_minloglevel;
}
bool program_owns_logging() {
  return google::IsGoogleLoggingInitialized();
}
constexpr int kErrors = google::GLOG_ERROR;
#else
int& threshold() {
  return FLAGS_caffe2_log_level;
}
bool program_owns_logging() {
  return false;
}
constexpr int kErrors = c10::GLOG_ERROR;
#endif

}  // namespace

TorchLogQuiet::TorchLogQuiet() {
  if (program_owns_logging()) return;
  previous_ = threshold();
  if (previous_ >= kErrors) return;
  threshold() = kErrors;
  changed_ = true;
}

void TorchLogQuiet::restore() {
  if (!changed_) return;
  changed_ = false;
  // Someone else changed it meanwhile: theirs stands.
  if (threshold() == kErrors) threshold() = previous_;
}

}  // namespace regiontrace::memory
