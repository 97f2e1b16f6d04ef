#pragma once
// Supersampling on a rotated grid: the layout of a supersampled frame and its resolve.
//
// A frame supersampled by N is N×N tiles, each a whole view at the output's size drawn with the camera moved
// by one of N² sub-pixel offsets (gpu/supersample.hpp draws them); an output pixel is the mean of its N²
// samples, one in each tile. The offsets form an N-rooks pattern on the N²×N² grid of sub-pixel cells with one
// sample in each of the pixel's N×N cells: sample (i, j) sits at
//   x = (i + (j + ½)/N) / N,   y = (j + (N − 1 − i + ½)/N) / N   of the pixel (from its top-left corner),
// so no two samples share a column or a row of cells. An edge along either image axis then passes the samples
// one at a time and a pixel it crosses takes one of N²+1 values, where the ordered N×N grid gives N+1; at N = 2
// this is the rotated grid of RGSS (the errors it changes: docs/commands.md, `ibrr render --supersample`).
#include "util/image.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <vector>

namespace ibrr {

inline constexpr int kMaxSupersample = 8;

// The sub-pixel offset of sample `tile` (i + N·j, the tile in column i and row j of the frame, row 0 at the top)
// from the pixel's centre, in pixels, x to the right and y down; (0, 0) for N = 1.
glm::vec2 supersampleOffset(int factor, int tile);

// The mean of a frame's factor × factor tiles (its size a multiple of the factor each way).
Image resolveSupersampled(const Image& frame, int factor);

// Per output pixel, 1 when any of its samples in the frame's mask (one byte a frame pixel) is set.
std::vector<std::uint8_t> resolveSupersampledMask(const std::vector<std::uint8_t>& frameMask, int frameWidth,
                                                  int frameHeight, int factor);

}  // namespace ibrr
