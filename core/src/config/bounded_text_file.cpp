#include "bounded_text_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "regiontrace/regiontrace.hpp"

namespace regiontrace::detail {

std::string read_bounded_text_file(const std::string& path, const std::string& what,
                                   std::uintmax_t max_bytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw Error(what + " " + path + ": cannot be read (" +
                (errno == ENOENT ? std::string("no such file") : std::strerror(errno)) + ")");
  }
  if (S_ISDIR(info.st_mode)) throw Error(what + " " + path + ": is a folder, not a file");
  if (!S_ISREG(info.st_mode)) {
    throw Error(what + " " + path + ": is not a regular file (a device, pipe or socket)");
  }
  const std::string limit = "at most " + std::to_string(max_bytes >> 20) + " MiB";
  if (static_cast<std::uintmax_t>(info.st_size) > max_bytes) {
    throw Error(what + " " + path + ": " + std::to_string(info.st_size) + " bytes; " + limit);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(what + " " + path + ": cannot be read (permission denied)");
  // In chunks, up to the limit: a file that grew since stat() is refused,
  // not read without end.
  std::string text;
  text.reserve(static_cast<std::size_t>(info.st_size));
  char chunk[1 << 16];
  while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) throw Error(what + " " + path + ": grew past " + limit);
  }
  return text;
}

}  // namespace regiontrace::detail
