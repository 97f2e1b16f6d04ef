#include "lightmap/lightmap_mesh.hpp"

#include <cstddef>

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
}

void LightmapMesh::draw(std::size_t first, std::size_t count) const {
  if (count == 0) return;
  glBindVertexArray(m_vertexArray.id());
  glDrawArrays(GL_TRIANGLES, GLint(3 * first), GLsizei(3 * count));
  glBindVertexArray(0);
}

void LightmapMesh::drawAllInstanced(GLsizei instances) const {
  if (m_triangleCount == 0 || instances <= 0) return;
  glBindVertexArray(m_vertexArray.id());
  glDrawArraysInstanced(GL_TRIANGLES, 0, GLsizei(3 * m_triangleCount), instances);
}

}  // namespace ibrr::lightmap
