#include "output_file.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace regiontrace::torch_profiler {

OutputFile::OutputFile(std::string path, bool gzip)
    : path_(std::move(path)), tmp_path_(path_ + ".tmp" + std::to_string(::getpid())), gzip_(gzip) {
  if (gzip_) {
    gzFile f = gzopen(tmp_path_.c_str(), "wb6");
    if (f == nullptr) {
      throw std::runtime_error("cannot create " + tmp_path_ + ": " + std::strerror(errno));
    }
    gzbuffer(f, 1 << 18);
    gz_ = f;
  } else {
    plain_ = std::fopen(tmp_path_.c_str(), "wb");
    if (plain_ == nullptr) {
      throw std::runtime_error("cannot create " + tmp_path_ + ": " + std::strerror(errno));
    }
  }
}

OutputFile::~OutputFile() {
  close_handles();
  if (!committed_) std::remove(tmp_path_.c_str());
}

void OutputFile::write(std::string_view text) {
  if (failed_ || text.empty()) return;
  bytes_ += text.size();
  if (gz_ != nullptr) {
    // gzwrite takes an unsigned length: write in pieces below 1 GiB.
    while (!text.empty()) {
      const unsigned n = static_cast<unsigned>(std::min<std::size_t>(text.size(), 1u << 30));
      if (gzwrite(static_cast<gzFile>(gz_), text.data(), n) != static_cast<int>(n)) {
        failed_ = true;
        return;
      }
      text.remove_prefix(n);
    }
  } else if (std::fwrite(text.data(), 1, text.size(), plain_) != text.size()) {
    failed_ = true;
  }
}

void OutputFile::close_handles() {
  if (gz_ != nullptr) {
    if (gzclose(static_cast<gzFile>(gz_)) != Z_OK) failed_ = true;
    gz_ = nullptr;
  }
  if (plain_ != nullptr) {
    if (std::fclose(plain_) != 0) failed_ = true;
    plain_ = nullptr;
  }
}

void OutputFile::commit() {
  close_handles();
  if (failed_) {
    throw std::runtime_error("could not write " + tmp_path_ + " (disk full?)");
  }
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + tmp_path_ + " to " + path_ + ": " +
                             std::strerror(errno));
  }
  committed_ = true;
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
