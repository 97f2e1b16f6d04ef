#include "export/scene_export.hpp"

#include "display/gbuffer.hpp"
#include "export/glb_builder.hpp"
#include "util/error.hpp"
#include "util/html.hpp"

#include <Imath/half.h>
#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace ibrr::exporter {
namespace {

// glTF sampler enums (GL's).
constexpr int kLinear = 9729;
constexpr int kLinearMipmapLinear = 9987;
constexpr int kClampToEdge = 33071;
constexpr int kRepeat = 10497;

// One corner of a primitive; corners equal in every attribute are welded into one vertex.
struct Corner {
  glm::vec3 position;
  glm::vec3 normal;
  glm::vec2 albedoUv;  // TEXCOORD_0, glTF's v (down)
  glm::vec2 atlasUv;   // TEXCOORD_1, normalised
  bool operator==(const Corner& other) const { return std::memcmp(this, &other, sizeof(Corner)) == 0; }
};
struct CornerHash {
  std::size_t operator()(const Corner& corner) const {  // FNV-1a over the bytes
    const auto* bytes = reinterpret_cast<const unsigned char*>(&corner);
    std::uint64_t hash = 1469598103934665603ull;
    for (std::size_t i = 0; i < sizeof(Corner); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
    return std::size_t(hash);
  }
};

struct Primitive {
  std::vector<glm::vec3> positions, normals;
  std::vector<glm::vec2> albedoUvs, atlasUvs;
  std::vector<std::uint32_t> indices;
  std::unordered_map<Corner, std::uint32_t, CornerHash> welded;

  std::uint32_t vertexOf(const Corner& corner) {
    const auto [it, added] = welded.try_emplace(corner, std::uint32_t(positions.size()));
    if (added) {
      positions.push_back(corner.position);
      normals.push_back(corner.normal);
      albedoUvs.push_back(corner.albedoUv);
      atlasUvs.push_back(corner.atlasUv);
    }
    return it->second;
  }
};

// The atlas's triangles grouped by material, corners welded. Triangles whose welded corners coincide
// (zero area) are left out: they cover no pixel.
std::vector<Primitive> primitivesByMaterial(const lightmap::LightmapAtlas& atlas, std::size_t materialCount) {
  static_assert(sizeof(Corner) == 40, "Corner is hashed and compared as bytes: no padding");
  std::vector<Primitive> primitives(materialCount);
  const glm::vec2 atlasScale(1.0f / float(atlas.width), 1.0f / float(atlas.height));
  for (std::size_t triangle = 0; triangle < atlas.triangleCount(); ++triangle) {
    std::uint32_t corners[3];
    Primitive& primitive = primitives.at(atlas.vertices[3 * triangle].material);
    for (int c = 0; c < 3; ++c) {
      const lightmap::LightmapVertex& v = atlas.vertices[3 * triangle + std::size_t(c)];
      // The scene's texcoord v = 0 is the image's bottom row (OBJ), glTF's is the top one. The atlas
      // rows and the light texture's rows are both top-first: its UVs only scale.
      corners[c] = primitive.vertexOf({v.position, v.normal, {v.texcoord.x, 1.0f - v.texcoord.y},
                                       v.lightmapUv * atlasScale});
    }
    if (corners[0] == corners[1] || corners[1] == corners[2] || corners[0] == corners[2]) continue;
    primitive.indices.insert(primitive.indices.end(), corners, corners + 3);
  }
  return primitives;
}

std::uint8_t srgbByte(float linear) { return toneMapChannel(linear, ToneMapping{}); }

// An image of linear values as an 8-bit PNG through `encode` (one channel at a time).
template <typename Encode>
std::vector<std::uint8_t> pngOf(const std::vector<glm::vec3>& texels, int width, int height, Encode encode) {
  std::vector<std::uint8_t> rgb(texels.size() * 3);
  for (std::size_t t = 0; t < texels.size(); ++t)
    for (int c = 0; c < 3; ++c) rgb[3 * t + std::size_t(c)] = encode(texels[t][c]);
  return encodePng(rgb, width, height);
}

// The scene's albedo textures (sRGB PNGs of their linear texels), by scene texture index.
std::vector<int> addAlbedoTextures(GlbBuilder& glb, const scene::Scene& scene) {
  std::vector<int> textures;
  const int sampler = glb.addSampler(kLinear, kLinearMipmapLinear, kRepeat);
  for (const scene::Texture& texture : scene.textures) {
    const int image = glb.addPngImage(pngOf(texture.texels, texture.width, texture.height, srgbByte),
                                      std::filesystem::path(texture.path).filename().string());
    textures.push_back(glb.addTexture(image, sampler));
  }
  return textures;
}

// H as RGBA half floats (alpha 1), row 0 first: the layout of a GL RGBA16F texture.
std::vector<std::uint8_t> halfFloatTexels(const std::vector<glm::vec3>& texels) {
  std::vector<std::uint8_t> bytes(texels.size() * 8);
  for (std::size_t t = 0; t < texels.size(); ++t) {
    // Clamped to the largest half (65504) so that no texel turns infinite.
    const glm::vec3 h = glm::min(texels[t], glm::vec3(float(HALF_MAX)));
    const Imath::half rgba[4] = {Imath::half(h.r), Imath::half(h.g), Imath::half(h.b), Imath::half(1.0f)};
    for (int c = 0; c < 4; ++c) {
      const std::uint16_t bits = rgba[c].bits();
      bytes[8 * t + 2 * std::size_t(c)] = std::uint8_t(bits & 0xff);  // little-endian
      bytes[8 * t + 2 * std::size_t(c) + 1] = std::uint8_t(bits >> 8);
    }
  }
  return bytes;
}

nlohmann::json vec3Json(const glm::vec3& v) { return {v.x, v.y, v.z}; }

void addMaterials(GlbBuilder& glb, const scene::Scene& scene, int lightTexture, const std::vector<int>& albedoTextures) {
  for (const scene::Material& material : scene.materials) {
    glb.append("materials",
               {{"name", material.name},
                {"pbrMetallicRoughness",
                 {{"baseColorTexture", {{"index", lightTexture}, {"texCoord", 1}}},
                  {"metallicFactor", 0.0},
                  {"roughnessFactor", 1.0}}},
                {"doubleSided", true},
                {"extensions", {{"KHR_materials_unlit", nlohmann::json::object()}}},
                {"extras",
                 {{"ibrr",
                   {{"albedo", vec3Json(material.albedo)},
                    {"emission", vec3Json(material.emission)},
                    {"albedoTexture", material.albedoTexture < 0 ? -1 : albedoTextures.at(std::size_t(
                                                                             material.albedoTexture))}}}}}});
  }
  glb.json()["extensionsUsed"] = {"KHR_materials_unlit"};
}

// One node of every material's triangles; returns the node's index.
int addMeshNode(GlbBuilder& glb, const scene::Scene& scene, const lightmap::LightmapAtlas& atlas) {
  nlohmann::json primitives = nlohmann::json::array();
  std::vector<Primitive> byMaterial = primitivesByMaterial(atlas, scene.materials.size());
  for (std::size_t material = 0; material < byMaterial.size(); ++material) {
    Primitive& primitive = byMaterial[material];
    if (primitive.indices.empty()) continue;
    primitive.welded = {};
    // glTF numbers TEXCOORD_n from 0 without gaps: a material without an albedo texture, which reads no
    // TEXCOORD_0, gets the atlas UVs' accessor there too (8 bytes a vertex fewer).
    const int atlasUvs = glb.addVec2Accessor(primitive.atlasUvs);
    const bool textured = scene.materials[material].albedoTexture >= 0;
    const nlohmann::json attributes = {{"POSITION", glb.addVec3Accessor(primitive.positions, true)},
                                       {"NORMAL", glb.addVec3Accessor(primitive.normals, false)},
                                       {"TEXCOORD_0", textured ? glb.addVec2Accessor(primitive.albedoUvs) : atlasUvs},
                                       {"TEXCOORD_1", atlasUvs}};
    primitives.push_back(
        {{"attributes", attributes}, {"indices", glb.addIndexAccessor(primitive.indices)}, {"material", material}});
  }
  if (primitives.empty()) throw Error("the scene has no triangle of nonzero area to export");
  const std::string name = scene.sourcePath.empty() ? "scene" : scene.sourcePath.stem().string();
  const int mesh = glb.append("meshes", {{"name", name}, {"primitives", primitives}});
  return glb.append("nodes", {{"name", name}, {"mesh", mesh}});
}

// The manifest's cameras: glTF cameras look down their node's −Z with +Y up; returns their nodes.
std::vector<int> addCameras(GlbBuilder& glb, const scene::Scene& scene) {
  std::vector<int> nodes;
  const float aspect = float(scene.defaultImageSize.width) / float(scene.defaultImageSize.height);
  for (const scene::Camera& camera : scene.cameras) {
    const glm::vec3 forward = glm::normalize(camera.target - camera.eye);
    const glm::vec3 right = glm::normalize(glm::cross(forward, camera.up));
    const glm::vec3 up = glm::cross(right, forward);
    const glm::quat rotation = glm::normalize(glm::quat_cast(glm::mat3(right, up, -forward)));
    const display::DepthRange range = display::depthRangeFor(scene, camera);
    const int index = glb.append("cameras", {{"name", camera.name},
                                             {"type", "perspective"},
                                             {"perspective",
                                              {{"yfov", glm::radians(camera.verticalFovDegrees)},
                                               {"aspectRatio", aspect},
                                               {"znear", range.nearPlane},
                                               {"zfar", range.farPlane}}}});
    nodes.push_back(glb.append("nodes", {{"name", camera.name},
                                         {"camera", index},
                                         {"translation", vec3Json(camera.eye)},
                                         {"rotation", {rotation.x, rotation.y, rotation.z, rotation.w}}}));
  }
  return nodes;
}

std::string base64(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t word = std::uint32_t(bytes[i]) << 16 |
                               (i + 1 < bytes.size() ? std::uint32_t(bytes[i + 1]) << 8 : 0u) |
                               (i + 2 < bytes.size() ? std::uint32_t(bytes[i + 2]) : 0u);
    out += kAlphabet[(word >> 18) & 63];
    out += kAlphabet[(word >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(word >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[word & 63] : '=';
  }
  return out;
}

std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read the walkthrough page's file; run ./ibrr.sh build");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Text placed inside a <script> element must not close it: HTML ends the element at "</script" in any case, so
// each becomes "<\\/script", the same text in a JavaScript string, regular expression or JSON.
std::string scriptSafe(std::string text) {
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 1)) {
    std::string word = text.substr(at + 2, 6);
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (word == "script") text.insert(at + 1, 1, '\\');
  }
  return text;
}

// Replaces `token`, searched from `from` on (the template holds the tokens in the order they are filled, so no
// value already put in, such as a title, is searched); returns where the value ends.
std::size_t replaceToken(std::string& page, std::size_t from, const std::string& token, const std::string& value) {
  const std::size_t at = page.find(token, from);
  if (at == std::string::npos)
    throw Error((webDirectory() / "page.html").string() + ": the template lacks " + token + " after the tokens "
                "before it; rebuild (./ibrr.sh build)");
  page.replace(at, token.size(), value);
  return at + value.size();
}

}  // namespace

std::vector<std::uint8_t> buildGlb(const scene::Scene& scene, const lightmap::LightmapAtlas& atlas,
                                   const BakedLight& light, const ExportDescription& description) {
  GlbBuilder glb;
  const int meshNode = addMeshNode(glb, scene, atlas);
  const std::vector<int> cameraNodes = addCameras(glb, scene);
  const std::vector<int> albedoTextures = addAlbedoTextures(glb, scene);
  const ToneMapping tone = description.tone;
  const int lightImage = glb.addPngImage(
      pngOf(light.radiance, light.width, light.height, [&](float value) { return toneMapChannel(value, tone); }),
      "light");
  const int lightTexture = glb.addTexture(lightImage, glb.addSampler(kLinear, kLinear, kClampToEdge));
  addMaterials(glb, scene, lightTexture, albedoTextures);
  const int incidentView = glb.addBufferView(halfFloatTexels(light.incident));

  nlohmann::json sceneNodes = {meshNode};
  for (const int node : cameraNodes) sceneNodes.push_back(node);
  glb.json()["scenes"] = nlohmann::json::array({{{"nodes", sceneNodes}}});
  glb.json()["scene"] = 0;
  glb.json()["extras"] = {
      {"ibrr",
       {{"version", 1},
        {"source", description.source},
        {"method", description.method},
        {"incidentRadiance",
         {{"bufferView", incidentView}, {"width", light.width}, {"height", light.height}, {"format", "rgba16f"}}},
        {"exposureStops", tone.exposureStops},
        {"tone", tone.curve == ToneCurve::Filmic ? "filmic" : "srgb"},
        {"bounds", {{"min", vec3Json(scene.bounds().min)}, {"max", vec3Json(scene.bounds().max)}}}}}};
  return glb.finish();
}

std::filesystem::path webDirectory() {
  if (const char* override = std::getenv("IBRR_WEB_DIR"); override && *override) return override;
  return IBRR_WEB_DIR;
}

void checkWebFiles() {
  for (const char* name : {"page.html", "walkthrough.js"}) {
    const std::filesystem::path path = webDirectory() / name;
    if (!std::filesystem::is_regular_file(path))
      throw Error(path.string() +
                  " is missing: the walkthrough page is built with three.js from npm; run ./ibrr.sh build "
                  "(it installs web/package-lock.json's packages and bundles the page)");
  }
}

std::string buildPage(const std::string& title, const std::vector<std::uint8_t>& glb,
                      const ExportDescription& description) {
  checkWebFiles();
  std::string page = readText(webDirectory() / "page.html");
  const nlohmann::json config = {{"title", title}, {"source", description.source}, {"method", description.method}};
  std::size_t at = replaceToken(page, 0, "@IBRR_TITLE@", htmlEscape(title));
  at = replaceToken(page, at, "@IBRR_CONFIG@", scriptSafe(config.dump()));
  at = replaceToken(page, at, "@IBRR_GLB_BASE64@", base64(glb));
  replaceToken(page, at, "@IBRR_SCRIPT@", scriptSafe(readText(webDirectory() / "walkthrough.js")));
  return page;
}

std::string pageTitle(const scene::Scene& scene, const std::string& method) {
  const std::string name = scene.sourcePath.empty() ? "scene" : scene.sourcePath.stem().string();
  return name + " \u2014 " + method + " (ibrr export)";
}

std::string storePage(const scene::Scene& scene, const LayeredDepthCube& store, const std::string& method) {
  lightmap::AtlasOptions atlasOptions;
  atlasOptions.targetSize = kDefaultAtlasSize;
  const AtlasLight baked = storeLightOnAtlas(scene, store, atlasOptions, RetrievalFilter::Bilinear);
  const ExportDescription description{"store", method, {}};
  return buildPage(pageTitle(scene, method), buildGlb(scene, baked.atlas, baked.light, description), description);
}

std::string lightmapPage(const scene::Scene& scene, const lightmap::Lightmap& lightmap,
                         const lightmap::LightmapAtlas& atlas, const lightmap::PatchList& patches) {
  const ExportDescription description{"lightmap", lightmap.method, {}};
  const BakedLight light = lightFromLightmap(lightmap, atlas, patches);
  return buildPage(pageTitle(scene, lightmap.method), buildGlb(scene, atlas, light, description), description);
}

}  // namespace ibrr::exporter
