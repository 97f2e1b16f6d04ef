#pragma once
// An image made on the CPU (Keller's frame, the CPU reconstruction, the viewer's error map) kept with its copy in
// an RGBA32F texture, so that it is shown like a frame drawn on the GPU.
#include "gpu/resources.hpp"
#include "util/image.hpp"

namespace ibrr::display {

class UploadedImage {
public:
  // Keeps the image and copies it into the texture (re-made when the size changes). Needs a current GL context.
  void upload(Image image);
  [[nodiscard]] GLuint texture() const { return m_texture.id(); }
  [[nodiscard]] const Image& image() const { return m_image; }  // row 0 at the top

private:
  Image m_image;
  gpu::Texture m_texture;  // GL row order (row 0 at the bottom)
};

}  // namespace ibrr::display
