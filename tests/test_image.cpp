// Image files: exact linear round trips, the documented tone curves, and atomic writes.
#include "test_support.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/image.hpp"
#include "util/progress.hpp"
#include "util/supersample.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include <stb_image.h>

using namespace ibrr;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {
Image gradient(int width, int height) {
  Image image(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      image.at(x, y) = glm::vec3(float(x) * 0.37f, float(y) * 17.0f, -1e-3f * float(x + y));
  return image;
}
}  // namespace

TEST_CASE("EXR and PFM keep linear values exactly, row 0 at the top", "[image]") {
  const fs::path folder = test::outputDir("image_roundtrip");
  const Image original = gradient(7, 5);
  for (const char* name : {"a.exr", "a.pfm"}) {
    writeImage(original, folder / name);
    const Image loaded = readImage(folder / name);
    REQUIRE(loaded.width == 7);
    REQUIRE(loaded.height == 5);
    CHECK(loaded.pixels == original.pixels);
  }
}

TEST_CASE("PNG output applies exposure and the sRGB or filmic curve", "[image]") {
  ToneMapping srgb;
  CHECK(toneMapChannel(0.0f, srgb) == 0);
  CHECK(toneMapChannel(1.0f, srgb) == 255);
  CHECK(toneMapChannel(17.0f, srgb) == 255);      // clamped
  CHECK(toneMapChannel(0.5f, srgb) == 188);       // sRGB(0.5) = 0.7354
  CHECK(toneMapChannel(0.0031308f, srgb) == 10);  // the linear segment: 12.92 · x · 255
  ToneMapping stops{1.0f, ToneCurve::Srgb};
  CHECK(toneMapChannel(0.25f, stops) == 188);  // 2^1 · 0.25 = 0.5
  ToneMapping filmic{0.0f, ToneCurve::Filmic};
  // ACES fit at x = 1: (2.51 + 0.03) / (2.43 + 0.59 + 0.14) = 0.8038 → sRGB 0.9091 → 232.
  CHECK(toneMapChannel(1.0f, filmic) == 232);
  CHECK(toneMapChannel(std::nanf(""), srgb) == 0);

  const fs::path folder = test::outputDir("image_png");
  Image image(3, 2, glm::vec3(0.5f));
  image.at(2, 1) = glm::vec3(1.0f, 0.0f, 0.0f);
  writeImage(image, folder / "small.png");
  int width = 0, height = 0, channels = 0;
  unsigned char* pixels = stbi_load((folder / "small.png").c_str(), &width, &height, &channels, 3);
  REQUIRE(pixels);
  CHECK(width == 3);
  CHECK(height == 2);
  CHECK(int(pixels[0]) == 188);
  CHECK(int(pixels[(1 * 3 + 2) * 3 + 0]) == 255);  // bottom-right pixel is red
  CHECK(int(pixels[(1 * 3 + 2) * 3 + 1]) == 0);
  stbi_image_free(pixels);
}

TEST_CASE("a failed write leaves the existing file untouched and no temporary behind", "[image][errors]") {
  const fs::path folder = test::outputDir("atomic");
  const fs::path target = folder / "result.exr";
  test::writeText(target, "previous content");
  CHECK_THROWS_WITH(writeFileAtomically(target,
                                        [](const fs::path& temporary) {
                                          test::writeText(temporary, "half a file");
                                          throw Error("disk full");
                                        }),
                    Contains("disk full"));
  CHECK(test::readText(target) == "previous content");
  CHECK(std::distance(fs::directory_iterator(folder), fs::directory_iterator()) == 1);
  // A successful write replaces it.
  writeImage(gradient(2, 2), target);
  CHECK(readImage(target).pixels == gradient(2, 2).pixels);
}

TEST_CASE("an image with a NaN or infinite pixel is refused, not written", "[image][errors]") {
  // A Keller image with NaN pixels was written and shown as black holes.
  const fs::path folder = test::outputDir("non_finite");
  for (const float bad : {std::nanf(""), std::numeric_limits<float>::infinity()}) {
    Image image = gradient(4, 3);
    image.at(2, 1).g = bad;
    for (const char* name : {"out.exr", "out.png", "out.pfm"})
      CHECK_THROWS_WITH(writeImage(image, folder / name), Contains(name) && Contains("1 pixels") &&
                                                                       Contains("not finite"));
  }
  CHECK(fs::is_empty(folder));
}

TEST_CASE("several outputs are written all or none", "[image][errors]") {
  // `reference` left an orphan ref.exr when writing ref.pfm failed.
  const fs::path folder = test::outputDir("output_set");
  test::writeText(folder / "a.txt", "earlier a");
  {
    OutputSet outputs;
    outputs.stage(folder / "a.txt", [](const fs::path& temporary) { test::writeText(temporary, "new a"); });
    CHECK_THROWS_WITH(outputs.stage(folder / "b.txt",
                                    [](const fs::path& temporary) {
                                      test::writeText(temporary, "half of b");
                                      throw Error("disk full");
                                    }),
                      Contains("disk full"));
  }  // never committed: both temporary files removed
  CHECK(test::readText(folder / "a.txt") == "earlier a");
  CHECK(std::distance(fs::directory_iterator(folder), fs::directory_iterator()) == 1);
  {
    OutputSet outputs;
    outputs.stage(folder / "a.txt", [](const fs::path& temporary) { test::writeText(temporary, "new a"); });
    outputs.stage(folder / "b.txt", [](const fs::path& temporary) { test::writeText(temporary, "new b"); });
    setInterruptRequested(true);  // a stop before the commit: nothing replaced
    CHECK_THROWS_AS(outputs.commit(), Interrupted);
    setInterruptRequested(false);
  }
  CHECK(test::readText(folder / "a.txt") == "earlier a");
  CHECK_FALSE(fs::exists(folder / "b.txt"));
  OutputSet again;
  again.stage(folder / "a.txt", [](const fs::path& temporary) { test::writeText(temporary, "new a"); });
  again.stage(folder / "b.txt", [](const fs::path& temporary) { test::writeText(temporary, "new b"); });
  again.commit();
  CHECK(test::readText(folder / "a.txt") == "new a");
  CHECK(test::readText(folder / "b.txt") == "new b");
  CHECK(std::distance(fs::directory_iterator(folder), fs::directory_iterator()) == 2);
}

TEST_CASE("an image whose header claims gigabytes is refused before its pixels are allocated", "[image][errors]") {
  // fuzz_lightmap found a lightmap's EXR claiming 4,915,220 × 28 pixels: 1.65 GB were allocated and
  // zeroed before the size was compared with the metadata's.
  const fs::path folder = test::outputDir("huge_header");
  const fs::path path = folder / "claims.exr";
  writeImage(gradient(4, 3), path);
  std::string bytes = test::readText(path);
  const std::string attribute = std::string("dataWindow") + '\0' + "box2i" + '\0';
  const std::size_t at = bytes.find(attribute);
  REQUIRE(at != std::string::npos);
  const std::int32_t hugeMaxX = 4915219;  // box2i: size (4 bytes), then min.x, min.y, max.x, max.y
  std::memcpy(&bytes[at + attribute.size() + 4 + 8], &hugeMaxX, sizeof hugeMaxX);
  test::writeText(path, bytes);
  CHECK_THROWS_WITH(readImage(path), Contains("claims.exr") && Contains("4915220x3") && Contains("16384"));
  const fs::path right = folder / "right.exr";  // claims.exr was read: this process may not write it again
  writeImage(gradient(4, 3), right);
  CHECK_THROWS_WITH(readImage(right, std::pair(5, 3)), Contains("right.exr") && Contains("expected 5x3"));
  CHECK(readImage(right, std::pair(4, 3)).pixels == gradient(4, 3).pixels);
}

TEST_CASE("bad image paths are refused before any work", "[image][errors]") {
  const fs::path folder = test::outputDir("bad_paths");
  CHECK_THROWS_WITH(checkOutputPath(folder / "no_such_folder" / "out.png"),
                    Contains("does not exist") && Contains("no_such_folder"));
  CHECK_THROWS_WITH(checkOutputPath(folder / "out.jpg"), Contains("out.jpg") && Contains(".png"));
  test::writeText(folder / "short.pfm", "PF\n4 4\n-1.0\n0000");
  CHECK_THROWS_WITH(readImage(folder / "short.pfm"), Contains("short.pfm") && Contains("truncated"));
  test::writeText(folder / "bad.exr", "not an exr");
  CHECK_THROWS_WITH(readImage(folder / "bad.exr"), Contains("bad.exr"));
}

TEST_CASE("supersampling's N² samples form an N-rooks pattern, one in each N×N cell of the pixel", "[image]") {
  CHECK(supersampleOffset(1, 0) == glm::vec2(0.0f));
  // N = 2 is the rotated grid of RGSS: x at 1/8, 3/8, 5/8, 7/8 of the pixel, each with a y of its own.
  CHECK(supersampleOffset(2, 0) == glm::vec2(0.125f - 0.5f, 0.375f - 0.5f));
  CHECK(supersampleOffset(2, 1) == glm::vec2(0.625f - 0.5f, 0.125f - 0.5f));
  CHECK(supersampleOffset(2, 2) == glm::vec2(0.375f - 0.5f, 0.875f - 0.5f));
  CHECK(supersampleOffset(2, 3) == glm::vec2(0.875f - 0.5f, 0.625f - 0.5f));
  for (int n = 1; n <= kMaxSupersample; ++n) {
    std::set<int> columns, rows, cells;
    for (int tile = 0; tile < n * n; ++tile) {
      const glm::vec2 offset = supersampleOffset(n, tile);
      REQUIRE(std::fabs(offset.x) < 0.5f);
      REQUIRE(std::fabs(offset.y) < 0.5f);
      // Sample centres sit at the middle of a cell of the N²×N² grid.
      const float x = (offset.x + 0.5f) * float(n * n) - 0.5f, y = (offset.y + 0.5f) * float(n * n) - 0.5f;
      CHECK(std::fabs(x - std::round(x)) < 1e-4f);
      CHECK(std::fabs(y - std::round(y)) < 1e-4f);
      const int column = int(std::lround(x)), row = int(std::lround(y));
      columns.insert(column);
      rows.insert(row);
      cells.insert((row / n) * n + column / n);
    }
    INFO("N = " << n);
    CHECK(int(columns.size()) == n * n);
    CHECK(int(rows.size()) == n * n);
    CHECK(int(cells.size()) == n * n);
  }
}

TEST_CASE("a supersampled frame resolves to the mean of its tiles, and a pixel is masked when any sample is",
          "[image]") {
  // A 2×1 picture supersampled by 2: a 4×2 frame of four 2×1 tiles.
  Image frame(4, 2);
  const float values[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x) frame.at(x, y) = glm::vec3(values[y][x]);
  const Image picture = resolveSupersampled(frame, 2);
  REQUIRE(picture.width == 2);
  REQUIRE(picture.height == 1);
  CHECK(picture.at(0, 0) == glm::vec3((1 + 3 + 5 + 7) / 4.0f));
  CHECK(picture.at(1, 0) == glm::vec3((2 + 4 + 6 + 8) / 4.0f));
  const std::vector<std::uint8_t> mask = resolveSupersampledMask({0, 0, 0, 1, 0, 0, 0, 0}, 4, 2, 2);
  CHECK(mask == std::vector<std::uint8_t>{0, 1});
}
