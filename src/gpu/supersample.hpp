#pragma once
// Drawing a supersampled frame (util/supersample.hpp): its N×N tiles, each a whole view with the camera moved by
// its tile's sub-pixel offset.
#include "gpu/gl.hpp"
#include "shaders/interface.glsl"
#include "util/supersample.hpp"

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>

#include <cmath>

namespace ibrr::gpu {

// The view-projection of a width × height view moved by `offset` pixels (x right, y down): a shift of
// (2·dx/width, −2·dy/height) in normalised device coordinates, applied in clip space.
inline glm::mat4 shiftedByPixels(const glm::mat4& viewProjection, const glm::vec2& offset, int width, int height) {
  const glm::vec3 ndc(2.0f * offset.x / static_cast<float>(width), -2.0f * offset.y / static_cast<float>(height),
                      0.0f);
  return glm::translate(glm::mat4(1.0f), ndc) * viewProjection;
}

// With a frameWidth × frameHeight frame bound for drawing, for `program` (one of scene_uniforms.glsl): calls
// draw(view-projection) once for each of its factor × factor tiles, with the viewport and the scissor on the tile,
// the view moved by the tile's offset and the albedo textures' level of detail lowered by log2(factor) (a sample
// filters the texture over its 1/factor of a pixel); then leaves the viewport on the whole frame, the scissor
// test off and the bias 0. factor = 1 draws the frame once, unmoved.
template <class Draw>
void drawSupersampleTiles(GLuint program, const glm::mat4& viewProjection, int frameWidth, int frameHeight, int factor,
                          Draw&& draw) {
  if (factor == 1) {
    glViewport(0, 0, frameWidth, frameHeight);
    draw(viewProjection);
    return;
  }
  const int width = frameWidth / factor, height = frameHeight / factor;
  glProgramUniform1f(program, IBRR_U_TEXTURE_LOD_BIAS, -std::log2(static_cast<float>(factor)));
  glEnable(GL_SCISSOR_TEST);
  for (int tile = 0; tile < factor * factor; ++tile) {
    const int column = tile % factor, row = tile / factor;  // row 0 at the top of the frame; GL's y runs up
    const int x = column * width, y = (factor - 1 - row) * height;
    glViewport(x, y, width, height);
    glScissor(x, y, width, height);
    draw(shiftedByPixels(viewProjection, supersampleOffset(factor, tile), width, height));
  }
  glDisable(GL_SCISSOR_TEST);
  glViewport(0, 0, frameWidth, frameHeight);
  glProgramUniform1f(program, IBRR_U_TEXTURE_LOD_BIAS, 0.0f);
}

}  // namespace ibrr::gpu
