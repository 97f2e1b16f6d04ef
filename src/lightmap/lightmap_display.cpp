#include "lightmap/lightmap_display.hpp"

#include "gpu/supersample.hpp"
#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/scene_renderer.hpp"
#include "gpu/shader.hpp"
#include "shaders/interface.glsl"
#include "util/error.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace ibrr::lightmap {
namespace {
constexpr std::uint32_t kNoChart = 0xffffffffu;
}  // namespace

std::vector<glm::vec3> dilateForDisplay(const LightmapAtlas& atlas, const PatchList& patches,
                                        const std::vector<glm::vec3>& radiance) {
  return dilateForDisplay(atlas, patches, radiance, patches.valid);
}

namespace {

// Gives each valid texel of a chart without one known texel (a black triangle hosting thin lit
// ones, whose own texels lost every centre to it) the incident radiance of the nearest known texel
// in the world that faces the same way (n·n' > 0.5), within kSearchCells cells of one texel size:
// H varies smoothly over a surface, and the chart's own texels cannot tell it.
void borrowFromNearestKnown(const LightmapAtlas& atlas, const PatchList& patches, IncidentRadiance& incident) {
  constexpr int kSearchCells = 3;
  std::vector<std::uint8_t> chartKnown(atlas.chartCount, 0);
  std::vector<std::size_t> orphans;
  for (std::size_t i = 0; i < incident.known.size(); ++i)
    if (incident.known[i]) chartKnown[atlas.triangleChart[patches.triangle[i]]] = 1;
  for (std::size_t i = 0; i < incident.known.size(); ++i)
    if (patches.valid[i] && !incident.known[i] && !chartKnown[atlas.triangleChart[patches.triangle[i]]])
      orphans.push_back(i);
  if (orphans.empty() || atlas.texelsPerUnit <= 0.0f) return;
  const float cellSize = 1.0f / atlas.texelsPerUnit;  // scene units
  const auto cellOf = [&](const glm::vec3& p) { return glm::ivec3(glm::floor(p / cellSize)); };
  const auto key = [](const glm::ivec3& c) {
    return (std::uint64_t(std::uint32_t(c.x) & 0x1fffffu) << 42) | (std::uint64_t(std::uint32_t(c.y) & 0x1fffffu) << 21) |
           std::uint64_t(std::uint32_t(c.z) & 0x1fffffu);
  };
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> knownByCell;
  for (std::size_t i = 0; i < incident.known.size(); ++i)
    if (incident.known[i]) knownByCell[key(cellOf(patches.position[i]))].push_back(i);
  for (std::size_t orphan : orphans) {
    const glm::ivec3 centre = cellOf(patches.position[orphan]);
    float nearest = std::numeric_limits<float>::max();
    std::size_t source = orphan;
    for (int dz = -kSearchCells; dz <= kSearchCells; ++dz)
      for (int dy = -kSearchCells; dy <= kSearchCells; ++dy)
        for (int dx = -kSearchCells; dx <= kSearchCells; ++dx) {
          const auto cell = knownByCell.find(key(centre + glm::ivec3(dx, dy, dz)));
          if (cell == knownByCell.end()) continue;
          for (std::size_t k : cell->second) {
            if (glm::dot(patches.normal[k], patches.normal[orphan]) <= 0.5f) continue;
            const float distance = glm::distance(patches.position[k], patches.position[orphan]);
            if (distance < nearest) {
              nearest = distance;
              source = k;
            }
          }
        }
    if (source != orphan) incident.values[orphan] = incident.values[source];
  }
  // Marked known only now, so that no orphan borrows from another orphan.
  for (std::size_t orphan : orphans)
    if (incident.values[orphan] != glm::vec3(0.0f)) incident.known[orphan] = 1;
}

}  // namespace

IncidentRadiance incidentRadiance(const LightmapAtlas& atlas, const PatchList& patches,
                                  const std::vector<glm::vec3>& radiance) {
  const std::size_t texelCount = patches.texelCount();
  if (radiance.size() != texelCount)
    throw Error("lightmap display: the radiance (" + std::to_string(radiance.size()) + " texels) does not match the " +
                std::to_string(texelCount) + " texels of the patch list");
  IncidentRadiance incident{std::vector<glm::vec3>(texelCount, glm::vec3(0.0f)),
                            std::vector<std::uint8_t>(texelCount, 0)};
  for (std::size_t i = 0; i < texelCount; ++i) {
    const glm::vec3& albedo = patches.albedo[i];
    if (!patches.valid[i]) continue;
    glm::vec3 value(0.0f);
    float knownSum = 0.0f;
    int knownChannels = 0;
    for (int c = 0; c < 3; ++c)
      if (albedo[c] >= kMinimumDisplayAlbedo) {
        value[c] = std::max((radiance[i][c] - patches.emission[i][c]) / albedo[c], 0.0f);
        knownSum += value[c];
        ++knownChannels;
      }
    if (knownChannels == 0) continue;
    // A channel the texel hardly reflects (a material such as ρ = (0.5, 0.5, 0)) shows ρ·H ≈ 0
    // whatever H is: it takes the mean of the known channels, so a pixel whose texture does
    // reflect it a little gets plausible light rather than none.
    for (int c = 0; c < 3; ++c)
      if (albedo[c] < kMinimumDisplayAlbedo) value[c] = knownSum / float(knownChannels);
    incident.values[i] = value;
    incident.known[i] = 1;
  }
  borrowFromNearestKnown(atlas, patches, incident);
  return incident;
}

std::vector<glm::vec3> dilateForDisplay(const LightmapAtlas& atlas, const PatchList& patches,
                                        const std::vector<glm::vec3>& radiance,
                                        const std::vector<std::uint8_t>& known) {
  const int width = atlas.width, height = atlas.height;
  const std::size_t texelCount = std::size_t(width) * std::size_t(height);
  if (patches.texelCount() != texelCount || radiance.size() != texelCount || known.size() != texelCount)
    throw Error("lightmap display: the radiance (" + std::to_string(radiance.size()) + " texels) and patch list (" +
                std::to_string(patches.texelCount()) + ") do not match the " + std::to_string(width) + "×" +
                std::to_string(height) + " atlas");
  // Owners: each chart's footprint grown by max(1, padding/2) texels (lower chart ids first where
  // they meet, which only happens with a padding of 1).
  std::vector<std::uint32_t> owner(texelCount, kNoChart);
  const int growth = std::max(1, atlas.paddingTexels / 2);
  for (std::uint32_t c = 0; c < atlas.chartFootprints.size(); ++c) {
    const LightmapAtlas::Footprint& f = atlas.chartFootprints[c];
    for (int y = std::max(0, f.y - growth); y < std::min(height, f.y + f.height + growth); ++y)
      for (int x = std::max(0, f.x - growth); x < std::min(width, f.x + f.width + growth); ++x) {
        std::uint32_t& o = owner[std::size_t(y) * width + x];
        if (o == kNoChart) o = c;
      }
  }
  // Valid texels belong to their triangle's chart whatever the footprints say.
  std::vector<glm::vec3> result(texelCount, glm::vec3(0.0f));
  std::vector<std::uint8_t> filled(texelCount, 0);
  for (std::size_t i = 0; i < texelCount; ++i)
    if (patches.valid[i]) {
      owner[i] = atlas.triangleChart[patches.triangle[i]];
      if (!known[i]) continue;
      result[i] = radiance[i];
      filled[i] = 1;
    }
  // Rings: the candidates are unfilled owned texels next to a texel filled in an earlier ring.
  auto forNeighbours = [&](std::size_t i, auto&& visit) {
    const int x = int(i % std::size_t(width)), y = int(i / std::size_t(width));
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if ((dx == 0 && dy == 0) || x + dx < 0 || x + dx >= width || y + dy < 0 || y + dy >= height) continue;
        visit(std::size_t(y + dy) * width + std::size_t(x + dx));
      }
  };
  std::vector<std::size_t> frontier, next;
  std::vector<std::uint8_t> queued(texelCount, 0);
  for (std::size_t i = 0; i < texelCount; ++i)
    if (filled[i])
      forNeighbours(i, [&](std::size_t n) {
        if (!filled[n] && !queued[n] && owner[n] == owner[i]) {
          queued[n] = 1;
          frontier.push_back(n);
        }
      });
  std::vector<glm::vec3> values;
  while (!frontier.empty()) {
    std::sort(frontier.begin(), frontier.end());  // the same order whatever the discovery order
    values.assign(frontier.size(), glm::vec3(0.0f));
    for (std::size_t k = 0; k < frontier.size(); ++k) {
      const std::size_t i = frontier[k];
      glm::vec3 sum(0.0f);
      int count = 0;
      forNeighbours(i, [&](std::size_t n) {
        if (filled[n] && owner[n] == owner[i]) {
          sum += result[n];
          ++count;
        }
      });
      values[k] = sum / float(std::max(count, 1));
    }
    next.clear();
    for (std::size_t k = 0; k < frontier.size(); ++k) {
      result[frontier[k]] = values[k];
      filled[frontier[k]] = 1;
    }
    for (std::size_t i : frontier)
      forNeighbours(i, [&](std::size_t n) {
        if (!filled[n] && !queued[n] && owner[n] == owner[i]) {
          queued[n] = 1;
          next.push_back(n);
        }
      });
    frontier.swap(next);
  }
  return result;
}

std::vector<glm::vec3> displayIncidentRadiance(const LightmapAtlas& atlas, const PatchList& patches,
                                               const std::vector<glm::vec3>& radiance) {
  const IncidentRadiance incident = incidentRadiance(atlas, patches, radiance);
  return dilateForDisplay(atlas, patches, incident.values, incident.known);
}

LightmapDisplay::LightmapDisplay(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                 const Lightmap& lightmap)
    : m_mesh(atlas),
      m_texture(GL_RGB32F, std::max(atlas.width, 1), std::max(atlas.height, 1)),
      m_program(gpu::loadProgram({"lightmap_display.vert", "lightmap_display.frag"})),
      m_atlasSize(atlas.width, atlas.height) {
  if (lightmap.width != atlas.width || lightmap.height != atlas.height)
    throw Error("lightmap display: the lightmap is " + std::to_string(lightmap.width) + "×" +
                std::to_string(lightmap.height) + " texels but the atlas " + std::to_string(atlas.width) + "×" +
                std::to_string(atlas.height) + "; bake the lightmap again for this scene");
  const std::vector<glm::vec3> dilated = displayIncidentRadiance(atlas, patches, lightmap.radiance);
  // Row y of the vector is texel row y, GL's first row: uploads as is.
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTextureSubImage2D(m_texture.id(), 0, 0, 0, atlas.width, atlas.height, GL_RGB, GL_FLOAT, dilated.data());
  glTextureParameteri(m_texture.id(), GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTextureParameteri(m_texture.id(), GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTextureParameteri(m_texture.id(), GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(m_texture.id(), GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  m_materials = scene.materials;
  m_albedoTextures = gpu::uploadAlbedoTextures(scene);
}

void LightmapDisplay::draw(const glm::mat4& viewProjection) const {
  m_program.use();
  glProgramUniformMatrix4fv(m_program.id(), gpu::kUniformViewProjection, 1, GL_FALSE, glm::value_ptr(viewProjection));
  glProgramUniform2f(m_program.id(), IBRR_U_LIGHTMAP_ATLAS_SIZE, m_atlasSize.x, m_atlasSize.y);
  glBindTextureUnit(IBRR_T_LIGHTMAP_INCIDENT, m_texture.id());
  m_mesh.drawByMaterial([&](std::uint32_t material) {
    gpu::setMaterialUniforms(m_program.id(), m_materials.at(material), material, m_albedoTextures);
  });
}

LightmapViewTarget::LightmapViewTarget(int width, int height)
    : m_width(width),
      m_height(height),
      m_colour(GL_RGBA32F, width, height),
      m_depth(GL_DEPTH_COMPONENT32F, width, height),
      m_framebuffer(gpu::Framebuffer::create()) {
  glNamedFramebufferTexture(m_framebuffer.id(), GL_COLOR_ATTACHMENT0, m_colour.id(), 0);
  glNamedFramebufferRenderbuffer(m_framebuffer.id(), GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, m_depth.id());
  m_framebuffer.checkComplete("lightmap display target", width, height);
}

void LightmapDisplay::drawView(const glm::mat4& viewProjection, const LightmapViewTarget& target,
                               int supersample) const {
  gpu::DebugGroup group("lightmap display");
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer());
  glDisable(GL_CULL_FACE);
  glDisable(GL_BLEND);
  const float zero[4] = {0, 0, 0, 0};
  glClearNamedFramebufferfv(target.framebuffer(), GL_COLOR, 0, zero);
  {
    const gpu::ReversedDepthPass reversedDepth(target.framebuffer());
    gpu::drawSupersampleTiles(m_program.id(), viewProjection, target.width(), target.height(), supersample,
                              [&](const glm::mat4& tileViewProjection) { draw(tileViewProjection); });
  }
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  gpu::checkGlError("the lightmap display pass");
}

LightmapDisplay::View LightmapDisplay::render(const glm::mat4& viewProjection, int width, int height,
                                              int supersample) const {
  const LightmapViewTarget target(width, height);
  drawView(viewProjection, target, supersample);
  return readView(target);
}

LightmapDisplay::View LightmapDisplay::readView(const LightmapViewTarget& target) {
  const std::vector<glm::vec4> texels = gpu::readTextureTopFirst(target.texture(), target.width(), target.height());
  View view;
  view.radiance = Image(target.width(), target.height());
  view.covered.resize(texels.size());
  for (std::size_t i = 0; i < texels.size(); ++i) {
    view.radiance.pixels[i] = glm::vec3(texels[i]);
    view.covered[i] = texels[i].w > 0.0f ? 1 : 0;
  }
  return view;
}

}  // namespace ibrr::lightmap
