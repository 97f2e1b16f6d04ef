#include "lightmap/shooting.hpp"

#include "gpu/shader.hpp"
#include "shaders/interface.glsl"
#include "util/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <unordered_map>

namespace ibrr::lightmap {
namespace {

// A vertex of the visibility pass.
struct VisibilityVertex {
  glm::vec3 position;
  std::uint32_t chart;
};

}  // namespace

float meanRgb(const glm::vec3& c) { return (c.r + c.g + c.b) / 3.0f; }

void checkShootingScene(const scene::Scene& scene, const std::string& method) {
  if (!scene.pointLights.empty() || !scene.spotLights.empty())
    throw Error(scene.sourcePath.string() + ": " + method +
                " shoots from emissive surfaces only (texels of the lightmap); replace its point and spot lights "
                "by quad lights or emissive materials");
  if (scene.emitters().empty())
    throw Error(scene.sourcePath.string() + ": " + method +
                " needs emissive surfaces (an emissive material, Ke, or a quad light in the manifest)");
}

GpuTexelAxes triangleTexelAxes(const LightmapAtlas& atlas, std::uint32_t triangle) {
  const LightmapVertex* v = &atlas.vertices[3 * std::size_t(triangle)];
  const glm::mat2 uv(v[1].lightmapUv - v[0].lightmapUv, v[2].lightmapUv - v[0].lightmapUv);
  const glm::mat2x3 position(v[1].position - v[0].position, v[2].position - v[0].position);
  const float determinant = glm::determinant(uv);
  if (std::abs(determinant) < 1e-20f) return {glm::vec4(0.0f), glm::vec4(0.0f)};
  const glm::mat2x3 axes = position * glm::inverse(uv);
  return {glm::vec4(axes[0], 0.0f), glm::vec4(axes[1], 0.0f)};
}

std::uint32_t ShooterClusters::largest() const {
  std::uint32_t most = 0;
  for (std::size_t c = 0; c + 1 < first.size(); ++c) most = std::max(most, first[c + 1] - first[c]);
  return most;
}

ShooterClusters buildShooterClusters(const LightmapAtlas& atlas, const PatchList& patches,
                                     std::span<const std::uint32_t> texels, int block, int emitterBlock) {
  ShooterClusters clusters;
  std::unordered_map<std::uint64_t, std::uint32_t> idOfKey;
  std::vector<std::vector<std::uint32_t>> members;
  clusters.ofTexel.resize(texels.size());
  for (std::size_t i = 0; i < texels.size(); ++i) {
    const std::uint32_t t = texels[i];
    const std::uint32_t chart = atlas.triangleChart[patches.triangle[t]];
    // Blocks are aligned to the chart's footprint (an atlas built by hand may have none: the origin).
    const LightmapAtlas::Footprint footprint =
        chart < atlas.chartFootprints.size() ? atlas.chartFootprints[chart] : LightmapAtlas::Footprint{};
    const bool emitter = meanRgb(patches.emission[t]) > 0.0f;
    const int side = emitter ? emitterBlock : block;
    const int x = int(t % std::uint32_t(patches.width)) - footprint.x;
    const int y = int(t / std::uint32_t(patches.width)) - footprint.y;
    const std::uint64_t key = (std::uint64_t(chart) << 33) | (std::uint64_t(emitter) << 32) |
                              (std::uint64_t(std::uint32_t(std::max(y, 0) / side)) << 16) |
                              std::uint64_t(std::uint32_t(std::max(x, 0) / side));
    const auto [it, inserted] = idOfKey.try_emplace(key, std::uint32_t(members.size()));
    if (inserted) members.emplace_back();
    members[it->second].push_back(std::uint32_t(i));
    clusters.ofTexel[i] = it->second;
  }
  clusters.first.push_back(0);
  for (const std::vector<std::uint32_t>& m : members) {
    glm::dvec3 centroid(0.0), normal(0.0);
    double area = 0.0;
    for (const std::uint32_t i : m) {
      const std::uint32_t t = texels[i];
      const double a = patches.area[t];
      centroid += a * glm::dvec3(patches.position[t]);
      normal += a * glm::dvec3(patches.normal[t]);
      area += a;
      clusters.texels.push_back(i);
    }
    clusters.first.push_back(std::uint32_t(clusters.texels.size()));
    const std::uint32_t t0 = texels[m.front()];
    clusters.centroid.push_back(area > 0.0 ? glm::vec3(centroid / area) : patches.position[t0]);
    clusters.normal.push_back(glm::length(normal) > 0.0 ? glm::vec3(glm::normalize(normal)) : patches.normal[t0]);
    clusters.area.push_back(float(area));
  }
  return clusters;
}

ShootReceivers makeShootReceivers(const LightmapAtlas& atlas, const PatchList& patches,
                                  std::span<const std::uint32_t> texels, std::span<const std::uint32_t> shooterOf) {
  ShootReceivers out;
  out.receivers.resize(texels.size());
  out.axes.resize(texels.size());
  for (std::size_t i = 0; i < texels.size(); ++i) {
    const std::uint32_t t = texels[i];
    out.receivers[i] = {glm::vec4(patches.position[t], patches.area[t]), glm::vec4(patches.normal[t], 0.0f),
                        glm::vec4(patches.albedo[t], 0.0f),
                        glm::uvec4(atlas.triangleChart[patches.triangle[t]], shooterOf[i], 0u, 0u)};
    out.axes[i] = triangleTexelAxes(atlas, patches.triangle[t]);
  }
  return out;
}

glm::dvec3 readTexelRadiance(const gpu::Buffer& buffer, std::span<const std::uint32_t> texels,
                             std::vector<glm::vec4>& scratch, std::vector<glm::vec3>& radiance) {
  scratch.resize(texels.size());
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  glGetNamedBufferSubData(buffer.id(), 0, GLsizeiptr(texels.size() * sizeof(glm::vec4)), scratch.data());
  glm::dvec3 sum(0.0);
  for (std::size_t i = 0; i < texels.size(); ++i) {
    radiance[texels[i]] = glm::vec3(scratch[i]);
    sum += glm::dvec3(scratch[i]);
  }
  return texels.empty() ? sum : sum / double(texels.size());
}

glm::mat3 shooterFrame(const glm::vec3& normal) {
  const glm::vec3 helper = std::abs(normal.x) < 0.9f ? glm::vec3(1, 0, 0) : glm::vec3(0, 1, 0);
  const glm::vec3 tangent = glm::normalize(glm::cross(helper, normal));
  const glm::vec3 bitangent = glm::cross(normal, tangent);
  return glm::transpose(glm::mat3(tangent, bitangent, normal));  // GLM is column-major
}

TessellatedTriangles tessellateTriangles(std::span<const glm::vec3> corners, float maxEdge) {
  TessellatedTriangles out;
  for (std::size_t tri = 0; tri + 2 < corners.size(); tri += 3) {
    const glm::vec3 a = corners[tri], b = corners[tri + 1], c = corners[tri + 2];
    const float longest = std::max({glm::length(b - a), glm::length(c - b), glm::length(a - c)});
    const int k = maxEdge > 0.0f ? std::clamp(int(std::ceil(longest / maxEdge)), 1, 256) : 1;
    // Barycentric grid of step 1/k: k² triangles, k(k+1)/2 upright and k(k−1)/2 inverted.
    const auto at = [&](int i, int j) { return a + (b - a) * (float(i) / float(k)) + (c - a) * (float(j) / float(k)); };
    for (int j = 0; j < k; ++j) {
      for (int i = 0; i + j < k; ++i) {
        out.corners.insert(out.corners.end(), {at(i, j), at(i + 1, j), at(i, j + 1)});
        out.source.push_back(std::uint32_t(tri / 3));
        if (i + j + 1 < k) {
          out.corners.insert(out.corners.end(), {at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)});
          out.source.push_back(std::uint32_t(tri / 3));
        }
      }
    }
  }
  return out;
}

HemisphereVisibility::HemisphereVisibility(const scene::Scene& scene, const LightmapAtlas& atlas,
                                           double maxEdgeFraction, int resolution, int layers)
    : m_resolution(resolution), m_layers(std::max(layers, 1)) {
  const float diagonal = std::max(scene.bounds().diagonal(), 1e-6f);
  std::vector<glm::vec3> corners(atlas.vertices.size());
  for (std::size_t v = 0; v < corners.size(); ++v) corners[v] = atlas.vertices[v].position;
  const TessellatedTriangles tessellated = tessellateTriangles(corners, float(maxEdgeFraction) * diagonal);
  std::vector<VisibilityVertex> vertices(tessellated.corners.size());
  for (std::size_t v = 0; v < vertices.size(); ++v)
    vertices[v] = {tessellated.corners[v], atlas.triangleChart[tessellated.source[v / 3]]};
  m_vertexCount = vertices.size();
  m_vertices = makeStorageBuffer(vertices);
  m_vertexArray = gpu::VertexArray::create();
  const GLuint array = m_vertexArray.id();
  glVertexArrayVertexBuffer(array, 0, m_vertices.id(), 0, sizeof(VisibilityVertex));
  glEnableVertexArrayAttrib(array, 0);
  glVertexArrayAttribFormat(array, 0, 3, GL_FLOAT, GL_FALSE, offsetof(VisibilityVertex, position));
  glVertexArrayAttribBinding(array, 0, 0);
  glEnableVertexArrayAttrib(array, 1);
  glVertexArrayAttribIFormat(array, 1, 1, GL_UNSIGNED_INT, offsetof(VisibilityVertex, chart));
  glVertexArrayAttribBinding(array, 1, 0);

  m_distanceChart = gpu::Texture(GL_RG32F, resolution, resolution, m_layers);
  m_depth = gpu::Renderbuffer(GL_DEPTH_COMPONENT32F, resolution, resolution);
  m_framebuffer = gpu::Framebuffer::create();
  glNamedFramebufferRenderbuffer(m_framebuffer.id(), GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, m_depth.id());

  m_program = gpu::loadProgram({"lightmap_shoot_hemisphere.vert", "lightmap_shoot_hemisphere.frag"});
  // Clip at a near plane just above the shooter (its own plane stays out) and beyond the scene;
  // the receivers' depth test's absolute slack is of the same order.
  const float nearPlane = 1e-5f * diagonal;
  const float farPlane = 2.0f * diagonal;
  m_depthEpsilon = 1e-4f * diagonal;
  glProgramUniform2f(m_program.id(), IBRR_U_HEMISPHERE_NEAR_FAR, nearPlane, farPlane);
}

void HemisphereVisibility::render(const glm::vec3& shooter, const glm::vec3& normal, int layer) const {
  const glm::mat3 toShooter = shooterFrame(normal);  // uploaded column-major, as GLSL reads it
  const GLuint framebuffer = m_framebuffer.id();
  glNamedFramebufferTextureLayer(framebuffer, GL_COLOR_ATTACHMENT0, m_distanceChart.id(), 0, layer);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
  const float clearDistance[4] = {1e30f, -1.0f, 0.0f, 0.0f};
  glClearNamedFramebufferfv(framebuffer, GL_COLOR, 0, clearDistance);
  glClearNamedFramebufferfi(framebuffer, GL_DEPTH_STENCIL, 0, 1.0f, 0);
  glViewport(0, 0, m_resolution, m_resolution);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_CULL_FACE);
  m_program.use();
  glProgramUniform3fv(m_program.id(), IBRR_U_HEMISPHERE_SHOOTER, 1, &shooter.x);
  glProgramUniformMatrix3fv(m_program.id(), IBRR_U_HEMISPHERE_TO_SHOOTER, 1, GL_FALSE, &toShooter[0][0]);
  glBindVertexArray(m_vertexArray.id());
  glDrawArrays(GL_TRIANGLES, 0, GLsizei(m_vertexCount));
  glBindVertexArray(0);
  glDisable(GL_DEPTH_TEST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

}  // namespace ibrr::lightmap
