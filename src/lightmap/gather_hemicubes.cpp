#include "lightmap/gather_hemicubes.hpp"

#include "gpu/context.hpp"
#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "shaders/interface.glsl"
#include "util/error.hpp"
#include "util/morton.hpp"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <string>
#include <string_view>

namespace ibrr::lightmap {
namespace {

constexpr int kFacesPerHemicube = 5;

constexpr int kCullGroupSize = 64;    // lightmap_gather_cull.comp local_size_x
constexpr GLuint kSlotAttribute = 4;  // lightmap_gather.vert a_slot

// A chunk of the sorted triangle list as the cull pass reads it (std430, 48 bytes).
struct GpuChunk {
  glm::vec4 lower;  // box, world space
  glm::vec4 upper;
  std::uint32_t firstVertex = 0;
  std::uint32_t vertexCount = 0;
  std::uint32_t unused[2] = {0, 0};
};

// glMultiDrawArraysIndirect's command (16 bytes).
struct DrawArraysIndirectCommand {
  std::uint32_t count = 0;
  std::uint32_t instanceCount = 0;
  std::uint32_t first = 0;
  std::uint32_t baseInstance = 0;
};

// The atlas triangles sorted along a Morton curve of their centroids (spatially coherent chunks),
// and the chunks of `chunkTriangles` with their boxes.
struct ChunkedTriangles {
  std::vector<LightmapVertex> vertices;
  std::vector<GpuChunk> chunks;
};
ChunkedTriangles sortIntoChunks(const LightmapAtlas& atlas, std::size_t chunkTriangles) {
  const std::size_t triangles = atlas.vertices.size() / 3;
  glm::vec3 lower(std::numeric_limits<float>::max()), upper(-std::numeric_limits<float>::max());
  for (const LightmapVertex& v : atlas.vertices) {
    lower = glm::min(lower, v.position);
    upper = glm::max(upper, v.position);
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> keyed(triangles);  // (Morton code, triangle)
  for (std::size_t t = 0; t < triangles; ++t) {
    const glm::vec3 centroid =
        (atlas.vertices[3 * t].position + atlas.vertices[3 * t + 1].position + atlas.vertices[3 * t + 2].position) /
        3.0f;
    keyed[t] = {mortonCode(centroid, lower, upper - lower), std::uint32_t(t)};
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  ChunkedTriangles out;
  out.vertices.reserve(atlas.vertices.size());
  chunkTriangles = std::max<std::size_t>(chunkTriangles, 1);
  for (std::size_t begin = 0; begin < triangles; begin += chunkTriangles) {
    const std::size_t end = std::min(triangles, begin + chunkTriangles);
    GpuChunk chunk;
    chunk.firstVertex = std::uint32_t(out.vertices.size());
    glm::vec3 boxLower(std::numeric_limits<float>::max()), boxUpper(-std::numeric_limits<float>::max());
    for (std::size_t k = begin; k < end; ++k) {
      for (int corner = 0; corner < 3; ++corner) {
        const LightmapVertex& v = atlas.vertices[3 * std::size_t(keyed[k].second) + std::size_t(corner)];
        out.vertices.push_back(v);
        boxLower = glm::min(boxLower, v.position);
        boxUpper = glm::max(boxUpper, v.position);
      }
    }
    chunk.vertexCount = std::uint32_t(out.vertices.size()) - chunk.firstVertex;
    chunk.lower = glm::vec4(boxLower, 0.0f);
    chunk.upper = glm::vec4(boxUpper, 0.0f);
    out.chunks.push_back(chunk);
  }
  return out;
}

// Per-hemicube record read by the reduction (std430: 32 bytes).
struct GpuPatch {
  glm::ivec2 texel;
  glm::ivec2 unused;
  glm::vec4 albedo;
};

// Faces of the hemicube around the canonical axis +z, for the layout (rows) only.
std::vector<gpu::HemicubeFace> layerFaces(int resolution) {
  return gpu::hemicubeFaces(glm::vec3(0.0f, 0.0f, 1.0f), resolution, false);
}

// A 32-bit integer hash (PCG output permutation of an LCG step).
std::uint32_t hash32(std::uint32_t v) {
  std::uint32_t state = v * 747796405u + 2891336453u;
  const std::uint32_t word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

// Binds the records of items [first, first + count) of `buffer` (itemBytes per item) to an SSBO
// binding point as one range starting at an offset the driver accepts; the shader finds item
// `first` at record firstEntry of the range (records of entryBytes).
struct BoundRange {
  GLint firstEntry = 0;
};
BoundRange bindRange(const gpu::Buffer& buffer, GLuint binding, std::size_t first, std::size_t count,
                     std::size_t itemBytes, std::size_t entryBytes) {
  GLint alignment = 1;
  glGetIntegerv(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &alignment);
  const std::size_t offset = first * itemBytes;
  const std::size_t aligned = offset - offset % std::size_t(std::max(alignment, 1));
  glBindBufferRange(GL_SHADER_STORAGE_BUFFER, binding, buffer.id(), GLintptr(aligned),
                    GLsizeiptr(offset - aligned + count * itemBytes));
  return {GLint((offset - aligned) / entryBytes)};
}

void checkResolution(int resolution, int maxResolution) {
  if (resolution < 2 || resolution % 2 != 0 || resolution > maxResolution)
    throw Error("hemicube resolution " + std::to_string(resolution) + " must be even and at most " +
                std::to_string(maxResolution));
}

}  // namespace

std::vector<float> gatherMultiplierMap(int resolution) {
  checkResolution(resolution, 1 << 14);
  const int width = resolution;
  std::vector<float> weights(std::size_t(width) * gatherLayerRows(resolution), 0.0f);
  const float pixelSide = 2.0f / float(resolution);
  double sum = 0.0;
  for (const gpu::HemicubeFace& face : layerFaces(resolution)) {
    for (int row = 0; row < face.rows; ++row) {
      for (int x = 0; x < width; ++x) {
        // The pixel centre on the face plane at unit distance: (a, b, 1) in the face's frame. The
        // front face looks along the normal, so cosθ = 1/ρ; a half face's vertical axis b ∈ [0, 1]
        // is the normal, so cosθ = b/ρ (ρ = |(a, b, 1)|).
        const float a = -1.0f + (float(x) + 0.5f) * pixelSide;
        const float b = (face.half ? 0.0f : -1.0f) + (float(row) + 0.5f) * pixelSide;
        const float rho = std::sqrt(1.0f + a * a + b * b);
        const float cosTheta = face.half ? b / rho : 1.0f / rho;
        const float w = cosTheta * gpu::atlasPixelSolidAngle(face, resolution, x, row) / std::numbers::pi_v<float>;
        weights[std::size_t(face.firstRow + row) * width + x] = w;
        sum += w;
      }
    }
  }
  for (float& w : weights) w = float(double(w) / sum);
  return weights;
}

float gatherHemicubeRotation(std::uint32_t seed, std::uint32_t texelIndex) {
  const std::uint32_t h = hash32(texelIndex ^ hash32(seed + 0x9e3779b9u));
  return (float(h >> 8) * 0x1p-24f - 0.5f) * 2.0f * std::numbers::pi_v<float>;
}

std::vector<std::int32_t> seenTexelMap(const PatchList& patches) {
  const int width = patches.width;
  const int height = patches.height;
  std::vector<std::int32_t> map(patches.texelCount(), -1);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const std::size_t t = std::size_t(y) * width + x;
      if (patches.valid[t]) {
        map[t] = std::int32_t(t);
        continue;
      }
      // A padding texel: the nearest valid one of its 8 neighbours (edge before corner, then
      // scan order), as UVs rounding into it come from a chart next to it.
      int bestDistance = 3;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = x + dx, ny = y + dy, distance = dx * dx + dy * dy;
          if (nx < 0 || ny < 0 || nx >= width || ny >= height || distance == 0 || distance >= bestDistance) continue;
          const std::size_t neighbour = std::size_t(ny) * width + nx;
          if (!patches.valid[neighbour]) continue;
          bestDistance = distance;
          map[t] = std::int32_t(neighbour);
        }
      }
    }
  }
  return map;
}

GatherHemicubeSetup defaultHemicubeSetup(const scene::Scene& scene, const LightmapAtlas& atlas, std::uint32_t seed,
                                         bool randomRotation) {
  const float diagonal = std::max(scene.bounds().diagonal(), 1e-6f);
  const float texelSide = atlas.texelsPerUnit > 0.0f ? 1.0f / atlas.texelsPerUnit : 1e-3f * diagonal;
  GatherHemicubeSetup setup;
  // A tenth of a texel keeps the eye off its own surface and close to neighbours in corners; the
  // near plane at half of it never clips what the hemicube should see.
  setup.eyeOffset = 0.1f * texelSide;
  setup.nearPlane = 0.5f * setup.eyeOffset;
  setup.farPlane = 2.0f * diagonal;
  setup.seed = seed;
  setup.randomRotation = randomRotation;
  return setup;
}

GatherHemicubeRenderer::GatherHemicubeRenderer(const LightmapAtlas& atlas, const PatchList& patches,
                                               const std::vector<std::uint32_t>& hemicubeTexels,
                                               const GatherHemicubeSetup& setup, int maxResolution, int layers,
                                               GatherTarget target, std::size_t chunkTriangles)
    : m_maxResolution(maxResolution), m_layers(layers), m_target(target), m_hemicubeCount(hemicubeTexels.size()) {
  checkResolution(maxResolution, 4096);
  GLint maxLayers = 0;
  glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &maxLayers);
  if (layers < 1 || layers > maxLayers)
    throw Error("--layers " + std::to_string(layers) + ": hemicubes per batch must be in [1, " +
                std::to_string(maxLayers) + "] (GL_MAX_ARRAY_TEXTURE_LAYERS)");
  if (!gpu::hasGlExtension("GL_ARB_shader_viewport_layer_array"))
    throw Error(
        "the gathering solver needs GL_ARB_shader_viewport_layer_array (gl_Layer in the vertex shader), "
        "which this OpenGL driver lacks");

  // World → clip of every face of every hemicube, computed once: the eye and the rotation of a
  // texel's hemicube never change between iterations (nor with H: the viewport sets the size).
  std::vector<glm::mat4> matrices;
  matrices.reserve(hemicubeTexels.size() * kFacesPerHemicube);
  const float n = setup.nearPlane;
  for (const std::uint32_t texel : hemicubeTexels) {
    const glm::vec3 normal = glm::normalize(patches.normal[texel]);
    const glm::vec3 eye = patches.position[texel] + setup.eyeOffset * normal;
    const float angle = setup.randomRotation ? gatherHemicubeRotation(setup.seed, texel) : 0.0f;
    const glm::mat3 turn = glm::mat3(glm::rotate(glm::mat4(1.0f), angle, normal));
    for (const gpu::HemicubeFace& face : gpu::hemicubeFaces(normal, 2, false)) {
      const glm::vec3 forward = turn * face.forward;
      const glm::vec3 up = turn * face.up;
      const glm::mat4 projection = glm::frustum(-n, n, face.half ? 0.0f : -n, n, n, setup.farPlane);
      matrices.push_back(projection * glm::lookAt(eye, eye + forward, up));
    }
  }
  m_faceMatrices = gpu::Buffer(GLsizeiptr(std::max<std::size_t>(1, matrices.size()) * sizeof(glm::mat4)),
                               matrices.empty() ? nullptr : matrices.data(), 0);

  // The sorted, chunked triangles; the slot attribute (location 4, one value per instance, so a
  // command's baseInstance selects it); the command slots of a batch.
  const ChunkedTriangles chunked = sortIntoChunks(atlas, chunkTriangles);
  m_chunkCount = chunked.chunks.size();
  m_vertexCount = chunked.vertices.size();
  m_vertices = gpu::Buffer(GLsizeiptr(std::max<std::size_t>(chunked.vertices.size(), 1) * sizeof(LightmapVertex)),
                           chunked.vertices.empty() ? nullptr : chunked.vertices.data(), 0);
  m_chunks = gpu::Buffer(GLsizeiptr(std::max<std::size_t>(m_chunkCount, 1) * sizeof(GpuChunk)),
                         chunked.chunks.empty() ? nullptr : chunked.chunks.data(), 0);
  std::vector<std::uint32_t> slots(std::size_t(kFacesPerHemicube) * std::size_t(layers));
  for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = std::uint32_t(i);
  m_slots = gpu::Buffer(GLsizeiptr(slots.size() * sizeof(std::uint32_t)), slots.data(), 0);
  m_commands =
      gpu::Buffer(GLsizeiptr(std::max<std::size_t>(m_chunkCount * slots.size(), 1) * sizeof(DrawArraysIndirectCommand)),
                  nullptr, 0);
  m_vertexArray = gpu::VertexArray::create();
  const GLuint vao = m_vertexArray.id();
  glVertexArrayVertexBuffer(vao, 0, m_vertices.id(), 0, sizeof(LightmapVertex));
  glEnableVertexArrayAttrib(vao, 0);
  glVertexArrayAttribFormat(vao, 0, 3, GL_FLOAT, GL_FALSE, offsetof(LightmapVertex, position));
  glVertexArrayAttribBinding(vao, 0, 0);
  glEnableVertexArrayAttrib(vao, 2);
  glVertexArrayAttribFormat(vao, 2, 2, GL_FLOAT, GL_FALSE, offsetof(LightmapVertex, lightmapUv));
  glVertexArrayAttribBinding(vao, 2, 0);
  glVertexArrayVertexBuffer(vao, 1, m_slots.id(), 0, sizeof(std::uint32_t));
  glVertexArrayBindingDivisor(vao, 1, 1);
  glEnableVertexArrayAttrib(vao, kSlotAttribute);
  glVertexArrayAttribIFormat(vao, kSlotAttribute, 1, GL_UNSIGNED_INT, 0);
  glVertexArrayAttribBinding(vao, kSlotAttribute, 1);
  m_cullProgram = gpu::loadProgram({"lightmap_gather_cull.comp"});
  glProgramUniform1ui(m_cullProgram.id(), IBRR_U_GATHER_CHUNKS, GLuint(m_chunkCount));

  const int rows = gatherLayerRows(maxResolution);
  m_colour = gpu::Texture(target == GatherTarget::Radiance ? GL_RGBA32F : GL_R32UI, maxResolution, rows, layers);
  m_depth = gpu::Texture(GL_DEPTH_COMPONENT32F, maxResolution, rows, layers);
  m_framebuffer = gpu::Framebuffer::create();
  glNamedFramebufferTexture(m_framebuffer.id(), GL_COLOR_ATTACHMENT0, m_colour.id(), 0);  // layered
  glNamedFramebufferTexture(m_framebuffer.id(), GL_DEPTH_ATTACHMENT, m_depth.id(), 0);
  m_framebuffer.checkComplete("gather hemicube");
  m_program = gpu::loadProgram(
      {"lightmap_gather.vert", "lightmap_gather.frag"},
      target == GatherTarget::TexelId ? std::vector<std::string>{"GATHER_TEXEL_IDS"} : std::vector<std::string>{});
}

void GatherHemicubeRenderer::render(std::size_t first, int count, int resolution, GLuint seen) {
  checkResolution(resolution, m_maxResolution);
  if (count < 1 || count > m_layers || first + std::size_t(count) > m_hemicubeCount)
    throw Error("gather hemicube batch [" + std::to_string(first) + ", +" + std::to_string(count) +
                ") is outside the " + std::to_string(m_hemicubeCount) + " hemicubes or the " +
                std::to_string(m_layers) + " layers");
  gpu::DebugGroup group("gather hemicubes");
  glBindFramebuffer(GL_FRAMEBUFFER, m_framebuffer.id());
  // Clears every layer whole (a memset in llvmpipe, faster than a sub-image clear).
  const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const GLuint zeroId[4] = {0, 0, 0, 0};
  if (m_target == GatherTarget::Radiance)
    glClearNamedFramebufferfv(m_framebuffer.id(), GL_COLOR, 0, zero);
  else
    glClearNamedFramebufferuiv(m_framebuffer.id(), GL_COLOR, 0, zeroId);
  glClearNamedFramebufferfi(m_framebuffer.id(), GL_DEPTH_STENCIL, 0, 1.0f, 0);
  glBindFramebuffer(GL_FRAMEBUFFER, m_framebuffer.id());
  const std::vector<gpu::HemicubeFace> faces = layerFaces(resolution);
  for (GLuint f = 0; f < GLuint(faces.size()); ++f) {
    glViewportIndexedf(f, 0.0f, float(faces[f].firstRow), float(resolution), float(faces[f].rows));
    glScissorIndexed(f, 0, faces[f].firstRow, resolution, faces[f].rows);
  }
  glEnable(GL_SCISSOR_TEST);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  glDepthMask(GL_TRUE);
  glDisable(GL_CULL_FACE);  // back faces are drawn (they hide what is behind them) but see black
  glDisable(GL_BLEND);
  // Only this batch's matrices are bound (a small range, whatever the hemicube count).
  const BoundRange range = bindRange(m_faceMatrices, IBRR_B_GATHER_FACE_MATRICES, first, std::size_t(count),
                                     kFacesPerHemicube * sizeof(glm::mat4), sizeof(glm::mat4));
  const GLuint slotCount = GLuint(kFacesPerHemicube * count);
  if (m_chunkCount == 1) {
    // One chunk (a small scene): its box is the scene's, which a face hardly ever misses; one
    // instanced draw without the cull pass (slot = instance) is cheaper.
    m_program.use();
    glProgramUniform1i(m_program.id(), IBRR_U_GATHER_FIRST_ENTRY, range.firstEntry);
    glBindTextureUnit(IBRR_T_GATHER_SEEN, seen);
    glBindVertexArray(m_vertexArray.id());
    glDrawArraysInstanced(GL_TRIANGLES, 0, GLsizei(m_vertexCount), GLsizei(slotCount));
    glBindVertexArray(0);
    glDisable(GL_SCISSOR_TEST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return;
  }
  // Cull: one command per (face slot, chunk) of the batch, instanceCount 0 outside the frustum.
  const GLuint pairs = slotCount * GLuint(m_chunkCount);
  m_cullProgram.use();
  glProgramUniform1i(m_cullProgram.id(), IBRR_U_GATHER_FIRST_ENTRY, range.firstEntry);
  glProgramUniform1ui(m_cullProgram.id(), IBRR_U_GATHER_SLOTS, slotCount);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_GATHER_CHUNKS, m_chunks.id());
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_GATHER_COMMANDS, m_commands.id());
  glDispatchCompute((pairs + kCullGroupSize - 1) / kCullGroupSize, 1, 1);
  glMemoryBarrier(GL_COMMAND_BARRIER_BIT);
  m_program.use();
  glProgramUniform1i(m_program.id(), IBRR_U_GATHER_FIRST_ENTRY, range.firstEntry);
  glBindTextureUnit(IBRR_T_GATHER_SEEN, seen);
  glBindVertexArray(m_vertexArray.id());
  glBindBuffer(GL_DRAW_INDIRECT_BUFFER, m_commands.id());
  glMultiDrawArraysIndirect(GL_TRIANGLES, nullptr, GLsizei(pairs), 0);
  glBindBuffer(GL_DRAW_INDIRECT_BUFFER, 0);
  glBindVertexArray(0);
  glDisable(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

std::vector<glm::vec4> GatherHemicubeRenderer::readRadiance(int count, int resolution) const {
  const int rows = gatherLayerRows(resolution);
  std::vector<glm::vec4> pixels(std::size_t(resolution) * rows * count);
  glGetTextureSubImage(m_colour.id(), 0, 0, 0, 0, resolution, rows, count, GL_RGBA, GL_FLOAT,
                       GLsizei(pixels.size() * sizeof(glm::vec4)), pixels.data());
  return pixels;
}

std::vector<std::uint32_t> GatherHemicubeRenderer::readIds(int count, int resolution) const {
  const int rows = gatherLayerRows(resolution);
  std::vector<std::uint32_t> ids(std::size_t(resolution) * rows * count);
  glGetTextureSubImage(m_colour.id(), 0, 0, 0, 0, resolution, rows, count, GL_RED_INTEGER, GL_UNSIGNED_INT,
                       GLsizei(ids.size() * sizeof(std::uint32_t)), ids.data());
  return ids;
}

GatherReduction::GatherReduction(const PatchList& patches, const std::vector<std::uint32_t>& hemicubeTexels)
    : m_program(gpu::loadProgram({"lightmap_reduce.comp"})) {
  std::vector<GpuPatch> records;
  records.reserve(hemicubeTexels.size());
  for (const std::uint32_t texel : hemicubeTexels)
    records.push_back({glm::ivec2(int(texel % std::uint32_t(patches.width)), int(texel / std::uint32_t(patches.width))),
                       glm::ivec2(0), glm::vec4(patches.albedo[texel], 0.0f)});
  m_patches = gpu::Buffer(GLsizeiptr(std::max<std::size_t>(1, records.size()) * sizeof(GpuPatch)),
                          records.empty() ? nullptr : records.data(), 0);
}

const gpu::Buffer& GatherReduction::multiplierBuffer(int resolution) {
  for (const auto& [r, buffer] : m_multipliers)
    if (r == resolution) return buffer;
  const std::vector<float> weights = gatherMultiplierMap(resolution);
  m_multipliers.emplace_back(resolution, gpu::Buffer(GLsizeiptr(weights.size() * sizeof(float)), weights.data(), 0));
  return m_multipliers.back().second;
}

void GatherReduction::reduce(GLuint hemicubes, std::size_t first, int count, int resolution, GLuint base,
                             GLuint output) {
  gpu::DebugGroup group("gather reduction");
  const gpu::Buffer& weights = multiplierBuffer(resolution);
  m_program.use();
  const BoundRange range =
      bindRange(m_patches, IBRR_B_REDUCE_PATCHES, first, std::size_t(count), sizeof(GpuPatch), sizeof(GpuPatch));
  glProgramUniform1i(m_program.id(), IBRR_U_REDUCE_FIRST_ENTRY, range.firstEntry);
  glProgramUniform1i(m_program.id(), IBRR_U_REDUCE_RESOLUTION, resolution);
  glBindTextureUnit(IBRR_T_REDUCE_HEMICUBES, hemicubes);
  glBindTextureUnit(IBRR_T_REDUCE_BASE, base);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_REDUCE_MULTIPLIER, weights.id());
  glBindImageTexture(IBRR_I_REDUCE_OUTPUT, output, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
  glDispatchCompute(GLuint(count), 1, 1);  // one workgroup per hemicube
}

}  // namespace ibrr::lightmap
