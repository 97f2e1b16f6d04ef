// Mesh files through the project's loader (scene::loadScene on a bare mesh: the PLY check, Assimp,
// the conversion into the scene, finalize()): any input loads or is refused with ibrr::Error.
//
// The first byte picks the format (its value mod 4: OBJ, PLY, glTF, GLB); the rest is the file. An
// OBJ may carry its MTL and a glTF its buffer after fuzz::kFileSeparator: they are written beside it
// as mesh.mtl and mesh.bin, the names the seeds refer to.
#include "fuzz_support.hpp"

#include "scene/load.hpp"
#include "util/error.hpp"

#include <array>
#include <cstdlib>
#include <string>

using namespace ibrr;

namespace {

struct Format {
  const char* extension;
  const char* companion;  // the second file after the separator, or nullptr
};
constexpr std::array<Format, 4> kFormats = {
    {{"obj", "mesh.mtl"}, {"ply", nullptr}, {"gltf", "mesh.bin"}, {"glb", nullptr}}};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Format& format = kFormats[data[0] % kFormats.size()];
  const std::string_view rest = fuzz::asText(data + 1, size - 1);
  const auto [mesh, companion] = format.companion ? fuzz::splitAt(rest) : std::pair{rest, std::string_view()};
  // Every file an earlier input wrote is emptied, so that an input loads the same alone as in a run
  // (a mesh naming mesh.obj as its MTL read an earlier input's OBJ).
  for (const Format& other : kFormats) {
    if (&other != &format) fuzz::writeScratchFile(std::string("mesh.") + other.extension, {});
    if (other.companion) fuzz::writeScratchFile(other.companion, &other == &format ? companion : std::string_view());
  }
  const auto path = fuzz::writeScratchFile(std::string("mesh.") + format.extension, mesh);
  try {
    const scene::Scene scene = scene::loadScene(path);
    // A loaded mesh has triangles, each with a material that exists.
    const scene::TriangleMesh& loaded = scene.meshes.at(0);
    if (loaded.triangles.empty() || loaded.triangleMaterials.size() != loaded.triangles.size()) std::abort();
    for (const std::uint32_t material : loaded.triangleMaterials)
      if (material >= scene.materials.size()) std::abort();
    for (const glm::uvec3& triangle : loaded.triangles)
      if (triangle.x >= loaded.positions.size() || triangle.y >= loaded.positions.size() ||
          triangle.z >= loaded.positions.size())
        std::abort();
  } catch (const Error&) {
    // refused with a message: fine
  }
  return 0;
}
