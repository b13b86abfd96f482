// The output folders one start-up creates. A folder is made just before a
// sink that may write into it is built (sinks open files in their
// constructors); when start-up ends, the folders no running sink writes into
// are removed again, where still empty, so a sink that writes nothing (nvtx
// under Nsight) or did not start leaves no `regiontrace_out/` behind.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace regiontrace::detail {

class OutputFolders {
 public:
  // Creates `dir` and its missing parents; returns why it could not, or "".
  std::string prepare(const std::string& dir);
  // Removes, deepest first and only where empty, what prepare() created that
  // is not (a parent of) one of `kept`.
  void remove_unused(const std::set<std::string>& kept);

 private:
  std::vector<std::string> created_;  // in creation order: parents first
};

}  // namespace regiontrace::detail
