#include "display/keller.hpp"

#include "bake/bias_compensation.hpp"
#include "gpu/debug.hpp"
#include "gpu/shader.hpp"
#include "util/stopwatch.hpp"
#include "shaders/interface.glsl"

#include <glm/gtc/constants.hpp>
#include <glm/gtc/type_ptr.hpp>

namespace ibrr::display {
namespace {

// Adds ρ/π·H_miss to every pixel (bake/bias_compensation.hpp, compensateKellerPixels): the light the clamp took
// from this frame, as the store's compensation adds it to IBRR's layers.
void addBiasCompensation(const scene::Scene& scene, const GBuffer& gbuffer, const rays::VplSet& vpls, float clamp,
                         KellerResult& result) {
  const Stopwatch stopwatch;
  const rays::EmbreeScene embree(scene);
  const rays::LightSet lights(scene, "Keller's bias compensation");
  const std::vector<glm::vec4> positions = gbuffer.readRaw(GBufferChannel::Position);
  const std::vector<glm::vec4> normals = gbuffer.readRaw(GBufferChannel::Normal);
  const std::vector<glm::vec4> albedo = gbuffer.readRaw(GBufferChannel::Albedo);
  const std::vector<glm::vec3> missing = bake::compensateKellerPixels(
      positions, normals, vpls, embree, lights, clamp, kKellerBiasSamplesPerPixel, kKellerBiasVplSamples,
      result.compensationRays);
  for (std::size_t i = 0; i < missing.size(); ++i)
    result.radiance.pixels[i] += glm::vec3(albedo[i]) * missing[i] * glm::one_over_pi<float>();
  result.compensationSeconds = stopwatch.seconds();
  result.seconds += result.compensationSeconds;
}

}  // namespace

KellerResult renderKeller(const scene::Scene& scene, const gpu::SceneRenderer& renderer, const GBuffer& gbuffer,
                          const rays::VplSet& vpls, const bake::BakeOptions& options) {
  gpu::DebugGroup group("Keller instant radiosity");
  glFinish();
  const Stopwatch stopwatch;
  const int maxResolution = std::max(options.hemicubeResolution, options.indirectHemicubeResolution);
  gpu::HemicubeRenderer hemicubes(renderer, scene, maxResolution);
  const gpu::Program program = gpu::loadProgram({"keller_accumulate.comp"});
  // The accumulation starts as the emission L_e.
  gpu::Texture accumulation(GL_RGBA32F, gbuffer.width(), gbuffer.height());
  glCopyImageSubData(gbuffer.texture(GBufferChannel::Emission), GL_TEXTURE_2D, 0, 0, 0, 0, accumulation.id(),
                     GL_TEXTURE_2D, 0, 0, 0, 0, gbuffer.width(), gbuffer.height(), 1);
  const GLuint id = program.id();
  const float clamp = bake::geometryClampFor(scene, options, bake::kKellerClampDistances);
  glProgramUniform1f(id, IBRR_U_KELLER_CLAMP, clamp);
  glProgramUniform1f(id, IBRR_U_KELLER_BIAS_MIN, hemicubes.surfaceOffset() * 2.0f);
  gpu::HemicubeCapture capture;
  for (const rays::Vpl& vpl : vpls.vpls) {
    const int resolution = bake::hemicubeResolutionFor(vpl, options);
    hemicubes.draw(bake::hemicubeSourceFor(vpl, scene), resolution, capture);
    const gpu::HemicubeSource& source = capture.source;
    const glm::vec3 axis = source.profile == gpu::EmissionProfile::IsotropicPoint ? glm::vec3(0, 1, 0) : source.axis;
    glProgramUniform3fv(id, IBRR_U_KELLER_CENTRE, 1, glm::value_ptr(capture.centre));
    glProgramUniform3fv(id, IBRR_U_KELLER_AXIS, 1, glm::value_ptr(axis));
    glProgramUniform1i(id, IBRR_U_KELLER_PROFILE, int(source.profile));
    glProgramUniform2f(id, IBRR_U_KELLER_SPOT_COS, source.spotCosInner, source.spotCosOuter);
    glProgramUniform3fv(id, IBRR_U_KELLER_POWER, 1, glm::value_ptr(vpl.power));
    glProgramUniform1i(id, IBRR_U_KELLER_FACE_COUNT, int(capture.faces.size()));
    glProgramUniform1i(id, IBRR_U_KELLER_RESOLUTION, resolution);
    // One atlas texel spans about 2/H radians: the surface behind it may be that much farther
    // along the ray per unit distance.
    glProgramUniform1f(id, IBRR_U_KELLER_BIAS_SCALE, 2.0f / float(resolution));
    for (std::size_t f = 0; f < capture.faces.size(); ++f) {
      glProgramUniform1i(id, GLint(IBRR_U_KELLER_FACE_FIRST_ROW + f), capture.faces[f].firstRow);
      glProgramUniform1i(id, GLint(IBRR_U_KELLER_FACE_ROWS + f), capture.faces[f].rows);
      glProgramUniformMatrix4fv(id, GLint(IBRR_U_KELLER_FACE_VIEW_PROJECTION + f), 1, GL_FALSE,
                                glm::value_ptr(capture.faces[f].viewProjection));
    }
    glBindTextureUnit(IBRR_T_GBUFFER_POSITION, gbuffer.texture(GBufferChannel::Position));
    glBindTextureUnit(IBRR_T_GBUFFER_NORMAL, gbuffer.texture(GBufferChannel::Normal));
    glBindTextureUnit(IBRR_T_GBUFFER_ALBEDO, gbuffer.texture(GBufferChannel::Albedo));
    glBindTextureUnit(IBRR_T_KELLER_ATLAS_POSITION, hemicubes.positionTexture());
    glBindImageTexture(IBRR_I_KELLER_ACCUMULATION, accumulation.id(), 0, GL_FALSE, 0, GL_READ_WRITE, GL_RGBA32F);
    program.use();
    glDispatchCompute(GLuint((gbuffer.width() + 7) / 8), GLuint((gbuffer.height() + 7) / 8), 1);
    // The next VPL redraws the atlas and reads the accumulation.
    glMemoryBarrier(GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT | GL_FRAMEBUFFER_BARRIER_BIT);
  }
  glFinish();
  KellerResult result;
  result.vplCount = vpls.vpls.size();
  result.seconds = stopwatch.seconds();
  const std::vector<glm::vec4> texels = gpu::readTextureTopFirst(accumulation.id(), gbuffer.width(), gbuffer.height());
  result.radiance = Image(gbuffer.width(), gbuffer.height());
  for (std::size_t i = 0; i < texels.size(); ++i) result.radiance.pixels[i] = glm::vec3(texels[i]);
  gpu::checkGlError("the Keller pass");
  if (options.biasCompensation && clamp > 0.0f) addBiasCompensation(scene, gbuffer, vpls, clamp, result);
  return result;
}

}  // namespace ibrr::display
