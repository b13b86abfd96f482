#include "gif_writer.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <stdexcept>
#include <unordered_map>

namespace examples {
namespace {

struct ColorCount {
  std::array<std::uint8_t, 3> rgb;
  std::uint64_t count;
};

std::uint32_t pack(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 16) | (std::uint32_t(p[1]) << 8) | p[2];
}

// A range [begin, end) of the distinct colours, cut along its widest channel.
struct Box {
  std::size_t begin, end;
  int widest_channel(const std::vector<ColorCount>& colors, int* range) const {
    int best = 0;
    *range = -1;
    for (int c = 0; c < 3; ++c) {
      int lo = 255, hi = 0;
      for (std::size_t i = begin; i < end; ++i) {
        lo = std::min<int>(lo, colors[i].rgb[c]);
        hi = std::max<int>(hi, colors[i].rgb[c]);
      }
      if (hi - lo > *range) {
        *range = hi - lo;
        best = c;
      }
    }
    return best;
  }
};

// Packs variable-width LZW codes least significant bit first into the
// 255-byte sub-blocks GIF wants.
class CodeWriter {
 public:
  explicit CodeWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void write(std::uint32_t code, int bits) {
    buffer_ |= std::uint64_t(code) << used_;
    used_ += bits;
    while (used_ >= 8) {
      push(std::uint8_t(buffer_ & 0xFF));
      buffer_ >>= 8;
      used_ -= 8;
    }
  }
  void finish() {
    if (used_ > 0) push(std::uint8_t(buffer_ & 0xFF));
    buffer_ = 0;
    used_ = 0;
    if (!block_.empty()) emit_block();
    out_.push_back(0);  // block terminator
  }

 private:
  void push(std::uint8_t byte) {
    block_.push_back(byte);
    if (block_.size() == 255) emit_block();
  }
  void emit_block() {
    out_.push_back(std::uint8_t(block_.size()));
    out_.insert(out_.end(), block_.begin(), block_.end());
    block_.clear();
  }
  std::vector<std::uint8_t>& out_;
  std::vector<std::uint8_t> block_;
  std::uint64_t buffer_ = 0;
  int used_ = 0;
};

// GIF's LZW over 8-bit palette indices: codes of 9 to 12 bits, a clear code
// when the 4096-entry table is full.
void lzw_encode(const std::vector<std::uint8_t>& indices, std::vector<std::uint8_t>& out) {
  constexpr int kMinCodeSize = 8;
  constexpr std::uint32_t kClear = 1u << kMinCodeSize, kEnd = kClear + 1;
  out.push_back(kMinCodeSize);
  CodeWriter writer(out);
  // table[prefix * 256 + byte] = code of prefix+byte, 0 = none (0 is never a
  // multi-byte string's code).
  std::vector<std::uint16_t> table(4096 * 256, 0);
  int code_size = kMinCodeSize + 1;
  std::uint32_t last_code = kEnd;  // the highest code assigned so far
  writer.write(kClear, code_size);
  std::uint32_t prefix = indices.front();
  for (std::size_t i = 1; i < indices.size(); ++i) {
    const std::uint8_t next = indices[i];
    std::uint16_t& entry = table[prefix * 256 + next];
    if (entry != 0) {
      prefix = entry;
      continue;
    }
    writer.write(prefix, code_size);
    entry = std::uint16_t(++last_code);
    // The decoder learns each code one step later, so widths change here.
    if (last_code >= (1u << code_size) && code_size < 12) ++code_size;
    if (last_code == 4095) {
      writer.write(kClear, code_size);
      std::fill(table.begin(), table.end(), 0);
      code_size = kMinCodeSize + 1;
      last_code = kEnd;
    }
    prefix = next;
  }
  writer.write(prefix, code_size);
  // Reading that last code, the decoder adds one more entry: it may need the
  // wider width for the end code.
  if (last_code + 1 == (1u << code_size) && code_size < 12) ++code_size;
  writer.write(kEnd, code_size);
  writer.finish();
}

void put16(std::vector<std::uint8_t>& out, int v) {
  out.push_back(std::uint8_t(v & 0xFF));
  out.push_back(std::uint8_t((v >> 8) & 0xFF));
}

}  // namespace

std::vector<std::uint8_t> median_cut_palette(const std::vector<RgbImage>& frames) {
  std::unordered_map<std::uint32_t, std::uint64_t> histogram;
  for (const RgbImage& f : frames) {
    for (std::size_t i = 0; i + 2 < f.rgb.size(); i += 3) ++histogram[pack(&f.rgb[i])];
  }
  std::vector<ColorCount> colors;
  colors.reserve(histogram.size());
  for (const auto& [packed, count] : histogram) {
    colors.push_back(
        {{std::uint8_t(packed >> 16), std::uint8_t(packed >> 8), std::uint8_t(packed)}, count});
  }
  // Sorted so that the palette does not depend on the hash map's order.
  std::sort(colors.begin(), colors.end(),
            [](const ColorCount& a, const ColorCount& b) { return a.rgb < b.rgb; });
  std::vector<Box> boxes;
  if (!colors.empty()) boxes.push_back({0, colors.size()});
  while (boxes.size() < 256) {
    // Split the box with the widest spread; stop when every box is one colour.
    int best_range = 0, best_channel = 0;
    std::size_t best = boxes.size();
    for (std::size_t b = 0; b < boxes.size(); ++b) {
      if (boxes[b].end - boxes[b].begin < 2) continue;
      int range = 0;
      const int channel = boxes[b].widest_channel(colors, &range);
      if (range > best_range) {
        best_range = range;
        best_channel = channel;
        best = b;
      }
    }
    if (best == boxes.size()) break;
    Box& box = boxes[best];
    auto first = colors.begin() + std::ptrdiff_t(box.begin);
    auto last = colors.begin() + std::ptrdiff_t(box.end);
    std::sort(first, last, [c = best_channel](const ColorCount& a, const ColorCount& b) {
      return a.rgb[c] != b.rgb[c] ? a.rgb[c] < b.rgb[c] : a.rgb < b.rgb;
    });
    // Cut at the pixel-weighted median, keeping both halves non-empty.
    std::uint64_t total = 0, seen = 0;
    for (auto it = first; it != last; ++it) total += it->count;
    std::size_t cut = box.begin + 1;
    for (std::size_t i = box.begin; i < box.end - 1; ++i) {
      seen += colors[i].count;
      cut = i + 1;
      if (2 * seen >= total) break;
    }
    const Box upper{cut, box.end};
    box.end = cut;
    boxes.push_back(upper);
  }
  std::vector<std::uint8_t> palette(256 * 3, 0);
  for (std::size_t b = 0; b < boxes.size(); ++b) {
    double sum[3] = {0, 0, 0};
    std::uint64_t n = 0;
    for (std::size_t i = boxes[b].begin; i < boxes[b].end; ++i) {
      for (int c = 0; c < 3; ++c) sum[c] += double(colors[i].rgb[c]) * double(colors[i].count);
      n += colors[i].count;
    }
    for (int c = 0; c < 3; ++c) palette[b * 3 + c] = std::uint8_t(sum[c] / double(n) + 0.5);
  }
  return palette;
}

std::vector<std::uint8_t> encode_gif(const std::vector<RgbImage>& frames, int delay_cs) {
  if (frames.empty()) throw std::invalid_argument("encode_gif: no frames");
  const int width = frames.front().width, height = frames.front().height;
  if (width <= 0 || height <= 0 || width > 65535 || height > 65535) {
    throw std::invalid_argument("encode_gif: frame size out of range");
  }
  for (const RgbImage& f : frames) {
    if (f.width != width || f.height != height ||
        f.rgb.size() != std::size_t(width) * std::size_t(height) * 3) {
      throw std::invalid_argument("encode_gif: frames differ in size");
    }
  }
  const std::vector<std::uint8_t> palette = median_cut_palette(frames);

  std::vector<std::uint8_t> out;
  const char header[] = "GIF89a";
  out.insert(out.end(), header, header + 6);
  put16(out, width);
  put16(out, height);
  out.push_back(0xF7);  // global palette, 8 bits per channel, 256 entries
  out.push_back(0);     // background colour index
  out.push_back(0);     // square pixels
  out.insert(out.end(), palette.begin(), palette.end());
  // NETSCAPE2.0 application extension: loop forever.
  const char netscape[] = "NETSCAPE2.0";
  out.insert(out.end(), {0x21, 0xFF, 0x0B});
  out.insert(out.end(), netscape, netscape + 11);
  out.insert(out.end(), {0x03, 0x01, 0x00, 0x00, 0x00});

  std::unordered_map<std::uint32_t, std::uint8_t> nearest;
  std::vector<std::uint8_t> indices(std::size_t(width) * std::size_t(height));
  for (const RgbImage& f : frames) {
    for (std::size_t p = 0; p < indices.size(); ++p) {
      const std::uint32_t key = pack(&f.rgb[p * 3]);
      auto it = nearest.find(key);
      if (it == nearest.end()) {
        int best = 0;
        long best_d = -1;
        for (int i = 0; i < 256; ++i) {
          long d = 0;
          for (int c = 0; c < 3; ++c) {
            const long diff = long(f.rgb[p * 3 + c]) - long(palette[std::size_t(i) * 3 + c]);
            d += diff * diff;
          }
          if (best_d < 0 || d < best_d) {
            best_d = d;
            best = i;
          }
        }
        it = nearest.emplace(key, std::uint8_t(best)).first;
      }
      indices[p] = it->second;
    }
    // Graphic control extension: delay, "leave in place" disposal.
    out.insert(out.end(), {0x21, 0xF9, 0x04, 0x04});
    put16(out, delay_cs);
    out.insert(out.end(), {0x00, 0x00});
    // Image descriptor: the whole canvas, no local palette, not interlaced.
    out.push_back(0x2C);
    put16(out, 0);
    put16(out, 0);
    put16(out, width);
    put16(out, height);
    out.push_back(0);
    lzw_encode(indices, out);
  }
  out.push_back(0x3B);  // trailer
  return out;
}

void write_gif(const std::string& path, const std::vector<RgbImage>& frames, int delay_cs) {
  const std::vector<std::uint8_t> bytes = encode_gif(frames, delay_cs);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!file) throw std::runtime_error("cannot write " + path);
}

}  // namespace examples
