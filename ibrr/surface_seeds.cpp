#include "ibrr/surface_seeds.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace ibrr {
namespace {

// Triangles per parallel task: about kSeedTasks tasks, at most kMaxTrianglesPerTask triangles each, so that a scene
// of a few large triangles (the Cornell box's 32, a wall of 65 K pixels each) spreads them over the threads too.
// It depends on the triangle count alone, so the output order does not depend on the thread count.
constexpr std::size_t kSeedTasks = 256;
constexpr std::size_t kMaxTrianglesPerTask = 2048;
// A triangle whose plane makes less than this |cos| with an LDI's axis projects onto a sliver of that LDI;
// lifting a pixel point back onto it is ill-conditioned, and its samples go to another LDI anyway.
constexpr float kMinProjectedCos = 0.05f;
// Overlaps smaller than this (pixels²) are edges touching the pixel's border, or rounding.
constexpr float kMinOverlapPixels = 1e-6f;
// Clipped polygons have at most 3 + 4 vertices.
constexpr int kMaxClipVertices = 8;

struct Polygon2 {
  std::array<glm::vec2, kMaxClipVertices> v;
  int count = 0;
};

// Sutherland–Hodgman against one half-plane: keeps s·p[axis] ≤ s·bound (s = +1 or −1).
Polygon2 clipHalfPlane(const Polygon2& in, int axis, float bound, float sign) {
  Polygon2 out;
  for (int k = 0; k < in.count; ++k) {
    const glm::vec2& a = in.v[static_cast<std::size_t>(k)];
    const glm::vec2& b = in.v[static_cast<std::size_t>((k + 1) % in.count)];
    const float da = sign * (a[axis] - bound);  // ≤ 0 inside
    const float db = sign * (b[axis] - bound);
    if (da <= 0.0f && out.count < kMaxClipVertices) out.v[static_cast<std::size_t>(out.count++)] = a;
    if ((da < 0.0f) != (db < 0.0f) && da != db && out.count < kMaxClipVertices) {
      const float t = da / (da - db);
      out.v[static_cast<std::size_t>(out.count++)] = a + t * (b - a);
    }
  }
  return out;
}

// A point of triangle q inside pixel square [i, i+1] × [j, j+1], or false when they do not overlap: the mean
// of the vertices of the triangle clipped to the square (inside both, as both are convex).
bool pointInPixel(const std::array<glm::vec2, 3>& q, int i, int j, glm::vec2& point) {
  Polygon2 poly;
  poly.count = 3;
  for (int k = 0; k < 3; ++k) poly.v[static_cast<std::size_t>(k)] = q[static_cast<std::size_t>(k)];
  const float x0 = static_cast<float>(i), y0 = static_cast<float>(j);
  poly = clipHalfPlane(poly, 0, x0 + 1.0f, 1.0f);
  poly = clipHalfPlane(poly, 0, x0, -1.0f);
  poly = clipHalfPlane(poly, 1, y0 + 1.0f, 1.0f);
  poly = clipHalfPlane(poly, 1, y0, -1.0f);
  if (poly.count < 3) return false;
  // Overlap of positive area only: a triangle whose edge runs along the pixel's border does not seed it.
  float twiceArea = 0.0f;
  for (int k = 0; k < poly.count; ++k) {
    const glm::vec2& a = poly.v[static_cast<std::size_t>(k)];
    const glm::vec2& b = poly.v[static_cast<std::size_t>((k + 1) % poly.count)];
    twiceArea += a.x * b.y - a.y * b.x;
  }
  if (std::fabs(twiceArea) < kMinOverlapPixels * 2.0f) return false;
  glm::vec2 sum(0.0f);
  for (int k = 0; k < poly.count; ++k) sum += poly.v[static_cast<std::size_t>(k)];
  point = sum / static_cast<float>(poly.count);
  // Keep it strictly inside the pixel so the builder routes it here despite rounding.
  point = glm::clamp(point, glm::vec2(x0, y0) + 1e-4f, glm::vec2(x0, y0) + 0.9999f);
  return true;
}

void seedTriangle(const LdcFrame& frame, const SeedTriangle& tri, HemicubeSamples& out) {
  const glm::vec3 cross = glm::cross(tri.positions[1] - tri.positions[0], tri.positions[2] - tri.positions[0]);
  const float crossLength = glm::length(cross);
  if (!(crossLength > 0.0f) || !std::isfinite(crossLength)) return;
  const glm::vec3 front = cross / crossLength;  // geometric normal of the counter-clockwise side

  // Corner normals on the front side; a corner without a usable normal takes the geometric one.
  std::array<glm::vec3, 3> normals;
  unsigned ldiMask = 1u << dominantAxis(front);
  for (int k = 0; k < 3; ++k) {
    glm::vec3 n = tri.normals[k];
    const float len = glm::length(n);
    n = (len > 0.0f && std::isfinite(len)) ? n / len : front;
    if (glm::dot(n, front) < 0.0f) n = -n;
    normals[static_cast<std::size_t>(k)] = n;
    ldiMask |= 1u << dominantAxis(n);
  }

  const int res = frame.resolution();
  for (int ldi = 0; ldi < 3; ++ldi) {
    if (!(ldiMask & (1u << ldi)) || std::fabs(front[ldi]) < kMinProjectedCos) continue;
    std::array<glm::vec2, 3> q;
    for (int k = 0; k < 3; ++k) q[static_cast<std::size_t>(k)] = frame.toPixel(ldi, tri.positions[k]);
    // Barycentric coordinates in the image plane: p = q0 + s·(q1 − q0) + t·(q2 − q0).
    const glm::vec2 e1 = q[1] - q[0], e2 = q[2] - q[0];
    const float det = e1.x * e2.y - e1.y * e2.x;
    if (det == 0.0f) continue;
    const glm::vec2 lo = glm::min(q[0], glm::min(q[1], q[2]));
    const glm::vec2 hi = glm::max(q[0], glm::max(q[1], q[2]));
    const int i0 = std::max(0, static_cast<int>(std::floor(lo.x)));
    const int j0 = std::max(0, static_cast<int>(std::floor(lo.y)));
    const int i1 = std::min(res - 1, static_cast<int>(std::floor(hi.x)));
    const int j1 = std::min(res - 1, static_cast<int>(std::floor(hi.y)));
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i) {
        glm::vec2 point;
        if (!pointInPixel(q, i, j, point)) continue;
        const glm::vec2 d = point - q[0];
        const float s = (d.x * e2.y - d.y * e2.x) / det;
        const float t = (e1.x * d.y - e1.y * d.x) / det;
        const float r = 1.0f - s - t;
        const glm::vec3 position = r * tri.positions[0] + s * tri.positions[1] + t * tri.positions[2];
        const glm::vec3 normal = glm::normalize(r * normals[0] + s * normals[1] + t * normals[2]);
        if (!std::isfinite(normal.x) || dominantAxis(normal) != ldi) continue;  // another LDI's raster seeds it
        out.add(position, normal, glm::vec3(0.0f), 0.0f);
      }
  }
}

}  // namespace

void appendSurfaceSeeds(const LdcFrame& frame, std::span<const SeedTriangle> triangles, HemicubeSamples& out) {
  const std::size_t perTaskTriangles = std::clamp<std::size_t>(triangles.size() / kSeedTasks, 1, kMaxTrianglesPerTask);
  const std::size_t tasks = (triangles.size() + perTaskTriangles - 1) / perTaskTriangles;
  std::vector<HemicubeSamples> perTask(tasks);
  tbb::parallel_for(std::size_t(0), tasks, [&](std::size_t task) {
    const std::size_t end = std::min(triangles.size(), (task + 1) * perTaskTriangles);
    for (std::size_t t = task * perTaskTriangles; t < end; ++t) seedTriangle(frame, triangles[t], perTask[task]);
  });
  std::size_t total = out.size();
  for (const HemicubeSamples& part : perTask) total += part.size();
  out.reserve(total);
  for (const HemicubeSamples& part : perTask)
    for (std::size_t k = 0; k < part.size(); ++k)
      out.add(part.positions[k], part.normals[k], part.values[k], part.footprints[k]);
}

}  // namespace ibrr
