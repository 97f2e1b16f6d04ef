#include "gpu/scene_renderer.hpp"

#include "util/morton.hpp"

#include <glm/gtc/type_ptr.hpp>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
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
// True when the box lies entirely outside one plane of the clip volume of `objectToClip`.
// Clip space as GL's default depth range gives it (z in [−w, w]); for a reversed-depth camera (z in [0, w]) the
// z < −w test culls less than it could, never what is in view.
bool outsideFrustum(const glm::mat4& objectToClip, const glm::vec3& boxMin, const glm::vec3& boxMax) {
  int outside[6] = {0, 0, 0, 0, 0, 0};
  for (int corner = 0; corner < 8; ++corner) {
    const glm::vec4 p = objectToClip * glm::vec4((corner & 1) ? boxMax.x : boxMin.x, (corner & 2) ? boxMax.y : boxMin.y,
                                                 (corner & 4) ? boxMax.z : boxMin.z, 1.0f);
    outside[0] += p.x < -p.w;
    outside[1] += p.x > p.w;
    outside[2] += p.y < -p.w;
    outside[3] += p.y > p.w;
    outside[4] += p.z < -p.w;
    outside[5] += p.z > p.w;
  }
  for (int plane = 0; plane < 6; ++plane)
    if (outside[plane] == 8) return true;
  return false;
}
// The per-instance uniforms of a scene draw: the instance's object → world and normal → world matrices.
void setInstanceUniforms(GLuint program, const scene::MeshInstance& instance) {
  const glm::mat4 normalToWorld = glm::transpose(glm::inverse(instance.objectToWorld));
  glProgramUniformMatrix4fv(program, kUniformObjectToWorld, 1, GL_FALSE, glm::value_ptr(instance.objectToWorld));
  glProgramUniformMatrix4fv(program, kUniformNormalToWorld, 1, GL_FALSE, glm::value_ptr(normalToWorld));
}

// The vertex-array binding of drawViews()'s instanced view attribute (binding 0 holds the vertices).
constexpr GLuint kViewBinding = 1;
}  // namespace

std::vector<Texture> uploadAlbedoTextures(const scene::Scene& scene) {
  std::vector<Texture> textures;
  textures.reserve(scene.textures.size());
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
    textures.push_back(std::move(texture));
  }
  return textures;
}

void setMaterialUniforms(GLuint program, const scene::Material& material, std::uint32_t materialIndex,
                         const std::vector<Texture>& albedoTextures) {
  glProgramUniform3fv(program, kUniformAlbedo, 1, glm::value_ptr(material.albedo));
  glProgramUniform3fv(program, kUniformEmission, 1, glm::value_ptr(material.emission));
  glProgramUniform1i(program, kUniformHasAlbedoTexture, material.albedoTexture >= 0 ? 1 : 0);
  glProgramUniform1i(program, kUniformMaterialIndex, GLint(materialIndex));
  if (material.albedoTexture >= 0)
    glBindTextureUnit(kAlbedoTextureUnit, albedoTextures.at(std::size_t(material.albedoTexture)).id());
}

namespace {
std::atomic<std::uint64_t> g_sceneUploads{0};
}  // namespace

std::uint64_t SceneRenderer::uploads() { return g_sceneUploads.load(); }

SceneRenderer::SceneRenderer(const scene::Scene& scene)
    : m_instances(scene.instances), m_materials(scene.materials), m_triangleCount(scene.triangleCount()) {
  ++g_sceneUploads;
  for (const scene::TriangleMesh& mesh : scene.meshes) {
    // Normals and texture coordinates are optional (meshes built in code may lack them): a mesh
    // without normals gets the area-weighted mean of its triangles' normals at each vertex.
    std::vector<glm::vec3> normals = mesh.normals;
    if (normals.size() != mesh.positions.size()) {
      normals.assign(mesh.positions.size(), glm::vec3(0.0f));
      for (const glm::uvec3& tri : mesh.triangles) {
        const glm::vec3 areaNormal = glm::cross(mesh.positions[tri.y] - mesh.positions[tri.x],
                                                mesh.positions[tri.z] - mesh.positions[tri.x]);  // 2·area·n
        for (int k = 0; k < 3; ++k) normals[tri[k]] += areaNormal;
      }
      for (glm::vec3& n : normals) {
        const float length = glm::length(n);
        n = length > 0.0f && std::isfinite(length) ? n / length : glm::vec3(0.0f, 1.0f, 0.0f);
      }
    }
    std::vector<Vertex> vertices(mesh.positions.size());
    for (std::size_t v = 0; v < vertices.size(); ++v)
      vertices[v] = {mesh.positions[v], normals[v], v < mesh.texcoords.size() ? mesh.texcoords[v] : glm::vec2(0.0f)};
    // Triangles sorted by material, then along a Morton curve of their centroids, so that each
    // chunk of consecutive triangles is one material and spatially compact.
    scene::Bounds meshBounds;
    for (const glm::vec3& p : mesh.positions) meshBounds.extend(p);
    std::vector<std::uint64_t> keys(mesh.triangles.size());
    for (std::size_t t = 0; t < keys.size(); ++t) {
      const glm::uvec3& tri = mesh.triangles[t];
      const glm::vec3 centroid = (mesh.positions[tri.x] + mesh.positions[tri.y] + mesh.positions[tri.z]) / 3.0f;
      keys[t] = (std::uint64_t(mesh.triangleMaterials[t]) << 32) |
                mortonCode(centroid, meshBounds.min, meshBounds.extent());
    }
    std::vector<std::uint32_t> order(mesh.triangles.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
    std::vector<std::uint32_t> indices;
    indices.reserve(order.size() * 3);
    GpuMesh gpuMesh;
    for (std::uint32_t t : order) {
      const std::uint32_t material = mesh.triangleMaterials[t];
      if (gpuMesh.ranges.empty() || gpuMesh.ranges.back().material != material ||
          gpuMesh.ranges.back().indexCount >= GLsizei(3 * kChunkTriangles)) {
        const glm::vec3& first = mesh.positions[mesh.triangles[t].x];
        gpuMesh.ranges.push_back({GLsizei(indices.size()), 0, material, first, first});
      }
      DrawRange& range = gpuMesh.ranges.back();
      for (int corner = 0; corner < 3; ++corner) {
        const glm::vec3& p = mesh.positions[mesh.triangles[t][corner]];
        range.boundsMin = glm::min(range.boundsMin, p);
        range.boundsMax = glm::max(range.boundsMax, p);
      }
      indices.insert(indices.end(), {mesh.triangles[t].x, mesh.triangles[t].y, mesh.triangles[t].z});
      range.indexCount += 3;
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
  m_textures = uploadAlbedoTextures(scene);
}

template <class Emit>
std::size_t SceneRenderer::emitVisibleRuns(const glm::mat4& objectToClip, std::span<const DrawRange> ranges,
                                           Emit emit) {
  std::size_t triangles = 0;
  GLsizei first = 0, count = 0;  // the run being joined, if count > 0
  for (const DrawRange& range : ranges) {
    if (outsideFrustum(objectToClip, range.boundsMin, range.boundsMax)) continue;
    triangles += std::size_t(range.indexCount / 3);
    if (count > 0 && range.firstIndex == first + count) {
      count += range.indexCount;
      continue;
    }
    if (count > 0) emit(first, count);
    first = range.firstIndex;
    count = range.indexCount;
  }
  if (count > 0) emit(first, count);
  return triangles;
}

std::size_t SceneRenderer::draw(const glm::mat4& viewProjection, Materials materials) const {
  std::size_t submitted = 0;
  GLint program = 0;
  glGetIntegerv(GL_CURRENT_PROGRAM, &program);
  glProgramUniformMatrix4fv(GLuint(program), kUniformViewProjection, 1, GL_FALSE, glm::value_ptr(viewProjection));
  for (const scene::MeshInstance& instance : m_instances) {
    const GpuMesh& mesh = m_meshes[instance.mesh];
    setInstanceUniforms(GLuint(program), instance);
    glBindVertexArray(mesh.vertexArray.id());
    const glm::mat4 objectToClip = viewProjection * instance.objectToWorld;
    // The ranges come sorted by material: the chunks of one material (of all, with Materials::None) that are in
    // view go out in one glMultiDrawElements, neighbouring chunks joined into one run of indices.
    for (std::size_t r = 0; r < mesh.ranges.size();) {
      const std::uint32_t material = mesh.ranges[r].material;
      std::size_t end = r;
      while (end < mesh.ranges.size() && (materials == Materials::None || mesh.ranges[end].material == material)) ++end;
      m_drawCounts.clear();
      m_drawOffsets.clear();
      submitted += emitVisibleRuns(objectToClip, std::span(mesh.ranges).subspan(r, end - r),
                                   [&](GLsizei first, GLsizei count) {
                                     m_drawCounts.push_back(count);
                                     m_drawOffsets.push_back(reinterpret_cast<const void*>(
                                         std::uintptr_t(first) * sizeof(std::uint32_t)));
                                   });
      r = end;
      if (m_drawCounts.empty()) continue;
      if (materials == Materials::Set)
        setMaterialUniforms(GLuint(program), m_materials[material], material, m_textures);
      glMultiDrawElements(GL_TRIANGLES, m_drawCounts.data(), GL_UNSIGNED_INT, m_drawOffsets.data(),
                          GLsizei(m_drawCounts.size()));
    }
  }
  glBindVertexArray(0);
  return submitted;
}

void SceneRenderer::bindViewIndices(std::size_t views) const {
  if (views <= m_viewIndices) return;
  m_viewIndices = std::max<std::size_t>(views, 2 * m_viewIndices);
  std::vector<GLuint> indices(m_viewIndices);
  std::iota(indices.begin(), indices.end(), 0u);
  m_viewIndexBuffer = Buffer(GLsizeiptr(indices.size() * sizeof(GLuint)), indices.data(), 0);
  for (const GpuMesh& mesh : m_meshes) {
    const GLuint vao = mesh.vertexArray.id();
    glVertexArrayVertexBuffer(vao, kViewBinding, m_viewIndexBuffer.id(), 0, sizeof(GLuint));
    glVertexArrayBindingDivisor(vao, kViewBinding, 1);
    glEnableVertexArrayAttrib(vao, IBRR_A_VIEW);
    glVertexArrayAttribIFormat(vao, IBRR_A_VIEW, 1, GL_UNSIGNED_INT, 0);
    glVertexArrayAttribBinding(vao, IBRR_A_VIEW, kViewBinding);
  }
}

std::size_t SceneRenderer::drawViews(std::span<const glm::mat4> viewProjections) const {
  const std::size_t views = viewProjections.size();
  if (views == 0) return 0;
  bindViewIndices(views);
  // Cull every (instance, view) pair into its own list of commands; in parallel when there are many box tests.
  const std::size_t pairs = m_instances.size() * views;
  m_viewCommands.resize(pairs);
  std::vector<std::size_t> triangles(pairs, 0);
  auto cull = [&](std::size_t pair) {
    const scene::MeshInstance& instance = m_instances[pair / views];
    const std::size_t view = pair % views;
    std::vector<IndirectCommand>& commands = m_viewCommands[pair];
    commands.clear();
    triangles[pair] = emitVisibleRuns(viewProjections[view] * instance.objectToWorld,
                                      m_meshes[instance.mesh].ranges, [&](GLsizei first, GLsizei count) {
                                        commands.push_back({GLuint(count), 1, GLuint(first), 0, GLuint(view)});
                                      });
  };
  std::size_t boxTests = 0;
  for (const scene::MeshInstance& instance : m_instances) boxTests += m_meshes[instance.mesh].ranges.size() * views;
  constexpr std::size_t kParallelBoxTests = 1 << 14;  // below this a parallel loop costs more than it saves
  if (boxTests >= kParallelBoxTests)
    tbb::parallel_for(std::size_t(0), pairs, cull);
  else
    for (std::size_t pair = 0; pair < pairs; ++pair) cull(pair);
  // One buffer: each instance's commands, view by view.
  m_commands.clear();
  std::vector<std::size_t> firstCommand(m_instances.size() + 1, 0);
  for (std::size_t i = 0; i < m_instances.size(); ++i) {
    for (std::size_t view = 0; view < views; ++view) {
      const std::vector<IndirectCommand>& commands = m_viewCommands[i * views + view];
      m_commands.insert(m_commands.end(), commands.begin(), commands.end());
    }
    firstCommand[i + 1] = m_commands.size();
  }
  if (m_commands.empty()) return 0;
  const auto bytes = GLsizeiptr(m_commands.size() * sizeof(IndirectCommand));
  if (m_commandBuffer.size() < bytes)
    m_commandBuffer = Buffer(std::max(bytes, 2 * m_commandBuffer.size()), nullptr, GL_DYNAMIC_STORAGE_BIT);
  glNamedBufferSubData(m_commandBuffer.id(), 0, bytes, m_commands.data());
  GLint program = 0;
  glGetIntegerv(GL_CURRENT_PROGRAM, &program);
  glBindBuffer(GL_DRAW_INDIRECT_BUFFER, m_commandBuffer.id());
  for (std::size_t i = 0; i < m_instances.size(); ++i) {
    const std::size_t count = firstCommand[i + 1] - firstCommand[i];
    if (count == 0) continue;
    setInstanceUniforms(GLuint(program), m_instances[i]);
    glBindVertexArray(m_meshes[m_instances[i].mesh].vertexArray.id());
    glMultiDrawElementsIndirect(GL_TRIANGLES, GL_UNSIGNED_INT,
                                reinterpret_cast<const void*>(firstCommand[i] * sizeof(IndirectCommand)),
                                GLsizei(count), 0);
  }
  glBindBuffer(GL_DRAW_INDIRECT_BUFFER, 0);
  glBindVertexArray(0);
  return std::accumulate(triangles.begin(), triangles.end(), std::size_t(0));
}

}  // namespace ibrr::gpu
