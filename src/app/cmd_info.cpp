// `ibrr info SCENE`: what a scene holds (triangles, meshes, materials, emitters with area and
// power, bounds, cameras); `ibrr info STORE.ibrr`: what a baked store holds (R, layers, VPLs, bytes).
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "ibrr/store_file.hpp"

#include <cstdio>

namespace ibrr::app {
namespace {

struct InfoOptions {
  std::string scene;
};

void printVec3(const char* label, const glm::vec3& v) { std::printf("%s(%g, %g, %g)", label, v.x, v.y, v.z); }

// A store file: its layout and size, checked as `ibrr render --store` checks it (but for no scene).
void printStoreInfo(const std::filesystem::path& path) {
  const LayeredDepthCube store = bake::readStoreFile(path);
  const StoreStats stats = store.stats();
  const LdcParams& params = store.params();
  std::printf("store      %s\n", path.string().c_str());
  std::printf("VPLs       %llu hemicubes accumulated\n", static_cast<unsigned long long>(store.vplCount()));
  std::printf("LDC        R = %d, pixel %g, eps_d %g, eps_n %g\n", store.frame().resolution(),
              store.frame().pixelSize(), params.epsDistance, params.epsNormal);
  printVec3("bounds     ", params.bounds.lo);
  printVec3(" to ", params.bounds.hi);
  std::printf("\n");
  std::printf("layers     %llu, %.2f per occupied pixel (at most %u), %llu of %llu pixels occupied\n",
              static_cast<unsigned long long>(stats.layerCount), stats.layersPerOccupiedPixel, stats.maxLayersPerPixel,
              static_cast<unsigned long long>(stats.occupiedPixels), static_cast<unsigned long long>(stats.pixelCount));
  if (store.biasCompensationRays() > 0)
    std::printf("bias       compensated: %u rays per layer, %u pass%s\n", store.biasCompensationRays(),
                store.biasCompensationPasses(), store.biasCompensationPasses() == 1 ? "" : "es");
  else
    std::printf("bias       clamped, not compensated\n");
  std::printf("size       %.2f MiB (%.1f bytes per layer with the offsets)\n",
              double(stats.totalBytes) / (1024.0 * 1024.0), stats.bytesPerLayerAll);
  std::printf("fingerprint %016llx (the scene it was baked for)\n",
              static_cast<unsigned long long>(params.sceneFingerprint));
}

void runInfo(const InfoOptions& options) {
  if (std::filesystem::path(options.scene).extension() == ".ibrr") return printStoreInfo(options.scene);
  const scene::Scene scene = loadSceneArgument(options.scene);
  std::printf("scene      %s\n", scene.sourcePath.string().c_str());
  std::printf("triangles  %zu in %zu mesh%s (%zu instance%s)\n", scene.triangleCount(), scene.meshes.size(),
              scene.meshes.size() == 1 ? "" : "es", scene.instances.size(), scene.instances.size() == 1 ? "" : "s");
  for (const scene::MeshInstance& instance : scene.instances)
    std::printf("  mesh     %s: %zu triangles\n", scene.meshes[instance.mesh].name.c_str(),
                scene.meshes[instance.mesh].triangles.size());
  std::printf("materials  %zu\n", scene.materials.size());
  for (const scene::Material& material : scene.materials) {
    std::printf("  %-20s ", material.name.c_str());
    printVec3("albedo ", material.albedo);
    if (material.albedoTexture >= 0) std::printf(" × texture %s", scene.textures[material.albedoTexture].path.c_str());
    if (material.isEmissive()) printVec3("  emission ", material.emission);
    std::printf("\n");
  }
  // Emitters grouped by material: area and power Φ = π·L·A.
  float emitterArea = 0.0f;
  for (const scene::EmissiveTriangle& emitter : scene.emitters()) emitterArea += emitter.area;
  std::printf("emitters   %zu emissive triangles, area %g (scene units²)\n", scene.emitters().size(), emitterArea);
  for (const scene::PointLight& light : scene.pointLights) {
    std::printf("  point    %s at ", light.name.c_str());
    printVec3("", light.position);
    printVec3(", intensity ", light.intensity);
    std::printf("\n");
  }
  for (const scene::SpotLight& light : scene.spotLights) {
    std::printf("  spot     %s at ", light.name.c_str());
    printVec3("", light.position);
    printVec3(", direction ", light.direction);
    printVec3(", intensity ", light.intensity);
    std::printf("\n");
  }
  printVec3("power      ", scene.emittedPower());
  std::printf(" (W in scene units: π·L·A for emitters, 4π·I for point lights)\n");
  if (!scene.hasLights()) std::printf("           no emitters or lights: radiosity methods need at least one\n");
  printVec3("bounds     ", scene.bounds().min);
  printVec3(" to ", scene.bounds().max);
  std::printf(", diagonal %g\n", scene.bounds().diagonal());
  std::printf("cameras    %zu\n", scene.cameras.size());
  for (const scene::Camera& camera : scene.cameras) {
    std::printf("  %-10s eye ", camera.name.c_str());
    printVec3("", camera.eye);
    printVec3(" target ", camera.target);
    std::printf(" fov %g°\n", camera.verticalFovDegrees);
  }
  std::printf("image      %dx%d (default)\n", scene.defaultImageSize.width, scene.defaultImageSize.height);
  std::printf("fingerprint %016llx\n", static_cast<unsigned long long>(scene.fingerprint()));
}

}  // namespace

void addInfoCommand(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* command =
      app.add_subcommand("info",
                         "Print what a scene holds (triangles, materials, emitters, bounds, cameras), or what "
                         "a baked .ibrr store holds (R, layers, VPLs, bytes)");
  command->footer(
      "Example:\n  ibrr info cornell\n  ibrr info ../shared/scenes/bunny/bun_zipper.ply\n  ibrr info cornell.ibrr");
  addSceneArgument(*command, options->scene);
  command->callback([options] { runInfo(*options); });
}

}  // namespace ibrr::app
