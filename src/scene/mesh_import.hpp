#pragma once
// Importing one mesh file through Assimp into the scene's materials, textures and meshes.
#include "scene/scene.hpp"

#include <filesystem>

namespace ibrr::scene {

struct MeshImportStats {
  std::size_t trianglesKept = 0;
  std::size_t trianglesDropped = 0;  // non-finite or zero-area triangles
};

// Appends the file's geometry as one TriangleMesh (node transforms applied) and its materials
// (and diffuse textures) to `scene`; returns the mesh index. Throws ibrr::Error naming the file.
std::uint32_t importMeshFile(const std::filesystem::path& path, Scene& scene, MeshImportStats* stats = nullptr);

}  // namespace ibrr::scene
