#include "scene/load.hpp"

#include "scene/manifest_reader.hpp"
#include "scene/mesh_import.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#ifndef IBRR_SCENE_DIR
#define IBRR_SCENE_DIR "scenes"
#endif

namespace ibrr::scene {
namespace {

namespace fs = std::filesystem;

// transform: {"translate": [x,y,z], "rotate": {"axis": [x,y,z], "degrees": a} or a list of them
// (applied in order), "scale": s or [sx,sy,sz]}. Applied as M = T·R·S.
glm::mat4 readTransform(ManifestObject transform) {
  glm::mat4 scale(1.0f), rotation(1.0f), translation(1.0f);
  if (transform.has("scale")) {
    const nlohmann::json& value = transform.get("scale");
    glm::vec3 factors(1.0f);
    if (value.is_number()) {
      factors = glm::vec3(value.get<float>());
    } else {
      factors = transform.getVec3("scale");
    }
    if (!(std::isfinite(factors.x) && std::isfinite(factors.y) && std::isfinite(factors.z)) || factors.x == 0.0f ||
        factors.y == 0.0f || factors.z == 0.0f)
      transform.fail("scale", "expected a non-zero number or an array of 3 non-zero numbers");
    scale = glm::scale(glm::mat4(1.0f), factors);
  }
  if (transform.has("rotate")) {
    const nlohmann::json& value = transform.get("rotate");
    const nlohmann::json steps = value.is_array() ? value : nlohmann::json::array({value});
    for (std::size_t i = 0; i < steps.size(); ++i) {
      ManifestObject step(steps[i], transform.file(),
                          transform.keyPath("rotate") + (value.is_array() ? "[" + std::to_string(i) + "]" : ""));
      const glm::vec3 axis = step.getVec3("axis");
      const float degrees = step.getNumber("degrees");
      step.rejectUnknownKeys();
      if (glm::length(axis) == 0.0f) transform.fail("rotate", "the rotation axis must not be zero");
      rotation = glm::rotate(glm::mat4(1.0f), glm::radians(degrees), glm::normalize(axis)) * rotation;
    }
  }
  if (transform.has("translate")) translation = glm::translate(glm::mat4(1.0f), transform.getVec3("translate"));
  transform.rejectUnknownKeys();
  return translation * rotation * scale;
}

// materials: {"<material name>" or "*": {"albedo": [r,g,b], "emission": [r,g,b]}}
void applyMaterialOverrides(ManifestObject overrides, const nlohmann::json& raw, Scene& scene,
                            std::uint32_t firstMaterial, std::uint32_t endMaterial) {
  for (const auto& [name, unused] : raw.items()) {
    ManifestObject values = overrides.getObject(name);
    std::vector<std::uint32_t> targets;
    for (std::uint32_t m = firstMaterial; m < endMaterial; ++m)
      if (name == "*" || scene.materials[m].name == name) targets.push_back(m);
    if (targets.empty()) {
      std::string known;
      for (std::uint32_t m = firstMaterial; m < endMaterial; ++m)
        known += (known.empty() ? "" : ", ") + scene.materials[m].name;
      overrides.fail(name, "the mesh has no material of that name (its materials: " + known + "; \"*\" means all)");
    }
    std::optional<glm::vec3> albedo, emission;
    if (values.has("albedo")) albedo = values.getVec3("albedo");
    if (values.has("emission")) emission = values.getVec3("emission");
    values.rejectUnknownKeys();
    if (albedo &&
        (glm::any(glm::lessThan(*albedo, glm::vec3(0.0f))) || glm::any(glm::greaterThan(*albedo, glm::vec3(1.0f)))))
      values.fail("albedo", "albedo must lie in [0, 1] (a reflectance)");
    if (emission && glm::any(glm::lessThan(*emission, glm::vec3(0.0f))))
      values.fail("emission", "emission must not be negative");
    for (std::uint32_t m : targets) {
      if (albedo) {
        scene.materials[m].albedo = *albedo;
        scene.materials[m].albedoTexture = -1;
      }
      if (emission) scene.materials[m].emission = *emission;
    }
  }
}

void readMesh(ManifestObject entry, const fs::path& folder, Scene& scene) {
  const std::string relative = entry.getString("path");
  const fs::path meshPath = fs::path(relative).is_absolute() ? fs::path(relative) : folder / relative;
  const auto firstMaterial = std::uint32_t(scene.materials.size());
  std::uint32_t meshIndex = 0;
  try {
    meshIndex = importMeshFile(meshPath, scene);
  } catch (const Error& error) {
    throw Error(entry.file() + ": key '" + entry.keyPath("path") + "': " + error.what());
  }
  if (entry.has("name")) scene.meshes[meshIndex].name = entry.getString("name");
  const glm::mat4 transform = entry.has("transform") ? readTransform(entry.getObject("transform")) : glm::mat4(1.0f);
  if (entry.has("materials")) {
    const nlohmann::json& raw = entry.get("materials");
    applyMaterialOverrides(entry.getObject("materials"), raw, scene, firstMaterial,
                           std::uint32_t(scene.materials.size()));
  }
  entry.rejectUnknownKeys();
  scene.instances.push_back(MeshInstance{meshIndex, transform});
}

// A light's intensity or radiance: no channel negative, one above zero (a light that gives nothing is a typo,
// and the light paths need a power to sample by). getVec3 already bounds it (±kMaxCoordinate).
void requireEmitting(ManifestObject& light, const std::string& key, const glm::vec3& value) {
  if (glm::any(glm::lessThan(value, glm::vec3(0.0f))) || !glm::any(glm::greaterThan(value, glm::vec3(0.0f))))
    light.fail(key, "must be ≥ 0 in every channel and above 0 in at least one");
}

// A rectangular area light becomes an emissive two-triangle mesh, so every method sees it as
// geometry: corner, corner+edge1, corner+edge1+edge2, corner+edge2; it emits towards
// edge1 × edge2.
void readQuadLight(ManifestObject light, Scene& scene) {
  const std::string name = light.getString("name", std::string("quad light"));
  const glm::vec3 corner = light.getVec3("corner");
  const glm::vec3 edge1 = light.getVec3("edge1");
  const glm::vec3 edge2 = light.getVec3("edge2");
  const glm::vec3 radiance = light.getVec3("radiance");
  const glm::vec3 albedo = light.getVec3("albedo", glm::vec3(0.0f));
  light.rejectUnknownKeys({"type"});
  const float twiceArea = glm::length(glm::cross(edge1, edge2));
  if (!(twiceArea > 0.0f) || !std::isfinite(twiceArea))
    light.fail("edge2", "the quad's edges must not be parallel or zero");
  requireEmitting(light, "radiance", radiance);
  Material material;
  material.name = name;
  material.albedo = albedo;
  material.emission = radiance;
  scene.materials.push_back(material);
  TriangleMesh mesh;
  mesh.name = name;
  mesh.positions = {corner, corner + edge1, corner + edge1 + edge2, corner + edge2};
  mesh.normals.assign(4, glm::normalize(glm::cross(edge1, edge2)));
  mesh.triangles = {{0, 1, 2}, {0, 2, 3}};
  mesh.triangleMaterials.assign(2, std::uint32_t(scene.materials.size() - 1));
  scene.meshes.push_back(std::move(mesh));
  scene.instances.push_back(MeshInstance{std::uint32_t(scene.meshes.size() - 1), glm::mat4(1.0f)});
}

void readLight(ManifestObject light, Scene& scene) {
  const std::string type = light.getString("type");
  if (type == "quad") {
    readQuadLight(std::move(light), scene);
  } else if (type == "point") {
    PointLight point;
    point.name = light.getString("name", std::string("point light"));
    point.position = light.getVec3("position");
    point.intensity = light.getVec3("intensity");
    requireEmitting(light, "intensity", point.intensity);
    light.rejectUnknownKeys();
    scene.pointLights.push_back(point);
  } else if (type == "spot") {
    SpotLight spot;
    spot.name = light.getString("name", std::string("spot light"));
    spot.position = light.getVec3("position");
    const glm::vec3 direction =
        light.has("target") ? light.getVec3("target") - spot.position : light.getVec3("direction");
    if (!(glm::length(direction) > 0.0f)) light.fail("direction", "must not be zero");
    spot.direction = glm::normalize(direction);
    spot.intensity = light.getVec3("intensity");
    requireEmitting(light, "intensity", spot.intensity);
    // Angles are half-angles of the cone in degrees.
    const float outer = light.getNumber("angle", 30.0f);
    const float inner = light.getNumber("inner_angle", 0.8f * outer);
    if (!(outer > 0.0f && outer <= 90.0f)) light.fail("angle", "the cone half-angle must be in (0, 90] degrees");
    if (!(inner >= 0.0f && inner <= outer)) light.fail("inner_angle", "must be in [0, angle]");
    spot.cosOuter = std::cos(glm::radians(outer));
    spot.cosInner = std::cos(glm::radians(inner));
    light.rejectUnknownKeys();
    scene.spotLights.push_back(spot);
  } else {
    light.fail("type", "unknown light type '" + type + "' (use quad, point or spot)");
  }
}

void readCamera(ManifestObject entry, Scene& scene) {
  Camera camera;
  camera.name = entry.getString("name", "camera" + std::to_string(scene.cameras.size()));
  camera.eye = entry.getVec3("eye");
  camera.target = entry.has("direction") ? camera.eye + entry.getVec3("direction") : entry.getVec3("target");
  camera.up = entry.getVec3("up", glm::vec3(0.0f, 1.0f, 0.0f));
  camera.verticalFovDegrees = entry.getNumber("fov", 45.0f);
  entry.rejectUnknownKeys();
  if (!(camera.verticalFovDegrees > 0.0f && camera.verticalFovDegrees < 180.0f))
    entry.fail("fov", "the vertical field of view must be in (0, 180) degrees");
  if (!(glm::length(glm::cross(camera.target - camera.eye, camera.up)) > 0.0f))
    entry.fail("up", "the view direction must not be zero or parallel to up");
  scene.cameras.push_back(camera);
}

template <class ReadEntry>
void readArray(ManifestObject& top, const std::string& key, ReadEntry readEntry) {
  const nlohmann::json& array = top.get(key);
  if (!array.is_array()) top.fail(key, "expected an array");
  for (std::size_t i = 0; i < array.size(); ++i)
    readEntry(ManifestObject(array[i], top.file(), key + "[" + std::to_string(i) + "]"));
}

Scene loadManifest(const fs::path& path) {
  const nlohmann::json root = parseManifestFile(path.string());
  ManifestObject top(root, path.string(), "");
  Scene scene;
  scene.sourcePath = path;
  const fs::path folder = path.parent_path();
  (void)top.getString("description", std::string());
  (void)top.getString("units", std::string());
  readArray(top, "meshes", [&](ManifestObject entry) { readMesh(std::move(entry), folder, scene); });
  if (top.has("lights")) readArray(top, "lights", [&](ManifestObject entry) { readLight(std::move(entry), scene); });
  if (top.has("cameras")) readArray(top, "cameras", [&](ManifestObject entry) { readCamera(std::move(entry), scene); });
  if (top.has("image")) {
    ManifestObject image = top.getObject("image");
    scene.defaultImageSize.width = image.getInteger("width", 512);
    scene.defaultImageSize.height = image.getInteger("height", 512);
    image.rejectUnknownKeys();
    if (scene.defaultImageSize.width < 1 || scene.defaultImageSize.height < 1 || scene.defaultImageSize.width > 16384 ||
        scene.defaultImageSize.height > 16384)
      top.fail("image", "width and height must be in [1, 16384]");
  }
  top.rejectUnknownKeys();
  if (scene.meshes.empty()) top.fail("meshes", "the scene needs at least one mesh");
  scene.finalize();
  return scene;
}

std::string lowercaseExtension(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return extension;
}

}  // namespace

Scene loadScene(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(path.string() +
                ": scene file not found (give a .json manifest, a mesh file, or a built-in name: cornell, furnace)");
  if (fs::is_directory(path, ec)) throw Error(path.string() + ": is a folder; give a .json manifest or a mesh file");
  if (lowercaseExtension(path) == ".json") return loadManifest(path);
  Scene scene;
  scene.sourcePath = path;
  const std::uint32_t mesh = importMeshFile(path, scene);
  scene.instances.push_back(MeshInstance{mesh, glm::mat4(1.0f)});
  scene.finalize();
  return scene;
}

fs::path builtinSceneFolder() {
  if (const char* overridden = std::getenv("IBRR_SCENE_DIR")) return overridden;
  return IBRR_SCENE_DIR;
}

fs::path resolveScenePath(const std::string& argument) {
  std::error_code ec;
  const fs::path given(argument);
  if (fs::exists(given, ec) || given.has_parent_path() || given.has_extension()) return given;
  const fs::path builtin = builtinSceneFolder() / (argument + ".json");
  if (fs::exists(builtin, ec)) return builtin;
  return given;  // loadScene reports it as missing
}

}  // namespace ibrr::scene
