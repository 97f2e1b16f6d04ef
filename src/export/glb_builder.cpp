#include "export/glb_builder.hpp"

#include "util/error.hpp"

#include <stb_image_write.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace ibrr::exporter {
namespace {

constexpr std::uint32_t kGlbMagic = 0x46546C67;      // "glTF"
constexpr std::uint32_t kChunkJson = 0x4E4F534A;     // "JSON"
constexpr std::uint32_t kChunkBinary = 0x004E4942;   // "BIN\0"
constexpr int kFloat = 5126;                         // glTF componentType FLOAT
constexpr int kUnsignedInt = 5125;                   // UNSIGNED_INT

template <typename T>
std::span<const std::uint8_t> bytesOf(std::span<const T> values) {
  return {reinterpret_cast<const std::uint8_t*>(values.data()), values.size_bytes()};
}

void appendWord(std::vector<std::uint8_t>& out, std::uint32_t word) {
  for (int byte = 0; byte < 4; ++byte) out.push_back(std::uint8_t(word >> (8 * byte)));  // little-endian
}

}  // namespace

GlbBuilder::GlbBuilder() {
  m_json["asset"] = {{"version", "2.0"}, {"generator", "ibrr export"}};
}

int GlbBuilder::append(const std::string& array, nlohmann::json element) {
  nlohmann::json& list = m_json[array];
  if (list.is_null()) list = nlohmann::json::array();
  list.push_back(std::move(element));
  return int(list.size()) - 1;
}

int GlbBuilder::addBufferView(std::span<const std::uint8_t> bytes, int target) {
  m_binary.resize((m_binary.size() + 3) / 4 * 4, 0);  // every view starts 4-byte aligned
  const std::size_t offset = m_binary.size();
  if (offset + bytes.size() > std::numeric_limits<std::uint32_t>::max() - 64)
    throw Error("the exported scene passes the 4 GiB a .glb can hold; export a smaller atlas (--atlas-size)");
  m_binary.insert(m_binary.end(), bytes.begin(), bytes.end());
  nlohmann::json view = {{"buffer", 0}, {"byteOffset", offset}, {"byteLength", bytes.size()}};
  if (target != 0) view["target"] = target;
  return append("bufferViews", std::move(view));
}

int GlbBuilder::addVec3Accessor(std::span<const glm::vec3> values, bool withBounds) {
  nlohmann::json accessor = {{"bufferView", addBufferView(bytesOf(values), kArrayBuffer)},
                             {"componentType", kFloat},
                             {"count", values.size()},
                             {"type", "VEC3"}};
  if (withBounds && !values.empty()) {
    glm::vec3 low = values[0], high = values[0];
    for (const glm::vec3& v : values) {
      low = glm::min(low, v);
      high = glm::max(high, v);
    }
    accessor["min"] = {low.x, low.y, low.z};
    accessor["max"] = {high.x, high.y, high.z};
  }
  return append("accessors", std::move(accessor));
}

int GlbBuilder::addVec2Accessor(std::span<const glm::vec2> values) {
  return append("accessors", {{"bufferView", addBufferView(bytesOf(values), kArrayBuffer)},
                              {"componentType", kFloat},
                              {"count", values.size()},
                              {"type", "VEC2"}});
}

int GlbBuilder::addIndexAccessor(std::span<const std::uint32_t> indices) {
  return append("accessors", {{"bufferView", addBufferView(bytesOf(indices), kElementArrayBuffer)},
                              {"componentType", kUnsignedInt},
                              {"count", indices.size()},
                              {"type", "SCALAR"}});
}

int GlbBuilder::addPngImage(std::vector<std::uint8_t> png, const std::string& name) {
  const int view = addBufferView(png);
  return append("images", {{"bufferView", view}, {"mimeType", "image/png"}, {"name", name}});
}

int GlbBuilder::addSampler(int magFilter, int minFilter, int wrap) {
  return append("samplers", {{"magFilter", magFilter}, {"minFilter", minFilter}, {"wrapS", wrap}, {"wrapT", wrap}});
}

int GlbBuilder::addTexture(int image, int sampler) { return append("textures", {{"source", image}, {"sampler", sampler}}); }

std::vector<std::uint8_t> GlbBuilder::finish() const {
  nlohmann::json document = m_json;
  document["buffers"] = nlohmann::json::array({{{"byteLength", m_binary.size()}}});
  std::string text = document.dump();
  text.resize((text.size() + 3) / 4 * 4, ' ');  // the JSON chunk is padded with spaces
  const std::size_t binaryLength = (m_binary.size() + 3) / 4 * 4;
  std::vector<std::uint8_t> out;
  out.reserve(12 + 8 + text.size() + 8 + binaryLength);
  appendWord(out, kGlbMagic);
  appendWord(out, 2);
  appendWord(out, std::uint32_t(12 + 8 + text.size() + 8 + binaryLength));
  appendWord(out, std::uint32_t(text.size()));
  appendWord(out, kChunkJson);
  out.insert(out.end(), text.begin(), text.end());
  appendWord(out, std::uint32_t(binaryLength));
  appendWord(out, kChunkBinary);
  out.insert(out.end(), m_binary.begin(), m_binary.end());
  out.resize(out.size() + (binaryLength - m_binary.size()), 0);
  return out;
}

std::vector<std::uint8_t> encodePng(const std::vector<std::uint8_t>& rgb, int width, int height) {
  std::vector<std::uint8_t> png;
  const auto append = [](void* context, void* data, int size) {
    auto* out = static_cast<std::vector<std::uint8_t>*>(context);
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    out->insert(out->end(), bytes, bytes + size);
  };
  if (!stbi_write_png_to_func(append, &png, width, height, 3, rgb.data(), width * 3) || png.empty())
    throw Error("could not encode a " + std::to_string(width) + "x" + std::to_string(height) + " PNG texture");
  return png;
}

}  // namespace ibrr::exporter
