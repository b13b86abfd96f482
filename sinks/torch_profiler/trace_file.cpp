#include "trace_file.hpp"

#include <zlib.h>

#include <stdexcept>

namespace regiontrace::torch_profiler {

std::string read_maybe_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files unchanged too
  if (f == nullptr) throw std::runtime_error("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<std::size_t>(n));
  const bool bad = n < 0;
  gzclose(f);
  if (bad) throw std::runtime_error("cannot read " + path + " (corrupt gzip?)");
  return out;
}

}  // namespace regiontrace::torch_profiler
