#include "lightmap/lightmap_display.hpp"

#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "util/error.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>

namespace ibrr::lightmap {
namespace {
constexpr GLint kUniformViewProjection = 16;  // lightmap_display.vert
constexpr GLint kUniformAtlasSize = 17;
constexpr GLuint kLightmapUnit = 0;
constexpr GLuint kMaterialEmissionBinding = 0;
constexpr std::uint32_t kNoChart = 0xffffffffu;
}  // namespace

std::vector<glm::vec3> dilateForDisplay(const LightmapAtlas& atlas, const PatchList& patches,
                                        const std::vector<glm::vec3>& radiance) {
  const int width = atlas.width, height = atlas.height;
  const std::size_t texelCount = std::size_t(width) * std::size_t(height);
  if (patches.texelCount() != texelCount || radiance.size() != texelCount)
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
      result[i] = radiance[i];
      filled[i] = 1;
      owner[i] = atlas.triangleChart[patches.triangle[i]];
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
  const std::vector<glm::vec3> dilated = dilateForDisplay(atlas, patches, lightmap.radiance);
  // Row y of the vector is texel row y, GL's first row: uploads as is.
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTextureSubImage2D(m_texture.id(), 0, 0, 0, atlas.width, atlas.height, GL_RGB, GL_FLOAT, dilated.data());
  glTextureParameteri(m_texture.id(), GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTextureParameteri(m_texture.id(), GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTextureParameteri(m_texture.id(), GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTextureParameteri(m_texture.id(), GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  std::vector<glm::vec4> emission(std::max<std::size_t>(scene.materials.size(), 1), glm::vec4(0.0f));
  for (std::size_t m = 0; m < scene.materials.size(); ++m) emission[m] = glm::vec4(scene.materials[m].emission, 0.0f);
  m_materialEmission = gpu::Buffer(GLsizeiptr(emission.size() * sizeof(glm::vec4)), emission.data(), 0);
}

void LightmapDisplay::draw(const glm::mat4& viewProjection) const {
  m_program.use();
  glProgramUniformMatrix4fv(m_program.id(), kUniformViewProjection, 1, GL_FALSE, glm::value_ptr(viewProjection));
  glProgramUniform2f(m_program.id(), kUniformAtlasSize, m_atlasSize.x, m_atlasSize.y);
  glBindTextureUnit(kLightmapUnit, m_texture.id());
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kMaterialEmissionBinding, m_materialEmission.id());
  m_mesh.drawAll();
}

LightmapDisplay::View LightmapDisplay::render(const glm::mat4& viewProjection, int width, int height) const {
  gpu::DebugGroup group("lightmap display");
  const gpu::Texture colour(GL_RGBA32F, width, height);
  const gpu::Renderbuffer depth(GL_DEPTH_COMPONENT32F, width, height);
  const gpu::Framebuffer framebuffer = gpu::Framebuffer::create();
  glNamedFramebufferTexture(framebuffer.id(), GL_COLOR_ATTACHMENT0, colour.id(), 0);
  glNamedFramebufferRenderbuffer(framebuffer.id(), GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depth.id());
  framebuffer.checkComplete("lightmap display target");
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer.id());
  glViewport(0, 0, width, height);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDisable(GL_CULL_FACE);
  glDisable(GL_BLEND);
  const float zero[4] = {0, 0, 0, 0};
  glClearNamedFramebufferfv(framebuffer.id(), GL_COLOR, 0, zero);
  glClearNamedFramebufferfi(framebuffer.id(), GL_DEPTH_STENCIL, 0, 1.0f, 0);
  draw(viewProjection);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  gpu::checkGlError("the lightmap display pass");
  const std::vector<glm::vec4> texels = gpu::readTextureTopFirst(colour.id(), width, height);
  View view;
  view.radiance = display::Image(width, height);
  view.covered.resize(texels.size());
  for (std::size_t i = 0; i < texels.size(); ++i) {
    view.radiance.pixels[i] = glm::vec3(texels[i]);
    view.covered[i] = texels[i].w > 0.0f ? 1 : 0;
  }
  return view;
}

}  // namespace ibrr::lightmap
