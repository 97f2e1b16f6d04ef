#include "gpu/scene_renderer.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace ibrr::gpu {

namespace {
struct Vertex {
  glm::vec3 position;
  glm::vec3 normal;
  glm::vec2 texcoord;
};
}  // namespace

SceneRenderer::SceneRenderer(const scene::Scene& scene)
    : m_instances(scene.instances), m_materials(scene.materials), m_triangleCount(scene.triangleCount()) {
  for (const scene::TriangleMesh& mesh : scene.meshes) {
    std::vector<Vertex> vertices(mesh.positions.size());
    for (std::size_t v = 0; v < vertices.size(); ++v)
      vertices[v] = {mesh.positions[v], mesh.normals[v], mesh.texcoords.empty() ? glm::vec2(0.0f) : mesh.texcoords[v]};
    // Triangles sorted by material so that each material is one contiguous draw.
    std::vector<std::uint32_t> order(mesh.triangles.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return mesh.triangleMaterials[a] < mesh.triangleMaterials[b];
    });
    std::vector<std::uint32_t> indices;
    indices.reserve(order.size() * 3);
    GpuMesh gpuMesh;
    for (std::uint32_t t : order) {
      const std::uint32_t material = mesh.triangleMaterials[t];
      if (gpuMesh.ranges.empty() || gpuMesh.ranges.back().material != material)
        gpuMesh.ranges.push_back({GLsizei(indices.size()), 0, material});
      indices.insert(indices.end(), {mesh.triangles[t].x, mesh.triangles[t].y, mesh.triangles[t].z});
      gpuMesh.ranges.back().indexCount += 3;
    }
    gpuMesh.vertices = Buffer(GLsizeiptr(vertices.size() * sizeof(Vertex)), vertices.data(), 0);
    gpuMesh.indices = Buffer(GLsizeiptr(indices.size() * sizeof(std::uint32_t)), indices.data(), 0);
    gpuMesh.vertexArray = VertexArray::create();
    const GLuint vao = gpuMesh.vertexArray.id();
    glVertexArrayVertexBuffer(vao, 0, gpuMesh.vertices.id(), 0, sizeof(Vertex));
    glVertexArrayElementBuffer(vao, gpuMesh.indices.id());
    const GLuint offsets[] = {offsetof(Vertex, position), offsetof(Vertex, normal), offsetof(Vertex, texcoord)};
    const GLint sizes[] = {3, 3, 2};
    for (GLuint attribute = 0; attribute < 3; ++attribute) {
      glEnableVertexArrayAttrib(vao, attribute);
      glVertexArrayAttribFormat(vao, attribute, sizes[attribute], GL_FLOAT, GL_FALSE, offsets[attribute]);
      glVertexArrayAttribBinding(vao, attribute, 0);
    }
    m_meshes.push_back(std::move(gpuMesh));
  }
  for (const scene::Texture& source : scene.textures) {
    const int levels = 1 + int(std::floor(std::log2(std::max(source.width, source.height))));
    Texture texture(GL_RGB32F, source.width, source.height, 0, levels);
    // scene::Texture rows are top-first, while texcoord v = 0 addresses the image's bottom row (the
    // OBJ/Assimp convention) and GL's t = 0 is the first uploaded row: upload bottom-first.
    std::vector<glm::vec3> bottomFirst(source.texels.size());
    for (int y = 0; y < source.height; ++y)
      std::copy_n(source.texels.begin() + std::ptrdiff_t(y) * source.width, source.width,
                  bottomFirst.begin() + std::ptrdiff_t(source.height - 1 - y) * source.width);
    glTextureSubImage2D(texture.id(), 0, 0, 0, source.width, source.height, GL_RGB, GL_FLOAT, bottomFirst.data());
    glGenerateTextureMipmap(texture.id());
    glTextureParameteri(texture.id(), GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
    glTextureParameteri(texture.id(), GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTextureParameteri(texture.id(), GL_TEXTURE_WRAP_S, GL_REPEAT);
    glTextureParameteri(texture.id(), GL_TEXTURE_WRAP_T, GL_REPEAT);
    m_textures.push_back(std::move(texture));
  }
}

void SceneRenderer::draw(const glm::mat4& viewProjection) const {
  GLint program = 0;
  glGetIntegerv(GL_CURRENT_PROGRAM, &program);
  glProgramUniformMatrix4fv(GLuint(program), kUniformViewProjection, 1, GL_FALSE, glm::value_ptr(viewProjection));
  for (const scene::MeshInstance& instance : m_instances) {
    const GpuMesh& mesh = m_meshes[instance.mesh];
    const glm::mat4 normalToWorld = glm::transpose(glm::inverse(instance.objectToWorld));
    glProgramUniformMatrix4fv(GLuint(program), kUniformObjectToWorld, 1, GL_FALSE,
                              glm::value_ptr(instance.objectToWorld));
    glProgramUniformMatrix4fv(GLuint(program), kUniformNormalToWorld, 1, GL_FALSE, glm::value_ptr(normalToWorld));
    glBindVertexArray(mesh.vertexArray.id());
    for (const DrawRange& range : mesh.ranges) {
      const scene::Material& material = m_materials[range.material];
      glProgramUniform3fv(GLuint(program), kUniformAlbedo, 1, glm::value_ptr(material.albedo));
      glProgramUniform3fv(GLuint(program), kUniformEmission, 1, glm::value_ptr(material.emission));
      glProgramUniform1i(GLuint(program), kUniformHasAlbedoTexture, material.albedoTexture >= 0 ? 1 : 0);
      glProgramUniform1i(GLuint(program), kUniformMaterialIndex, GLint(range.material));
      if (material.albedoTexture >= 0) glBindTextureUnit(kAlbedoTextureUnit, m_textures[material.albedoTexture].id());
      glDrawElements(GL_TRIANGLES, range.indexCount, GL_UNSIGNED_INT,
                     reinterpret_cast<const void*>(std::uintptr_t(range.firstIndex) * sizeof(std::uint32_t)));
    }
  }
  glBindVertexArray(0);
}

}  // namespace ibrr::gpu
