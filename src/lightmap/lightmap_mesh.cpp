#include "lightmap/lightmap_mesh.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>

namespace ibrr::lightmap {

LightmapMesh::LightmapMesh(const LightmapAtlas& atlas)
    : m_vertices(GLsizeiptr(std::max<std::size_t>(atlas.vertices.size(), 1) * sizeof(LightmapVertex)),
                 atlas.vertices.empty() ? nullptr : atlas.vertices.data(), 0),
      m_vertexArray(gpu::VertexArray::create()),
      m_triangleCount(atlas.vertices.size() / 3) {
  const GLuint vao = m_vertexArray.id();
  glVertexArrayVertexBuffer(vao, 0, m_vertices.id(), 0, sizeof(LightmapVertex));
  const GLuint offsets[] = {offsetof(LightmapVertex, position), offsetof(LightmapVertex, normal),
                            offsetof(LightmapVertex, lightmapUv)};
  const GLint sizes[] = {3, 3, 2};
  for (GLuint attribute = 0; attribute < 3; ++attribute) {
    glEnableVertexArrayAttrib(vao, attribute);
    glVertexArrayAttribFormat(vao, attribute, sizes[attribute], GL_FLOAT, GL_FALSE, offsets[attribute]);
    glVertexArrayAttribBinding(vao, attribute, 0);
  }
  glEnableVertexArrayAttrib(vao, 3);
  glVertexArrayAttribIFormat(vao, 3, 1, GL_UNSIGNED_INT, offsetof(LightmapVertex, material));
  glVertexArrayAttribBinding(vao, 3, 0);
  glEnableVertexArrayAttrib(vao, 4);
  glVertexArrayAttribFormat(vao, 4, 2, GL_FLOAT, GL_FALSE, offsetof(LightmapVertex, texcoord));
  glVertexArrayAttribBinding(vao, 4, 0);

  // Triangles grouped by material, in atlas order within a material.
  std::vector<std::uint32_t> triangles(m_triangleCount);
  std::iota(triangles.begin(), triangles.end(), 0u);
  std::stable_sort(triangles.begin(), triangles.end(), [&](std::uint32_t a, std::uint32_t b) {
    return atlas.vertices[3 * std::size_t(a)].material < atlas.vertices[3 * std::size_t(b)].material;
  });
  std::vector<std::uint32_t> indices;
  indices.reserve(3 * m_triangleCount);
  for (std::uint32_t t : triangles) {
    const std::uint32_t material = atlas.vertices[3 * std::size_t(t)].material;
    if (m_materialRanges.empty() || m_materialRanges.back().material != material)
      m_materialRanges.push_back({material, GLsizei(indices.size()), 0});
    for (std::uint32_t corner = 0; corner < 3; ++corner) indices.push_back(3 * t + corner);
    m_materialRanges.back().indexCount += 3;
  }
  m_indicesByMaterial = gpu::Buffer(GLsizeiptr(std::max<std::size_t>(indices.size(), 1) * sizeof(std::uint32_t)),
                                    indices.empty() ? nullptr : indices.data(), 0);
  glVertexArrayElementBuffer(vao, m_indicesByMaterial.id());
}

void LightmapMesh::draw(std::size_t first, std::size_t count) const {
  if (count == 0) return;
  glBindVertexArray(m_vertexArray.id());
  glDrawArrays(GL_TRIANGLES, GLint(3 * first), GLsizei(3 * count));
  glBindVertexArray(0);
}

void LightmapMesh::drawByMaterial(const std::function<void(std::uint32_t material)>& setUp) const {
  glBindVertexArray(m_vertexArray.id());
  for (const MaterialRange& range : m_materialRanges) {
    setUp(range.material);
    glDrawElements(GL_TRIANGLES, range.indexCount, GL_UNSIGNED_INT,
                   reinterpret_cast<const void*>(std::uintptr_t(range.firstIndex) * sizeof(std::uint32_t)));
  }
  glBindVertexArray(0);
}

void LightmapMesh::drawAllInstanced(GLsizei instances) const {
  if (m_triangleCount == 0 || instances <= 0) return;
  glBindVertexArray(m_vertexArray.id());
  glDrawArraysInstanced(GL_TRIANGLES, 0, GLsizei(3 * m_triangleCount), instances);
}

}  // namespace ibrr::lightmap
