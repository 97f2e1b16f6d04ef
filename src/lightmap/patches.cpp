// The patch list (Tjahyono et al. §IV.A): every atlas texel that stands for a piece of surface,
// with its world position, normal, albedo, emission and area.
//
// 1. GPU: the atlas triangles are rasterised in UV space into an R32UI target holding, per texel,
//    the triangle that covers the texel centre (GL's rule: exactly one triangle owns a centre on a
//    shared edge). Where triangles of one chart overlap in UV (small charts merged into a host,
//    atlas.cpp), the depth test keeps the one whose normal agrees best with the chart's plane:
//    depth = (1 − n_triangle·n_chart)/2, so a screw merged into a table never takes the table's
//    texels.
// 2. CPU, conservative pass: a chart that covers no texel centre at all (thinner than a texel) gets
//    every texel of its footprint whose square overlaps one of its triangles (exact separating-axis
//    test), owned by the chart's triangle nearest to the texel centre. Footprints are disjoint, so
//    this never takes a texel from another chart. (Conservative rasterisation extensions are not
//    on llvmpipe; the exact test on the few thin charts costs nothing.)
// 3. CPU, per valid texel (TBB): the point of its triangle nearest to the texel centre in UV space
//    (the centre itself when inside) gives barycentrics λ; position = Σ λ_i p_i on the triangle,
//    normal = the triangle's front normal, albedo = ρ × the texture averaged over 4×4 points of the
//    texel and emission = L_e.
// 4. Area: a texel of triangle t stands for J_t = (world area of t) / (UV area of t in texels²)
//    of surface, (1/texelsPerUnit)²/cos θ for a triangle at θ to its chart's plane. Edge texels
//    are only partly covered and thin triangles may own no texel, so the chart's exact world area
//    A_c is shared in proportion: area = A_c · J_t / Σ_{texels of c} J. Σ area over valid texels is
//    then the scene's surface area (but for degenerate charts that got no texel), which keeps
//    emitted and received power exact; an interior texel of a flat chart gets (1/texelsPerUnit)²
//    up to the chart's edge-coverage correction.
#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "lightmap/atlas.hpp"
#include "lightmap/lightmap_mesh.hpp"
#include "shaders/interface.glsl"
#include "util/error.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

namespace ibrr::lightmap {
namespace {

// Atlas triangle ids (index + 1, 0 = none) per texel, row-major, row 0 first: the GPU pass.
std::vector<std::uint32_t> rasterizeTriangleIds(const LightmapAtlas& atlas) {
  gpu::DebugGroup group("lightmap patches");
  GLint maxSize = 0, maxViewport[2] = {0, 0};
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &maxSize);
  glGetIntegerv(GL_MAX_VIEWPORT_DIMS, maxViewport);
  if (atlas.width > std::min(maxSize, maxViewport[0]) || atlas.height > std::min(maxSize, maxViewport[1]))
    throw Error("lightmap atlas " + std::to_string(atlas.width) + "×" + std::to_string(atlas.height) +
                " exceeds this GPU's limit of " + std::to_string(std::min({maxSize, maxViewport[0], maxViewport[1]})) +
                " texels; ask for a smaller atlas");
  const gpu::Program program = gpu::loadProgram({"lightmap_patches.vert", "lightmap_patches.frag"});
  const gpu::Texture target(GL_R32UI, atlas.width, atlas.height);
  const gpu::Renderbuffer depth(GL_DEPTH_COMPONENT32F, atlas.width, atlas.height);
  const gpu::Framebuffer framebuffer = gpu::Framebuffer::create();
  glNamedFramebufferTexture(framebuffer.id(), GL_COLOR_ATTACHMENT0, target.id(), 0);
  glNamedFramebufferRenderbuffer(framebuffer.id(), GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth.id());
  framebuffer.checkComplete("lightmap patch target", atlas.width, atlas.height);
  const LightmapMesh mesh(atlas);
  std::vector<float> triangleDepth(std::max<std::size_t>(atlas.triangleCount(), 1), 0.0f);
  for (std::size_t t = 0; t < atlas.triangleCount(); ++t)
    triangleDepth[t] = std::clamp(
        0.5f * (1.0f - glm::dot(atlas.vertices[3 * t].normal, atlas.chartNormals[atlas.triangleChart[t]])), 0.0f, 1.0f);
  const gpu::Buffer depthBuffer(GLsizeiptr(triangleDepth.size() * sizeof(float)), triangleDepth.data(), 0);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer.id());
  glViewport(0, 0, atlas.width, atlas.height);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_PATCHES_TRIANGLE_DEPTH, depthBuffer.id());
  glDisable(GL_CULL_FACE);
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  const GLuint zero[4] = {0, 0, 0, 0};
  glClearNamedFramebufferuiv(framebuffer.id(), GL_COLOR, 0, zero);
  glClearNamedFramebufferfi(framebuffer.id(), GL_DEPTH_STENCIL, 0, 1.0f, 0);
  program.use();
  glProgramUniform2f(program.id(), IBRR_U_PATCHES_ATLAS_SIZE, float(atlas.width), float(atlas.height));
  mesh.drawAll();
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  std::vector<std::uint32_t> ids(std::size_t(atlas.width) * std::size_t(atlas.height));
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  gpu::countTextureReadback();
  glGetTextureImage(target.id(), 0, GL_RED_INTEGER, GL_UNSIGNED_INT, GLsizei(ids.size() * sizeof(std::uint32_t)),
                    ids.data());
  gpu::checkGlError("the lightmap patch pass");
  return ids;
}

// The point of triangle (a, b, c) nearest to p (Ericson, Real-Time Collision Detection §5.1.5), as
// barycentrics (weights of a, b, c). Works for degenerate triangles too.
glm::dvec3 closestBarycentrics(const glm::dvec2& p, const glm::dvec2& a, const glm::dvec2& b, const glm::dvec2& c) {
  const glm::dvec2 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = glm::dot(ab, ap), d2 = glm::dot(ac, ap);
  if (d1 <= 0.0 && d2 <= 0.0) return {1, 0, 0};
  const glm::dvec2 bp = p - b;
  const double d3 = glm::dot(ab, bp), d4 = glm::dot(ac, bp);
  if (d3 >= 0.0 && d4 <= d3) return {0, 1, 0};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    const double v = d1 / (d1 - d3);
    return {1 - v, v, 0};
  }
  const glm::dvec2 cp = p - c;
  const double d5 = glm::dot(ab, cp), d6 = glm::dot(ac, cp);
  if (d6 >= 0.0 && d5 <= d6) return {0, 0, 1};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    const double w = d2 / (d2 - d6);
    return {1 - w, 0, w};
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return {0, 1 - w, w};
  }
  const double denominator = va + vb + vc;
  if (!(std::abs(denominator) > 0.0)) return {1, 0, 0};
  const double v = vb / denominator, w = vc / denominator;
  return {1 - v - w, v, w};
}

// True when the texel square [x, x+1] × [y, y+1] and the triangle overlap with positive area
// (separating axes: the square's two, the triangle's three edge normals).
bool texelOverlapsTriangle(int x, int y, const glm::dvec2 corner[3]) {
  const glm::dvec2 lo = glm::min(corner[0], glm::min(corner[1], corner[2]));
  const glm::dvec2 hi = glm::max(corner[0], glm::max(corner[1], corner[2]));
  if (hi.x <= x || lo.x >= x + 1 || hi.y <= y || lo.y >= y + 1) return false;
  const glm::dvec2 centre(x + 0.5, y + 0.5);
  for (int k = 0; k < 3; ++k) {
    const glm::dvec2 edge = corner[(k + 1) % 3] - corner[k];
    const glm::dvec2 axis(-edge.y, edge.x);
    if (axis == glm::dvec2(0.0)) continue;
    double tMin = std::numeric_limits<double>::max(), tMax = -tMin;
    for (int j = 0; j < 3; ++j) {
      const double t = glm::dot(corner[j] - centre, axis);
      tMin = std::min(tMin, t);
      tMax = std::max(tMax, t);
    }
    const double radius = 0.5 * (std::abs(axis.x) + std::abs(axis.y));
    if (tMin >= radius || tMax <= -radius) return false;
  }
  return true;
}

glm::dvec2 cornerUv(const LightmapAtlas& atlas, std::size_t triangle, int k) {
  return glm::dvec2(atlas.vertices[3 * triangle + k].lightmapUv);
}

// Conservative pass for the charts that no texel centre fell in (see the top of the file).
void addThinCharts(const LightmapAtlas& atlas, std::vector<std::uint32_t>& ids, std::vector<std::uint8_t>& centre) {
  std::vector<std::uint32_t> texelsPerChart(atlas.chartCount, 0);
  for (std::uint32_t id : ids)
    if (id) ++texelsPerChart[atlas.triangleChart[id - 1]];
  std::vector<double> bestDistance(ids.size(), std::numeric_limits<double>::max());
  for (std::size_t t = 0; t < atlas.triangleCount(); ++t) {
    const std::uint32_t chart = atlas.triangleChart[t];
    if (texelsPerChart[chart] != 0 || !(atlas.chartArea[chart] > 0.0)) continue;
    const glm::dvec2 corner[3] = {cornerUv(atlas, t, 0), cornerUv(atlas, t, 1), cornerUv(atlas, t, 2)};
    const LightmapAtlas::Footprint& box = atlas.chartFootprints[chart];
    const glm::dvec2 lo = glm::min(corner[0], glm::min(corner[1], corner[2]));
    const glm::dvec2 hi = glm::max(corner[0], glm::max(corner[1], corner[2]));
    const int x0 = std::max(box.x, int(std::floor(lo.x))), x1 = std::min(box.x + box.width - 1, int(std::floor(hi.x)));
    const int y0 = std::max(box.y, int(std::floor(lo.y))), y1 = std::min(box.y + box.height - 1, int(std::floor(hi.y)));
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        if (!texelOverlapsTriangle(x, y, corner)) continue;
        const glm::dvec2 centrePoint(x + 0.5, y + 0.5);
        const glm::dvec3 l = closestBarycentrics(centrePoint, corner[0], corner[1], corner[2]);
        const double distance = glm::length(l.x * corner[0] + l.y * corner[1] + l.z * corner[2] - centrePoint);
        const std::size_t texel = std::size_t(y) * atlas.width + x;
        if (distance < bestDistance[texel]) {  // ties: the first triangle in scene order keeps it
          bestDistance[texel] = distance;
          ids[texel] = std::uint32_t(t) + 1;
          centre[texel] = 0;
        }
      }
  }
}

// Bilinear lookup with wrapping; texture coordinate v = 0 is the bottom row (OBJ/GL), rows are
// stored top-first (scene::Texture).
glm::vec3 sampleTexture(const scene::Texture& texture, glm::vec2 uv) {
  if (texture.width <= 0 || texture.height <= 0 || texture.texels.empty()) return glm::vec3(1.0f);
  const float x = uv.x * float(texture.width) - 0.5f, y = (1.0f - uv.y) * float(texture.height) - 0.5f;
  const float fx = std::floor(x), fy = std::floor(y);
  auto at = [&](int ix, int iy) {
    ix %= texture.width;
    iy %= texture.height;
    if (ix < 0) ix += texture.width;
    if (iy < 0) iy += texture.height;
    return texture.texels[std::size_t(iy) * texture.width + ix];
  };
  const int ix = int(fx), iy = int(fy);
  const glm::vec3 top = glm::mix(at(ix, iy), at(ix + 1, iy), x - fx);
  const glm::vec3 bottom = glm::mix(at(ix, iy + 1), at(ix + 1, iy + 1), x - fx);
  return glm::mix(top, bottom, y - fy);
}

// Maps an atlas triangle (scene order: instances, then mesh triangles) to its mesh and index.
struct TriangleSource {
  std::vector<std::size_t> firstOfInstance;  // prefix sums, one more than instances
  [[nodiscard]] std::pair<std::size_t, std::size_t> find(std::size_t triangle) const {
    const auto it = std::upper_bound(firstOfInstance.begin(), firstOfInstance.end(), triangle);
    const std::size_t instance = std::size_t(it - firstOfInstance.begin()) - 1;
    return {instance, triangle - firstOfInstance[instance]};
  }
};

}  // namespace

PatchList rasterizePatches(const scene::Scene& scene, const LightmapAtlas& atlas) {
  if (atlas.triangleCount() != scene.triangleCount())
    throw Error("lightmap patches: the atlas has " + std::to_string(atlas.triangleCount()) +
                " triangles but the scene " + std::to_string(scene.triangleCount()) + "; rebuild the atlas");
  std::vector<std::uint32_t> ids = rasterizeTriangleIds(atlas);
  PatchList patches;
  patches.width = atlas.width;
  patches.height = atlas.height;
  const std::size_t texelCount = patches.texelCount();
  patches.centreCovered.assign(texelCount, 1);
  addThinCharts(atlas, ids, patches.centreCovered);

  // Area weights J_t (world units² per texel²), and their sums per chart over its texels.
  const double nominal = 1.0 / (double(atlas.texelsPerUnit) * double(atlas.texelsPerUnit));
  std::vector<double> texelArea(atlas.triangleCount(), nominal);
  for (std::size_t t = 0; t < atlas.triangleCount(); ++t) {
    const LightmapVertex* v = &atlas.vertices[3 * t];
    const double world = 0.5 * glm::length(glm::cross(glm::dvec3(v[1].position) - glm::dvec3(v[0].position),
                                                      glm::dvec3(v[2].position) - glm::dvec3(v[0].position)));
    const glm::dvec2 e1 = glm::dvec2(v[1].lightmapUv) - glm::dvec2(v[0].lightmapUv);
    const glm::dvec2 e2 = glm::dvec2(v[2].lightmapUv) - glm::dvec2(v[0].lightmapUv);
    const double uv = 0.5 * std::abs(e1.x * e2.y - e1.y * e2.x);
    if (world > 0.0 && uv > 1e-9) texelArea[t] = world / uv;
  }
  std::vector<double> chartWeight(atlas.chartCount, 0.0);
  for (std::uint32_t id : ids)
    if (id) chartWeight[atlas.triangleChart[id - 1]] += texelArea[id - 1];
  TriangleSource source;
  source.firstOfInstance.push_back(0);
  for (const scene::MeshInstance& instance : scene.instances)
    source.firstOfInstance.push_back(source.firstOfInstance.back() + scene.meshes[instance.mesh].triangles.size());

  patches.position.assign(texelCount, glm::vec3(0.0f));
  patches.normal.assign(texelCount, glm::vec3(0.0f));
  patches.albedo.assign(texelCount, glm::vec3(0.0f));
  patches.emission.assign(texelCount, glm::vec3(0.0f));
  patches.area.assign(texelCount, 0.0f);
  patches.valid.assign(texelCount, 0);
  patches.triangle.assign(texelCount, PatchList::kNoTriangle);
  tbb::parallel_for(tbb::blocked_range<int>(0, atlas.height), [&](const tbb::blocked_range<int>& rows) {
    for (int y = rows.begin(); y < rows.end(); ++y)
      for (int x = 0; x < atlas.width; ++x) {
        const std::size_t texel = std::size_t(y) * atlas.width + x;
        if (ids[texel] == 0) {
          patches.centreCovered[texel] = 0;
          continue;
        }
        const std::size_t t = ids[texel] - 1;
        const LightmapVertex* corner = &atlas.vertices[3 * t];
        const glm::dvec2 a(corner[0].lightmapUv), b(corner[1].lightmapUv), c(corner[2].lightmapUv);
        const glm::dvec3 l = closestBarycentrics(glm::dvec2(x + 0.5, y + 0.5), a, b, c);
        patches.position[texel] =
            glm::vec3(l.x * glm::dvec3(corner[0].position) + l.y * glm::dvec3(corner[1].position) +
                      l.z * glm::dvec3(corner[2].position));
        patches.normal[texel] = corner[0].normal;
        const scene::Material& material = scene.materials[corner[0].material];
        glm::vec3 albedo = material.albedo;
        const auto [instance, meshTriangle] = source.find(t);
        const scene::TriangleMesh& mesh = scene.meshes[scene.instances[instance].mesh];
        if (material.albedoTexture >= 0 && std::size_t(material.albedoTexture) < scene.textures.size() &&
            mesh.texcoords.size() == mesh.positions.size()) {
          // ρ averaged over 4×4 points of the texel square, each moved onto the triangle.
          const glm::uvec3& indices = mesh.triangles[meshTriangle];
          const scene::Texture& texture = scene.textures[std::size_t(material.albedoTexture)];
          glm::vec3 sum(0.0f);
          for (int sy = 0; sy < 4; ++sy)
            for (int sx = 0; sx < 4; ++sx) {
              const glm::dvec2 point(x + (sx + 0.5) / 4.0, y + (sy + 0.5) / 4.0);
              const glm::dvec3 w = closestBarycentrics(point, a, b, c);
              const glm::vec2 uv = float(w.x) * mesh.texcoords[indices.x] + float(w.y) * mesh.texcoords[indices.y] +
                                   float(w.z) * mesh.texcoords[indices.z];
              sum += sampleTexture(texture, uv);
            }
          albedo *= sum / 16.0f;
        }
        patches.albedo[texel] = glm::clamp(albedo, glm::vec3(0.0f), glm::vec3(1.0f));
        patches.emission[texel] = material.emission;
        const std::uint32_t chart = atlas.triangleChart[t];
        patches.area[texel] = float(atlas.chartArea[chart] * texelArea[t] / chartWeight[chart]);
        patches.valid[texel] = 1;
        patches.triangle[texel] = std::uint32_t(t);
      }
  });
  return patches;
}

}  // namespace ibrr::lightmap
