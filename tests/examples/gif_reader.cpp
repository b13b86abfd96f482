#include "gif_reader.hpp"

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace regiontrace::test {
namespace {

class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& b) : b_(b) {}
  std::uint8_t u8() {
    if (pos_ >= b_.size())
      throw std::runtime_error("GIF truncated at byte " + std::to_string(pos_));
    return b_[pos_++];
  }
  int u16() {
    const int lo = u8();
    return lo | (u8() << 8);
  }
  std::string text(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += char(u8());
    return s;
  }
  // Concatenated data sub-blocks up to the zero-length terminator.
  std::vector<std::uint8_t> sub_blocks() {
    std::vector<std::uint8_t> data;
    for (std::uint8_t n = u8(); n != 0; n = u8()) {
      for (int i = 0; i < n; ++i) data.push_back(u8());
    }
    return data;
  }

 private:
  const std::vector<std::uint8_t>& b_;
  std::size_t pos_ = 0;
};

std::vector<std::uint8_t> lzw_decode(const std::vector<std::uint8_t>& data, int min_code_size,
                                     std::size_t pixels) {
  const int clear = 1 << min_code_size, end = clear + 1;
  std::vector<std::vector<std::uint8_t>> table;
  auto reset = [&] {
    table.clear();
    for (int i = 0; i < clear; ++i) table.push_back({std::uint8_t(i)});
    table.push_back({});  // clear
    table.push_back({});  // end
  };
  reset();
  int code_size = min_code_size + 1;
  std::size_t bit = 0;
  auto read_code = [&]() -> int {
    int code = 0;
    for (int i = 0; i < code_size; ++i, ++bit) {
      if (bit / 8 >= data.size()) throw std::runtime_error("LZW data ends without an end code");
      code |= ((data[bit / 8] >> (bit % 8)) & 1) << i;
    }
    return code;
  };
  std::vector<std::uint8_t> out;
  int prev = -1;
  for (;;) {
    const int code = read_code();
    if (code == clear) {
      reset();
      code_size = min_code_size + 1;
      prev = -1;
      continue;
    }
    if (code == end) break;
    std::vector<std::uint8_t> entry;
    if (code < int(table.size())) {
      entry = table[std::size_t(code)];
    } else if (code == int(table.size()) && prev >= 0) {
      entry = table[std::size_t(prev)];
      entry.push_back(entry.front());
    } else {
      throw std::runtime_error("LZW code " + std::to_string(code) + " out of range");
    }
    out.insert(out.end(), entry.begin(), entry.end());
    if (prev >= 0 && table.size() < 4096) {
      std::vector<std::uint8_t> added = table[std::size_t(prev)];
      added.push_back(entry.front());
      table.push_back(added);
      if (table.size() == (std::size_t(1) << code_size) && code_size < 12) ++code_size;
    }
    prev = code;
  }
  if (out.size() != pixels) {
    throw std::runtime_error("frame has " + std::to_string(out.size()) + " pixels, expected " +
                             std::to_string(pixels));
  }
  return out;
}

}  // namespace

DecodedGif decode_gif(const std::vector<std::uint8_t>& bytes) {
  Reader r(bytes);
  DecodedGif gif;
  const std::string magic = r.text(6);
  if (magic != "GIF89a" && magic != "GIF87a") throw std::runtime_error("not a GIF: " + magic);
  gif.width = r.u16();
  gif.height = r.u16();
  const std::uint8_t flags = r.u8();
  r.u8();  // background
  r.u8();  // aspect
  std::vector<std::uint8_t> global;
  if (flags & 0x80) {
    for (int i = 0; i < 3 * (2 << (flags & 7)); ++i) global.push_back(r.u8());
  }
  int delay = 0;
  for (;;) {
    const std::uint8_t tag = r.u8();
    if (tag == 0x3B) break;
    if (tag == 0x21) {
      const std::uint8_t label = r.u8();
      std::vector<std::uint8_t> data = r.sub_blocks();
      if (label == 0xF9 && data.size() >= 3) delay = data[1] | (data[2] << 8);
      if (label == 0xFF && data.size() >= 11 &&
          std::string(data.begin(), data.begin() + 11) == "NETSCAPE2.0") {
        gif.loops = true;
      }
      continue;
    }
    if (tag != 0x2C) throw std::runtime_error("unexpected block " + std::to_string(tag));
    const int left = r.u16(), top = r.u16(), w = r.u16(), h = r.u16();
    const std::uint8_t image_flags = r.u8();
    if (left != 0 || top != 0 || w != gif.width || h != gif.height || (image_flags & 0x40)) {
      throw std::runtime_error("this reader handles full-canvas, non-interlaced frames only");
    }
    std::vector<std::uint8_t> palette = global;
    if (image_flags & 0x80) {
      palette.clear();
      for (int i = 0; i < 3 * (2 << (image_flags & 7)); ++i) palette.push_back(r.u8());
    }
    const int min_code_size = r.u8();
    const std::vector<std::uint8_t> indices =
        lzw_decode(r.sub_blocks(), min_code_size, std::size_t(w) * std::size_t(h));
    std::vector<std::uint8_t> rgb;
    rgb.reserve(indices.size() * 3);
    for (std::uint8_t i : indices) {
      if (std::size_t(i) * 3 + 2 >= palette.size()) throw std::runtime_error("index past palette");
      for (int c = 0; c < 3; ++c) rgb.push_back(palette[std::size_t(i) * 3 + std::size_t(c)]);
    }
    gif.frames_rgb.push_back(std::move(rgb));
    gif.delays_cs.push_back(delay);
  }
  return gif;
}

DecodedGif decode_gif_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                  std::istreambuf_iterator<char>());
  return decode_gif(bytes);
}

}  // namespace regiontrace::test
