#pragma once
// Linear RGB images and their files. Every image the product writes is linear *radiance* in the
// scene's units (an emitter of radiance 17 shows as 17). PNG output applies exposure and a tone
// curve for people; EXR (32-bit float) and PFM keep the linear values for measurement.
#include "util/atomic_file.hpp"

#include <glm/glm.hpp>

#include <filesystem>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace ibrr {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<glm::vec3> pixels;  // row-major, row 0 at the top of the picture

  Image() = default;
  Image(int w, int h, glm::vec3 fill = glm::vec3(0.0f)) : width(w), height(h), pixels(std::size_t(w) * h, fill) {}
  [[nodiscard]] glm::vec3& at(int x, int y) { return pixels[std::size_t(y) * width + x]; }
  [[nodiscard]] const glm::vec3& at(int x, int y) const { return pixels[std::size_t(y) * width + x]; }
};

enum class ToneCurve {
  Srgb,    // clamp to [0,1] then the sRGB transfer function
  Filmic,  // Narkowicz's ACES fit x(2.51x+0.03)/(x(2.43x+0.59)+0.14), then sRGB
};

struct ToneMapping {
  float exposureStops = 0.0f;  // PNG value = curve(2^stops · radiance)
  ToneCurve curve = ToneCurve::Srgb;
};

enum class ImageFormat { Png, Exr, Pfm };

// The format for a path's extension (.png, .exr, .pfm, case-insensitive); throws ibrr::Error
// naming the path and the accepted extensions otherwise.
ImageFormat imageFormatFor(const std::filesystem::path& path);

// Checks, before any long work, that an output can be written there: a known extension and the
// checks of util/atomic_file.hpp's checkOutputFile (writable folder, not an input, not a device or
// read-only file). Throws ibrr::Error naming the path and the fix.
void checkOutputPath(const std::filesystem::path& path);

// Writes by extension. The file is written under a temporary name in the same folder and renamed
// over the target only when complete, so a failure never leaves a partial or clobbered file.
void writeImage(const Image& image, const std::filesystem::path& path, const ToneMapping& tone = {});
// The same, as one of several outputs written all or none (committed by the caller).
void stageImage(OutputSet& outputs, const Image& image, const std::filesystem::path& path, const ToneMapping& tone = {});

// Writes 8-bit RGB pixels that are already display values (rows top to bottom, 3 bytes a pixel),
// such as a window's framebuffer, as a PNG; atomically, as writeImage.
void writeDisplayPng(const std::vector<std::uint8_t>& rgb, int width, int height, const std::filesystem::path& path);

// Reads a linear image (.exr or .pfm). Throws ibrr::Error naming the file on failure.
// At most kMaxImageSide pixels a side are read; with `expected` (width, height), an image of another
// size is refused before its pixels are allocated (a damaged header can claim gigabytes).
inline constexpr int kMaxImageSide = 16384;
using ExpectedSize = std::optional<std::pair<int, int>>;
Image readImage(const std::filesystem::path& path, const ExpectedSize& expected = std::nullopt);

// 8-bit sRGB-encoded value of one linear channel after tone mapping.
std::uint8_t toneMapChannel(float linear, const ToneMapping& tone);

}  // namespace ibrr
