#include "util/image.hpp"

#include "util/atomic_file.hpp"
#include "util/input_file.hpp"
#include "util/error.hpp"

#include <ImfChannelList.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfInputFile.h>
#include <ImfOutputFile.h>
#include <stb_image_write.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ibrr {

namespace fs = std::filesystem;

ImageFormat imageFormatFor(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (extension == ".png") return ImageFormat::Png;
  if (extension == ".exr") return ImageFormat::Exr;
  if (extension == ".pfm") return ImageFormat::Pfm;
  throw Error(path.string() + ": unknown image type '" + extension +
              "'; use .png (tone-mapped), .exr or .pfm (linear)");
}

void checkOutputPath(const fs::path& path) {
  (void)imageFormatFor(path);
  checkOutputFile(path);
}

std::uint8_t toneMapChannel(float linear, const ToneMapping& tone) {
  float x = std::isfinite(linear) ? std::max(linear, 0.0f) * std::exp2(tone.exposureStops) : 0.0f;
  if (tone.curve == ToneCurve::Filmic) x = (x * (2.51f * x + 0.03f)) / (x * (2.43f * x + 0.59f) + 0.14f);
  x = std::clamp(x, 0.0f, 1.0f);
  const float encoded = x <= 0.0031308f ? 12.92f * x : 1.055f * std::pow(x, 1.0f / 2.4f) - 0.055f;
  return static_cast<std::uint8_t>(std::lround(encoded * 255.0f));
}

namespace {

void writeRgb8Png(const std::vector<std::uint8_t>& rgb, int width, int height, const fs::path& path) {
  if (!stbi_write_png(path.c_str(), width, height, 3, rgb.data(), width * 3))
    throw Error(path.string() + ": cannot write the PNG (disk full or not writable?)");
}

void writePng(const Image& image, const fs::path& path, const ToneMapping& tone) {
  std::vector<std::uint8_t> bytes(image.pixels.size() * 3);
  for (std::size_t i = 0; i < image.pixels.size(); ++i)
    for (int c = 0; c < 3; ++c) bytes[i * 3 + c] = toneMapChannel(image.pixels[i][c], tone);
  writeRgb8Png(bytes, image.width, image.height, path);
}

void writeExr(const Image& image, const fs::path& path) {
  try {
    Imf::Header header(image.width, image.height);
    for (const char* name : {"R", "G", "B"}) header.channels().insert(name, Imf::Channel(Imf::FLOAT));
    Imf::OutputFile file(path.c_str(), header);
    Imf::FrameBuffer frame;
    auto* base = reinterpret_cast<char*>(const_cast<glm::vec3*>(image.pixels.data()));
    const std::size_t xStride = sizeof(glm::vec3), yStride = sizeof(glm::vec3) * image.width;
    for (int c = 0; c < 3; ++c)
      frame.insert(std::string(1, "RGB"[c]), Imf::Slice(Imf::FLOAT, base + c * sizeof(float), xStride, yStride));
    file.setFrameBuffer(frame);
    file.writePixels(image.height);
  } catch (const std::exception& error) {
    throw Error(path.string() + ": cannot write the EXR: " + error.what());
  }
}

// PFM: "PF\n<w> <h>\n<scale>\n" then float RGB rows from the *bottom* row up; a negative scale
// means little-endian.
void writePfm(const Image& image, const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  out << "PF\n" << image.width << " " << image.height << "\n-1.0\n";
  for (int y = image.height - 1; y >= 0; --y)
    out.write(reinterpret_cast<const char*>(&image.at(0, y)), std::streamsize(sizeof(glm::vec3) * image.width));
  out.close();
  if (!out) throw Error(path.string() + ": cannot write the PFM (disk full or not writable?)");
}

// Refuses, before anything is allocated, a size beyond kMaxImageSide or other than `expected`.
void checkImageSize(const fs::path& path, std::int64_t width, std::int64_t height, const ExpectedSize& expected) {
  if (width < 1 || height < 1 || width > kMaxImageSide || height > kMaxImageSide)
    throw Error(path.string() + ": the image claims " + std::to_string(width) + "x" + std::to_string(height) +
                " pixels, beyond the " + std::to_string(kMaxImageSide) + " a side ibrr reads; the file is damaged");
  if (expected && (width != expected->first || height != expected->second))
    throw Error(path.string() + ": the image is " + std::to_string(width) + "x" + std::to_string(height) +
                ", expected " + std::to_string(expected->first) + "x" + std::to_string(expected->second));
}

Image readExr(const fs::path& path, const ExpectedSize& expected) {
  try {
    Imf::InputFile file(path.c_str());
    const Imath::Box2i window = file.header().dataWindow();
    checkImageSize(path, std::int64_t(window.max.x) - window.min.x + 1, std::int64_t(window.max.y) - window.min.y + 1,
                   expected);
    Image image(window.max.x - window.min.x + 1, window.max.y - window.min.y + 1);
    Imf::FrameBuffer frame;
    auto* base = reinterpret_cast<char*>(image.pixels.data()) -
                 (std::ptrdiff_t(window.min.x) + std::ptrdiff_t(window.min.y) * image.width) * sizeof(glm::vec3);
    for (int c = 0; c < 3; ++c)
      frame.insert(std::string(1, "RGB"[c]), Imf::Slice(Imf::FLOAT, base + c * sizeof(float), sizeof(glm::vec3),
                                                        sizeof(glm::vec3) * image.width, 1, 1, 0.0));
    file.setFrameBuffer(frame);
    file.readPixels(window.min.y, window.max.y);
    return image;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    throw Error(path.string() + ": cannot read the EXR: " + error.what());
  }
}

Image readPfm(const fs::path& path, const ExpectedSize& expected) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open the image");
  std::string magic;
  int width = 0, height = 0;
  double scale = 0.0;
  in >> magic >> width >> height >> scale;
  in.get();  // the single whitespace after the header
  if (!in || (magic != "PF" && magic != "Pf") || scale == 0.0)
    throw Error(path.string() + ": not a valid PFM file (bad header)");
  checkImageSize(path, width, height, expected);
  if (scale > 0.0) throw Error(path.string() + ": big-endian PFM is not supported");
  const int channels = magic == "PF" ? 3 : 1;
  std::vector<float> row(std::size_t(width) * channels);
  Image image(width, height);
  for (int y = height - 1; y >= 0; --y) {
    in.read(reinterpret_cast<char*>(row.data()), std::streamsize(row.size() * sizeof(float)));
    if (!in) throw Error(path.string() + ": the PFM file is truncated");
    for (int x = 0; x < width; ++x)
      image.at(x, y) = channels == 3 ? glm::vec3(row[x * 3], row[x * 3 + 1], row[x * 3 + 2]) : glm::vec3(row[x]);
  }
  return image;
}

}  // namespace

void stageImage(OutputSet& outputs, const Image& image, const fs::path& path, const ToneMapping& tone) {
  const ImageFormat format = imageFormatFor(path);
  IBRR_CHECK(image.width > 0 && image.height > 0 && image.pixels.size() == std::size_t(image.width) * image.height,
             path.string() + ": the image to write is empty or inconsistent");
  // A NaN or infinite pixel is never a result: it is refused here, not written for a viewer to show.
  const auto nonFinite = std::count_if(image.pixels.begin(), image.pixels.end(), [](const glm::vec3& p) {
    return !(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z));
  });
  if (nonFinite > 0)
    throw Error(path.string() + ": " + std::to_string(nonFinite) +
                " pixels of the image are not finite numbers (NaN or infinity), so nothing was written; "
                "please report it with the command line");
  outputs.stage(path, [&](const fs::path& temporary) {
    switch (format) {
      case ImageFormat::Png:
        writePng(image, temporary, tone);
        break;
      case ImageFormat::Exr:
        writeExr(image, temporary);
        break;
      case ImageFormat::Pfm:
        writePfm(image, temporary);
        break;
    }
  });
}

void writeImage(const Image& image, const fs::path& path, const ToneMapping& tone) {
  OutputSet output;
  stageImage(output, image, path, tone);
  output.commit();
}

void writeDisplayPng(const std::vector<std::uint8_t>& rgb, int width, int height, const fs::path& path) {
  if (imageFormatFor(path) != ImageFormat::Png)
    throw Error(path.string() + ": display pixels are written as .png only");
  IBRR_CHECK(width > 0 && height > 0 && rgb.size() == std::size_t(width) * std::size_t(height) * 3,
             path.string() + ": the pixels to write are empty or inconsistent");
  writeFileAtomically(path, [&](const fs::path& temporary) { writeRgb8Png(rgb, width, height, temporary); });
}

Image readImage(const fs::path& path, const ExpectedSize& expected) {
  requireRegularFile(path, "image");
  switch (imageFormatFor(path)) {
    case ImageFormat::Exr:
      return readExr(path, expected);
    case ImageFormat::Pfm:
      return readPfm(path, expected);
    case ImageFormat::Png:
      break;
  }
  throw Error(path.string() + ": PNG is tone-mapped; give the linear .exr or .pfm to measure");
}

}  // namespace ibrr
