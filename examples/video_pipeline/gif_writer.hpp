// A small animated-GIF encoder (GIF89a, one global 256-colour palette chosen
// by median cut, LZW-compressed frames, looping forever), so the example can
// show its video without an image library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace examples {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  // width * height * 3 bytes, rows top to bottom
};

// Up to 256 colours that represent every pixel of `frames` well (median cut).
std::vector<std::uint8_t> median_cut_palette(const std::vector<RgbImage>& frames);

// The GIF file bytes: every frame the same size, shown `delay_cs` hundredths
// of a second each. Throws std::invalid_argument on empty or mismatched frames.
std::vector<std::uint8_t> encode_gif(const std::vector<RgbImage>& frames, int delay_cs);

// encode_gif() written to `path`; throws std::runtime_error when it cannot be.
void write_gif(const std::string& path, const std::vector<RgbImage>& frames, int delay_cs);

}  // namespace examples
