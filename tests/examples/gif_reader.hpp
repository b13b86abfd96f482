// A GIF decoder for the tests, written from the GIF89a specification and
// independent of the example's encoder: it checks what a viewer would see.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace regiontrace::test {

struct DecodedGif {
  int width = 0;
  int height = 0;
  bool loops = false;                                 // NETSCAPE2.0 extension present
  std::vector<int> delays_cs;                         // per frame
  std::vector<std::vector<std::uint8_t>> frames_rgb;  // width * height * 3 each
};

// Throws std::runtime_error naming what is malformed.
DecodedGif decode_gif(const std::vector<std::uint8_t>& bytes);
DecodedGif decode_gif_file(const std::string& path);

}  // namespace regiontrace::test
