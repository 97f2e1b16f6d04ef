#include "util/supersample.hpp"

#include "util/error.hpp"

#include <string>

namespace ibrr {

namespace {
void checkFrame(int width, int height, int factor) {
  IBRR_CHECK(factor >= 1 && factor <= kMaxSupersample && width > 0 && height > 0 && width % factor == 0 &&
                 height % factor == 0,
             "resolving a " + std::to_string(width) + "x" + std::to_string(height) + " frame supersampled by " +
                 std::to_string(factor));
}
}  // namespace

glm::vec2 supersampleOffset(int factor, int tile) {
  IBRR_CHECK(factor >= 1 && factor <= kMaxSupersample && tile >= 0 && tile < factor * factor,
             "sample " + std::to_string(tile) + " of a frame supersampled by " + std::to_string(factor));
  const int i = tile % factor, j = tile / factor;
  const float n = static_cast<float>(factor);
  const float x = (static_cast<float>(i) + (static_cast<float>(j) + 0.5f) / n) / n;
  const float y = (static_cast<float>(j) + (static_cast<float>(factor - 1 - i) + 0.5f) / n) / n;
  return {x - 0.5f, y - 0.5f};
}

Image resolveSupersampled(const Image& frame, int factor) {
  checkFrame(frame.width, frame.height, factor);
  const int width = frame.width / factor, height = frame.height / factor;
  Image result(width, height);
  const float weight = 1.0f / float(factor * factor);
  for (int y = 0; y < frame.height; ++y)
    for (int x = 0; x < frame.width; ++x) result.at(x % width, y % height) += weight * frame.at(x, y);
  return result;
}

std::vector<std::uint8_t> resolveSupersampledMask(const std::vector<std::uint8_t>& frameMask, int frameWidth,
                                                  int frameHeight, int factor) {
  checkFrame(frameWidth, frameHeight, factor);
  IBRR_CHECK(frameMask.size() == std::size_t(frameWidth) * std::size_t(frameHeight), "a mask of the frame's size");
  const int width = frameWidth / factor, height = frameHeight / factor;
  std::vector<std::uint8_t> mask(std::size_t(width) * std::size_t(height), 0);
  for (int y = 0; y < frameHeight; ++y)
    for (int x = 0; x < frameWidth; ++x)
      if (frameMask[std::size_t(y) * std::size_t(frameWidth) + std::size_t(x)])
        mask[std::size_t(y % height) * std::size_t(width) + std::size_t(x % width)] = 1;
  return mask;
}

}  // namespace ibrr
