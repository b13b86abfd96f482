// The example's GIF encoder, read back by an independent decoder.
#include <gtest/gtest.h>

#include <random>

#include "gif_reader.hpp"
#include "gif_writer.hpp"

namespace {

using examples::RgbImage;

RgbImage image(int w, int h, const std::function<std::array<int, 3>(int x, int y)>& color) {
  RgbImage im;
  im.width = w;
  im.height = h;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c : color(x, y)) im.rgb.push_back(static_cast<std::uint8_t>(c));
    }
  }
  return im;
}

TEST(GifWriter, FewColoursRoundTripExactly) {
  std::vector<RgbImage> frames;
  for (int f = 0; f < 3; ++f) {
    frames.push_back(image(37, 21, [f](int x, int y) {
      const int v = (x + 2 * y + 5 * f) % 200;  // 200 distinct colours: fits the palette
      return std::array<int, 3>{v, 255 - v, (v * 7) % 256};
    }));
  }
  const auto gif = regiontrace::test::decode_gif(examples::encode_gif(frames, 12));
  EXPECT_EQ(gif.width, 37);
  EXPECT_EQ(gif.height, 21);
  EXPECT_TRUE(gif.loops);
  ASSERT_EQ(gif.frames_rgb.size(), 3u);
  for (std::size_t f = 0; f < 3; ++f) {
    EXPECT_EQ(gif.frames_rgb[f], frames[f].rgb) << "frame " << f;
    EXPECT_EQ(gif.delays_cs[f], 12);
  }
}

// Random colours: many more than 256, and enough pixels that the LZW table
// fills and is cleared many times, at every code width.
TEST(GifWriter, NoisyFramesStayCloseAndDecodeWhole) {
  std::mt19937 rng(7);
  std::vector<RgbImage> frames;
  for (int f = 0; f < 2; ++f) {
    frames.push_back(image(211, 97, [&](int, int) {
      return std::array<int, 3>{int(rng() % 256), int(rng() % 256), int(rng() % 256)};
    }));
  }
  const auto gif = regiontrace::test::decode_gif(examples::encode_gif(frames, 5));
  ASSERT_EQ(gif.frames_rgb.size(), 2u);
  double squared = 0;
  std::size_t n = 0;
  for (std::size_t f = 0; f < 2; ++f) {
    ASSERT_EQ(gif.frames_rgb[f].size(), frames[f].rgb.size());
    for (std::size_t i = 0; i < frames[f].rgb.size(); ++i, ++n) {
      const double d = double(gif.frames_rgb[f][i]) - double(frames[f].rgb[i]);
      squared += d * d;
    }
  }
  // 256 colours for uniform noise over 16.7M: a typical error of a few steps
  // per channel (measured ~12), far from what a broken palette gives (~100).
  EXPECT_LT(std::sqrt(squared / double(n)), 20.0);
}

TEST(GifWriter, EveryImageSizeDecodes) {
  // Sizes around the code-width changes (512, 1024, 2048 codes).
  for (int side : {1, 2, 15, 23, 32, 45, 64, 91}) {
    std::vector<RgbImage> frames{image(side, side + 1, [](int x, int y) {
      return std::array<int, 3>{(x * 37) % 256, (y * 11) % 256, (x * y) % 256};
    })};
    const auto gif = regiontrace::test::decode_gif(examples::encode_gif(frames, 10));
    ASSERT_EQ(gif.frames_rgb.size(), 1u) << side;
    EXPECT_EQ(gif.frames_rgb[0].size(), frames[0].rgb.size()) << side;
  }
}

TEST(GifWriter, PaletteIsExactForFewColours) {
  std::vector<RgbImage> frames{image(4, 1, [](int x, int) {
    return x < 2 ? std::array<int, 3>{10, 20, 30} : std::array<int, 3>{200, 100, 0};
  })};
  const std::vector<std::uint8_t> palette = examples::median_cut_palette(frames);
  ASSERT_EQ(palette.size(), 256u * 3);
  const std::vector<std::uint8_t> first(palette.begin(), palette.begin() + 6);
  EXPECT_EQ(first, (std::vector<std::uint8_t>{10, 20, 30, 200, 100, 0}));
}

TEST(GifWriter, RejectsMismatchedFrames) {
  std::vector<RgbImage> frames{image(4, 4,
                                     [](int, int) {
                                       return std::array<int, 3>{1, 2, 3};
                                     }),
                               image(5, 4, [](int, int) {
                                 return std::array<int, 3>{1, 2, 3};
                               })};
  EXPECT_THROW(examples::encode_gif(frames, 10), std::invalid_argument);
  EXPECT_THROW(examples::encode_gif({}, 10), std::invalid_argument);
}

}  // namespace
