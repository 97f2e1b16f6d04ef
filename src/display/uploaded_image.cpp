#include "display/uploaded_image.hpp"

#include <algorithm>

namespace ibrr::display {

void UploadedImage::upload(Image image) {
  if (m_texture.width() != image.width || m_texture.height() != image.height)
    m_texture = gpu::Texture(GL_RGBA32F, image.width, image.height);
  // GL's row 0 is the bottom one; images are top-first.
  std::vector<glm::vec3> bottomFirst(image.pixels.size());
  for (int y = 0; y < image.height; ++y)
    std::copy_n(image.pixels.begin() + std::ptrdiff_t(y) * image.width, image.width,
                bottomFirst.begin() + std::ptrdiff_t(image.height - 1 - y) * image.width);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTextureSubImage2D(m_texture.id(), 0, 0, 0, image.width, image.height, GL_RGB, GL_FLOAT, bottomFirst.data());
  m_image = std::move(image);
}

}  // namespace ibrr::display
