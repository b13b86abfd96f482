#include "trace_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace regiontrace::torch_profiler {

struct TraceFile::Deflate {
  z_stream stream{};
  std::vector<unsigned char> out = std::vector<unsigned char>(1 << 18);
  bool ended = false;
  ~Deflate() {
    if (!ended) deflateEnd(&stream);
  }
};

TraceFile::TraceFile(std::string path, bool gzip) : file_(std::move(path)) {
  if (!gzip) return;
  deflate_ = std::make_unique<Deflate>();
  // Level 6 as gzopen's "wb6" before; windowBits 15 + 16: a gzip header.
  if (deflateInit2(&deflate_->stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    deflate_->ended = true;
    throw std::runtime_error("cannot start gzip compression for `" + file_.path() + "`");
  }
}

TraceFile::~TraceFile() = default;

void TraceFile::deflate_into_file(int flush) {
  z_stream& zs = deflate_->stream;
  for (;;) {
    zs.next_out = deflate_->out.data();
    zs.avail_out = static_cast<uInt>(deflate_->out.size());
    const int rc = deflate(&zs, flush);
    if (rc == Z_STREAM_ERROR) throw std::runtime_error("gzip compression failed");
    const std::size_t produced = deflate_->out.size() - zs.avail_out;
    file_.write(std::string_view(reinterpret_cast<const char*>(deflate_->out.data()), produced));
    if (flush == Z_FINISH ? rc == Z_STREAM_END : zs.avail_out != 0) return;
  }
}

void TraceFile::write(std::string_view text) {
  if (text.empty()) return;
  bytes_ += text.size();
  if (!deflate_) {
    file_.write(text);
    return;
  }
  // avail_in is 32-bit: feed in pieces below 1 GiB.
  while (!text.empty()) {
    const std::size_t n = std::min<std::size_t>(text.size(), std::size_t{1} << 30);
    deflate_->stream.next_in =
        reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));  // zlib does not write it
    deflate_->stream.avail_in = static_cast<uInt>(n);
    deflate_into_file(Z_NO_FLUSH);
    text.remove_prefix(n);
  }
}

void TraceFile::commit() {
  if (deflate_ && !deflate_->ended) {
    deflate_->stream.next_in = nullptr;
    deflate_->stream.avail_in = 0;
    deflate_into_file(Z_FINISH);
    deflateEnd(&deflate_->stream);
    deflate_->ended = true;
  }
  file_.commit();
}

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
