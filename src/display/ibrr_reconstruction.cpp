#include "display/ibrr_reconstruction.hpp"

#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "ibrr/octahedral.hpp"
#include "util/stopwatch.hpp"
#include "shaders/interface.glsl"

#include <tbb/parallel_for.h>
#include <glm/gtc/constants.hpp>

namespace ibrr::display {
namespace {

// Uniform locations of shaders/ldc_lookup.glsl.
constexpr GLint kUniformOrigin = IBRR_U_LDC_ORIGIN;
constexpr GLint kUniformInvPixel = IBRR_U_LDC_INV_PIXEL;
constexpr GLint kUniformResolution = IBRR_U_LDC_RESOLUTION;
constexpr GLint kUniformEpsDistance = IBRR_U_LDC_EPS_DISTANCE;
constexpr GLint kUniformMinCos = IBRR_U_LDC_MIN_COS;
constexpr GLint kUniformFilter = IBRR_U_LDC_FILTER;
constexpr GLint kUniformFilterRadius = IBRR_U_LDC_FILTER_RADIUS;

int filterCode(RetrievalFilter filter) {
  switch (filter) {
    case RetrievalFilter::Nearest:
      return 0;
    case RetrievalFilter::Average:
      return 1;
    case RetrievalFilter::Bilinear:
      return 2;
  }
  return 0;
}

void countHoles(Reconstruction& result) {
  result.holePixels = 0;
  for (std::uint8_t hole : result.holes) result.holePixels += hole;
}

}  // namespace

Reconstruction reconstructOnCpu(const GBuffer& gbuffer, const LayeredDepthCube& store,
                                const ReconstructionOptions& options) {
  // Position and coverage come from one readback of the position target (w = coverage).
  const std::vector<glm::vec4> position = gbuffer.readRaw(GBufferChannel::Position);
  const Image normal = gbuffer.read(GBufferChannel::Normal);
  const Image albedo = gbuffer.read(GBufferChannel::Albedo);
  const Image emission = gbuffer.read(GBufferChannel::Emission);
  const Stopwatch stopwatch;
  Reconstruction result;
  result.radiance = Image(gbuffer.width(), gbuffer.height());
  result.holes.assign(position.size(), 0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, position.size(), 1024), [&](const auto& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      if (position[i].w < 0.5f) continue;  // background
      const std::optional<glm::vec3> radiosity =
          store.radiosity(glm::vec3(position[i]), normal.pixels[i], options.filter, options.filterRadius);
      // L = L_e + ρ·B/π
      result.radiance.pixels[i] =
          emission.pixels[i] + albedo.pixels[i] * radiosity.value_or(glm::vec3(0.0f)) * glm::one_over_pi<float>();
      result.holes[i] = radiosity ? 0 : 1;
    }
  });
  result.seconds = stopwatch.seconds();
  countHoles(result);
  for (const glm::vec4& p : position) result.coveredPixels += p.w >= 0.5f ? 1 : 0;
  return result;
}

namespace {
// One vec4 per layer, as the shader reads the layers (at least one element: zero-size buffer storage is
// invalid).
template <class ToVec4>
std::vector<glm::vec4> perLayer(const LayeredDepthCube& store, ToVec4 toVec4) {
  std::vector<glm::vec4> values(std::max<std::size_t>(store.layers().size(), 1), glm::vec4(0.0f));
  tbb::parallel_for(std::size_t(0), store.layers().size(),
                    [&](std::size_t k) { values[k] = toVec4(store.layers()[k]); });
  return values;
}
gpu::Buffer vec4Buffer(const std::vector<glm::vec4>& values) {
  return gpu::Buffer(GLsizeiptr(values.size() * sizeof(glm::vec4)), values.data(), 0);
}
}  // namespace

GpuReconstructor::GpuReconstructor(const LayeredDepthCube& store)
    : m_store(store),
      m_offsets(GLsizeiptr(store.offsets().size_bytes()), store.offsets().data(), 0),
      // The plane test reads the planes alone, their normals decoded here so that the GPU matches with the
      // normals the CPU path decodes; the radiosity is read only for the matched layer.
      m_planes(vec4Buffer(perLayer(store, [](const PackedLayer& layer) {
        return glm::vec4(octDecode(layer.normal), layer.d);
      }))),
      m_radiosity(vec4Buffer(perLayer(store, [](const PackedLayer& layer) {
        return glm::vec4(layer.r, layer.g, layer.b, float(layer.count));
      }))),
      m_program(gpu::loadProgram({"ibrr_reconstruct.comp"})) {}

void GpuReconstructor::run(const GBuffer& gbuffer, const ReconstructionOptions& options) {
  gpu::DebugGroup group("IBRR reconstruction");
  if (m_output.width() != gbuffer.width() || m_output.height() != gbuffer.height())
    m_output = gpu::Texture(GL_RGBA32F, gbuffer.width(), gbuffer.height());
  const LdcFrame& frame = m_store.frame();
  const GLuint program = m_program.id();
  glProgramUniform3fv(program, kUniformOrigin, 1, &frame.origin().x);
  glProgramUniform1f(program, kUniformInvPixel, frame.invPixelSize());
  glProgramUniform1i(program, kUniformResolution, frame.resolution());
  glProgramUniform1f(program, kUniformEpsDistance, m_store.params().epsDistance);
  glProgramUniform1f(program, kUniformMinCos, 1.0f - m_store.params().epsNormal);
  glProgramUniform1i(program, kUniformFilter, filterCode(options.filter));
  glProgramUniform1i(program, kUniformFilterRadius, options.filterRadius);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_LDC_OFFSETS, m_offsets.id());
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_LDC_PLANES, m_planes.id());
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, IBRR_B_LDC_RADIOSITY, m_radiosity.id());
  glBindTextureUnit(IBRR_T_GBUFFER_POSITION, gbuffer.texture(GBufferChannel::Position));
  glBindTextureUnit(IBRR_T_GBUFFER_NORMAL, gbuffer.texture(GBufferChannel::Normal));
  glBindTextureUnit(IBRR_T_GBUFFER_ALBEDO, gbuffer.texture(GBufferChannel::Albedo));
  glBindTextureUnit(IBRR_T_GBUFFER_EMISSION, gbuffer.texture(GBufferChannel::Emission));
  glBindImageTexture(IBRR_I_RECONSTRUCT_OUTPUT, m_output.id(), 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA32F);
  m_program.use();
  glDispatchCompute(GLuint((gbuffer.width() + 7) / 8), GLuint((gbuffer.height() + 7) / 8), 1);
  glMemoryBarrier(GL_TEXTURE_UPDATE_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT);
  gpu::checkGlError("the IBRR reconstruction pass");
}

Reconstruction GpuReconstructor::reconstruct(const GBuffer& gbuffer, const ReconstructionOptions& options) {
  glFinish();
  const Stopwatch stopwatch;
  run(gbuffer, options);
  glFinish();
  const double seconds = stopwatch.seconds();
  Reconstruction result = readBack();
  result.seconds = seconds;
  return result;
}

Reconstruction GpuReconstructor::readBack() const {
  const std::vector<glm::vec4> texels = gpu::readTextureTopFirst(m_output.id(), m_output.width(), m_output.height());
  Reconstruction result;
  result.radiance = Image(m_output.width(), m_output.height());
  result.holes.assign(texels.size(), 0);
  // Alpha: 1 matched, 0.5 hole, 0 background (ibrr_reconstruct.comp).
  for (std::size_t i = 0; i < texels.size(); ++i) {
    result.radiance.pixels[i] = glm::vec3(texels[i]);
    result.holes[i] = (texels[i].w > 0.25f && texels[i].w < 0.75f) ? 1 : 0;
    result.coveredPixels += texels[i].w > 0.25f ? 1 : 0;
  }
  countHoles(result);
  return result;
}

}  // namespace ibrr::display
