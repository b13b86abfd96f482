#include "output_file.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace regiontrace::memory {

OutputFile::~OutputFile() {
  close();
}

void OutputFile::open(const std::string& path) {
  path_ = path;
  file_ = std::fopen(path.c_str(), "we");
  if (file_ == nullptr) {
    throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
}

void OutputFile::fail(const char* what) {
  if (error_.empty()) error_ = std::string(what) + " " + path_ + ": " + std::strerror(errno);
}

void OutputFile::write(std::string_view text) {
  if (file_ == nullptr || failed()) return;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) fail("cannot write");
}

void OutputFile::flush() {
  if (file_ == nullptr || failed()) return;
  if (std::fflush(file_) != 0) fail("cannot write");
}

void OutputFile::close() {
  if (file_ == nullptr) return;
  if (std::fclose(file_) != 0 && error_.empty()) fail("cannot close");
  file_ = nullptr;
}

std::string OutputFile::write_whole(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "we");
  if (f == nullptr) return "cannot create " + tmp + ": " + std::strerror(errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    std::remove(tmp.c_str());
    return "cannot write " + path + ": " + std::strerror(written ? errno : saved_errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
  }
  return {};
}

}  // namespace regiontrace::memory
