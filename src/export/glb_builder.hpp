#pragma once
// A binary glTF 2.0 file (.glb) assembled in memory: one binary buffer that bufferViews,
// accessors and images point into, and the JSON that describes them
// (https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html). The builder only lays out bytes
// and indices; what the nodes, meshes and materials mean is the caller's (export/scene_export.cpp).
#include <glm/glm.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ibrr::exporter {

class GlbBuilder {
public:
  // glTF's bufferView targets.
  static constexpr int kArrayBuffer = 34962;
  static constexpr int kElementArrayBuffer = 34963;

  GlbBuilder();

  // The JSON document ("asset" is filled); callers add meshes, materials, nodes, ... directly.
  nlohmann::json& json() { return m_json; }

  // Appends bytes at a 4-byte aligned offset as a bufferView (target 0 = none); returns its index.
  int addBufferView(std::span<const std::uint8_t> bytes, int target = 0);

  // Tightly packed vertex attributes and indices, each in a bufferView of its own; returns the
  // accessor's index. Vertex positions carry the exact min and max the format requires.
  int addVec3Accessor(std::span<const glm::vec3> values, bool withBounds);
  int addVec2Accessor(std::span<const glm::vec2> values);
  int addIndexAccessor(std::span<const std::uint32_t> indices);

  // A PNG image stored in the buffer; returns the image's index.
  int addPngImage(std::vector<std::uint8_t> png, const std::string& name);
  // A sampler (GL filter and wrap enums); returns its index.
  int addSampler(int magFilter, int minFilter, int wrap);
  // A texture of an image with a sampler; returns its index.
  int addTexture(int image, int sampler);

  // Appends an element to the named top-level array and returns its index.
  int append(const std::string& array, nlohmann::json element);

  // The .glb: a 12-byte header, the JSON chunk padded with spaces, the BIN chunk padded with zeros.
  [[nodiscard]] std::vector<std::uint8_t> finish() const;

private:
  nlohmann::json m_json;
  std::vector<std::uint8_t> m_binary;
};

// 8-bit RGB rows (top row first, 3 bytes a pixel) encoded as PNG in memory (stb_image_write).
std::vector<std::uint8_t> encodePng(const std::vector<std::uint8_t>& rgb, int width, int height);

}  // namespace ibrr::exporter
