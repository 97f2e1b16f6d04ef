#pragma once
// The atlas's triangle list on the GPU, for every pass that draws the scene with lightmap UVs
// (patch rasterisation in UV space, the lightmap display, solvers): one vertex buffer of
// LightmapVertex (3 per triangle, unwelded) and a vertex array with these attributes:
//   location 0: position (vec3, world)      location 1: normal (vec3, world, front side)
//   location 2: lightmapUv (vec2, texels)   location 3: material (uint, index into Scene::materials)
//   location 4: texcoord (vec2, the mesh's texture coordinate for its albedo texture)
// Triangle i of a draw is atlas triangle i (gl_PrimitiveID in a fragment shader, no geometry shader).
#include "gpu/resources.hpp"
#include "lightmap/atlas.hpp"

#include <functional>
#include <vector>

namespace ibrr::lightmap {

class LightmapMesh {
public:
  explicit LightmapMesh(const LightmapAtlas& atlas);

  // Draws triangles [first, first + count) with the currently bound program and target.
  void draw(std::size_t first, std::size_t count) const;
  void drawAll() const { draw(0, m_triangleCount); }
  // Draws every triangle `instances` times (gl_InstanceID 0 .. instances−1), e.g. once per face of a
  // batch of hemicubes whose vertex shader picks the layer and matrix by instance.
  void drawAllInstanced(GLsizei instances) const;
  // Draws every triangle once, material by material: for each material with triangles, calls
  // setUp(material) (to set its uniforms and textures) and then draws them, through an index list
  // sorted by material.
  void drawByMaterial(const std::function<void(std::uint32_t material)>& setUp) const;
  [[nodiscard]] std::size_t triangleCount() const { return m_triangleCount; }

private:
  struct MaterialRange {
    std::uint32_t material = 0;
    GLsizei firstIndex = 0;
    GLsizei indexCount = 0;
  };
  gpu::Buffer m_vertices;
  gpu::Buffer m_indicesByMaterial;  // uint32 vertex indices, triangles grouped by material (stable)
  std::vector<MaterialRange> m_materialRanges;
  gpu::VertexArray m_vertexArray;
  std::size_t m_triangleCount = 0;
};

}  // namespace ibrr::lightmap
