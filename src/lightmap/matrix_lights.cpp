// The form-factor matrix's lights and their moves (lightmap/matrix.hpp): the movable lights of a scene,
// `--move-light` parsing, and the scene and atlas with lights translated.
#include "lightmap/matrix.hpp"

#include "util/error.hpp"

#include <algorithm>
#include <string>

namespace ibrr::lightmap {

std::vector<MatrixLight> matrixLights(const scene::Scene& scene) {
  std::vector<MatrixLight> lights;
  std::vector<std::pair<std::uint64_t, std::size_t>> keys;  // (instance, material) → light
  const std::vector<scene::EmissiveTriangle>& emitters = scene.emitters();
  for (std::size_t e = 0; e < emitters.size(); ++e) {
    const scene::EmissiveTriangle& t = emitters[e];
    const std::uint32_t material = scene.meshes[scene.instances[t.instance].mesh].triangleMaterials[t.triangle];
    const std::uint64_t key = (std::uint64_t(t.instance) << 32) | material;
    auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first == key; });
    if (it == keys.end()) {
      keys.emplace_back(key, lights.size());
      MatrixLight light;
      light.name = scene.materials[material].name + " (instance " + std::to_string(t.instance) + ")";
      light.kind = MatrixLight::Kind::Surface;
      lights.push_back(std::move(light));
      it = keys.end() - 1;
    }
    lights[it->second].emitters.push_back(std::uint32_t(e));
  }
  for (std::size_t p = 0; p < scene.pointLights.size(); ++p) {
    MatrixLight light;
    light.name = scene.pointLights[p].name;
    light.kind = MatrixLight::Kind::Point;
    light.index = std::uint32_t(p);
    lights.push_back(std::move(light));
  }
  for (std::size_t p = 0; p < scene.spotLights.size(); ++p) {
    MatrixLight light;
    light.name = scene.spotLights[p].name;
    light.kind = MatrixLight::Kind::Spot;
    light.index = std::uint32_t(p);
    lights.push_back(std::move(light));
  }
  return lights;
}

std::string describeMatrixLights(std::span<const MatrixLight> lights) {
  if (lights.empty()) return "none";
  std::string text;
  for (std::size_t l = 0; l < lights.size(); ++l)
    text += (l ? ", " : "") + std::to_string(l) + ": " + lights[l].name;
  return text;
}

std::vector<glm::vec3> parseLightMoves(std::span<const std::string> moves, std::span<const MatrixLight> lights) {
  if (moves.empty()) return {};
  std::vector<glm::vec3> offsets(lights.size(), glm::vec3(0.0f));
  std::vector<bool> moved(lights.size(), false);
  for (const std::string& move : moves) {
    const std::string usage = "--move-light '" + move + "': give LIGHT:DX,DY,DZ, the light's index and its "
                              "translation in scene units (e.g. 0:50,0,0)";
    const std::size_t colon = move.find(':');
    if (colon == std::string::npos || colon == 0) throw Error(usage);
    std::size_t end = 0;
    long index = -1;
    try {
      index = std::stol(move.substr(0, colon), &end);
    } catch (const std::exception&) {
      throw Error(usage);
    }
    if (end != colon) throw Error(usage);
    glm::vec3 offset(0.0f);
    std::size_t at = colon + 1;
    for (int c = 0; c < 3; ++c) {
      const std::size_t stop = c < 2 ? move.find(',', at) : move.size();
      if (stop == std::string::npos || stop == at) throw Error(usage);
      try {
        offset[c] = std::stof(move.substr(at, stop - at), &end);
      } catch (const std::exception&) {
        throw Error(usage);
      }
      if (end != stop - at || !std::isfinite(offset[c])) throw Error(usage);
      at = stop + 1;
    }
    if (index < 0 || std::size_t(index) >= lights.size())
      throw Error("--move-light " + move + ": no light " + std::to_string(index) + "; the scene's movable lights are " +
                  describeMatrixLights(lights));
    if (moved[std::size_t(index)]) throw Error("--move-light " + move + ": light " + std::to_string(index) +
                                               " is moved twice; give one --move-light per light");
    moved[std::size_t(index)] = true;
    offsets[std::size_t(index)] = offset;
  }
  return offsets;
}

scene::Scene translateLights(const scene::Scene& scene, std::span<const glm::vec3> offsets) {
  const std::vector<MatrixLight> lights = matrixLights(scene);
  if (!offsets.empty() && offsets.size() != lights.size())
    throw Error("translateLights: " + std::to_string(offsets.size()) + " offsets for " + std::to_string(lights.size()) +
                " lights");
  scene::Scene moved = scene;
  for (std::size_t l = 0; l < offsets.size(); ++l) {
    const glm::vec3 offset = offsets[l];
    if (offset == glm::vec3(0.0f)) continue;
    const MatrixLight& light = lights[l];
    if (light.kind == MatrixLight::Kind::Point) {
      moved.pointLights[light.index].position += offset;
      continue;
    }
    if (light.kind == MatrixLight::Kind::Spot) {
      moved.spotLights[light.index].position += offset;
      continue;
    }
    for (const std::uint32_t e : light.emitters) {
      const scene::EmissiveTriangle& emitter = scene.emitters()[e];
      const std::uint32_t instance = emitter.instance;
      const std::uint32_t shared = moved.instances[instance].mesh;
      const bool sharedWithOthers = std::any_of(moved.instances.begin(), moved.instances.end(), [&](const auto& other) {
        return &other != &moved.instances[instance] && other.mesh == shared;
      });
      if (sharedWithOthers) {  // this instance gets its own copy, so the others stay
        moved.meshes.push_back(moved.meshes[shared]);
        moved.instances[instance].mesh = std::uint32_t(moved.meshes.size() - 1);
      }
      // The world translation in the instance's object space (affine: only the linear part acts).
      const glm::vec3 local = glm::inverse(glm::mat3(moved.instances[instance].objectToWorld)) * offset;
      scene::TriangleMesh& mesh = moved.meshes[moved.instances[instance].mesh];
      glm::uvec3& corners = mesh.triangles[emitter.triangle];
      for (int c = 0; c < 3; ++c) {
        const std::uint32_t v = corners[c];
        mesh.positions.push_back(mesh.positions[v] + local);
        if (!mesh.normals.empty()) mesh.normals.push_back(mesh.normals[v]);
        if (!mesh.texcoords.empty()) mesh.texcoords.push_back(mesh.texcoords[v]);
        corners[c] = std::uint32_t(mesh.positions.size() - 1);
      }
    }
  }
  moved.finalize();
  return moved;
}

LightmapAtlas translateAtlasLights(const scene::Scene& scene, const LightmapAtlas& atlas,
                                   std::span<const glm::vec3> offsets) {
  const std::vector<MatrixLight> lights = matrixLights(scene);
  if (!offsets.empty() && offsets.size() != lights.size())
    throw Error("translateAtlasLights: " + std::to_string(offsets.size()) + " offsets for " +
                std::to_string(lights.size()) + " lights");
  if (atlas.triangleCount() != scene.triangleCount())
    throw Error("translateAtlasLights: the atlas has " + std::to_string(atlas.triangleCount()) +
                " triangles, the scene " + std::to_string(scene.triangleCount()));
  // The atlas's first triangle of each instance (buildAtlas: instance-major, mesh order).
  std::vector<std::size_t> firstTriangle(scene.instances.size(), 0);
  for (std::size_t i = 1; i < scene.instances.size(); ++i)
    firstTriangle[i] = firstTriangle[i - 1] + scene.meshes[scene.instances[i - 1].mesh].triangles.size();
  LightmapAtlas moved = atlas;
  for (std::size_t l = 0; l < offsets.size(); ++l) {
    if (lights[l].kind != MatrixLight::Kind::Surface) continue;  // point and spot lights have no triangles
    for (const std::uint32_t e : lights[l].emitters) {
      const scene::EmissiveTriangle& emitter = scene.emitters()[e];
      const std::size_t t = firstTriangle[emitter.instance] + emitter.triangle;
      for (int k = 0; k < 3; ++k) moved.vertices[3 * t + std::size_t(k)].position += offsets[l];
    }
  }
  return moved;
}


}  // namespace ibrr::lightmap
