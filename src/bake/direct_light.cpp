#include "bake/direct_light.hpp"

#include "bake/layer_points.hpp"
#include "ibrr/error.hpp"
#include "rays/projected_solid_angle.hpp"
#include "rays/sampler.hpp"
#include "rays/warp.hpp"
#include "util/stopwatch.hpp"

#include <glm/gtc/constants.hpp>

#include <array>
#include <atomic>
#include <cmath>
#include <optional>

namespace ibrr::bake {
namespace {

constexpr std::uint32_t kDirectStream = 0x44495243U;  // "DIRC"
constexpr std::uint32_t kCosineStream = 0xC05C05C0U;  // the cosine rays' set, beside the lights' (one per light)

// The points every layer takes; a layer takes the rest of its points only where their shadow rays disagree or
// their irradiances stray by more than kPointSpread of their mean from a plane across the pixel (planeMean).
constexpr std::uint32_t kFirstPoints = 4;
constexpr float kPointSpread = 0.02f;

// The first points of a layer: where in its pixel each lies, (u, v) ∈ [0, 1)², and its irradiance.
struct FirstPoints {
  std::array<glm::vec2, kFirstPoints> jitter;
  std::array<glm::vec3, kFirstPoints> irradiance;
};

// The mean over the pixel of an irradiance that is a plane across it, E(u, v) = a + b·(u − ½) + c·(v − ½): a, by
// least squares on the first points, where each point's E_r + E_g + E_b lies within kPointSpread of their mean from
// the fitted plane; nothing otherwise (a bend the plane misses, or points too near a line to tell). A plane, not
// the points' mean, because a lit layer's points are exact (closed forms) and its light may change steeply but
// evenly across the pixel (a wall just under a lamp's plane, where E grows with the depth below it): the plane's
// centre is the exact mean there, which four points' mean is not. The mean of a = Σ_k w_k E_k, w_k the first
// component of (XᵀX)⁻¹ x_k with rows x_k = (1, u_k − ½, v_k − ½).
std::optional<glm::vec3> planeMean(const FirstPoints& points) {
  glm::dmat3 normalMatrix(0.0);  // XᵀX, symmetric
  std::array<glm::dvec3, kFirstPoints> rows;
  for (std::uint32_t k = 0; k < kFirstPoints; ++k) {
    rows[k] = glm::dvec3(1.0, double(points.jitter[k].x) - 0.5, double(points.jitter[k].y) - 0.5);
    normalMatrix += glm::outerProduct(rows[k], rows[k]);
  }
  if (!(std::fabs(glm::determinant(normalMatrix)) > 1e-6)) return std::nullopt;
  const glm::dmat3 inverse = glm::inverse(normalMatrix);
  glm::dvec3 luminanceRhs(0.0);  // Xᵀ·L, L_k = E_r + E_g + E_b
  double luminanceMean = 0.0;
  for (std::uint32_t k = 0; k < kFirstPoints; ++k) {
    const glm::vec3& e = points.irradiance[k];
    const double luminance = double(e.x) + double(e.y) + double(e.z);
    luminanceRhs += luminance * rows[k];
    luminanceMean += luminance / kFirstPoints;
  }
  const glm::dvec3 plane = inverse * luminanceRhs;  // (a, b, c) of L
  glm::dvec3 centre(0.0);
  for (std::uint32_t k = 0; k < kFirstPoints; ++k) {
    const glm::vec3& e = points.irradiance[k];
    const double luminance = double(e.x) + double(e.y) + double(e.z);
    if (std::fabs(luminance - glm::dot(plane, rows[k])) > kPointSpread * luminanceMean) return std::nullopt;
    centre += (inverse * rows[k]).x * glm::dvec3(e);
  }
  return glm::vec3(centre);
}

// The shadow rays of a layer's points so far: how many reached their light and how many were blocked.
struct ShadowTally {
  std::uint32_t visible = 0, blocked = 0;
  void add(bool reached) { ++(reached ? visible : blocked); }
  bool agree() const { return visible == 0 || blocked == 0; }
};

// Cosine rays at a point near an emitter (nearAnEmitter): 16 give the furnace's layers π·L_e within 4.9% at worst
// along its edges (4 gave 16.6%).
constexpr std::uint32_t kCosineRaysNearAnEmitter = 16;

// The power heuristic's weight of a light sample (solid-angle pdf `lightPdf`, S of them per point and triangle)
// against the point's C cosine rays (pdf cosθx/π): (S·p_l)² / ((S·p_l)² + (C·p_c)²); 1 when the point casts none.
// The cosine ray that finds the same point takes 1 − this.
float misWeight(float lightPdf, float cosX, std::uint32_t lightSamples, std::uint32_t cosineRays) {
  const float l = float(lightSamples) * lightPdf;
  const float c = float(cosineRays) * cosX * glm::one_over_pi<float>();
  return l * l + c * c > 0.0f ? l * l / (l * l + c * c) : 1.0f;
}

// True when x lies within one longest edge of an emissive triangle's centre, in front of its plane: there its
// area samples meet the 1/r² of cosθx cosθy / r² (a wall of the furnace, an emissive mesh beside a wall), and
// cosine rays carry the light near x. Farther away the area samples alone are good, and the point casts no cosine
// ray; nor does a point behind the triangle's plane or in it (the ceiling around a lamp hung just below it), from
// which no ray reaches the emitting side: its cosine rays found nothing, and kept the layer from stopping early.
bool nearAnEmitter(const scene::Scene& scene, const glm::vec3& x) {
  for (const scene::EmissiveTriangle& t : scene.emitters()) {
    if (!(glm::dot(x - t.v0, t.normal) > 0.0f)) continue;
    const glm::vec3 centre = (t.v0 + t.v1 + t.v2) / 3.0f;
    const float edge2 = std::max(
        {glm::dot(t.v1 - t.v0, t.v1 - t.v0), glm::dot(t.v2 - t.v1, t.v2 - t.v1), glm::dot(t.v0 - t.v2, t.v0 - t.v2)});
    if (glm::dot(x - centre, x - centre) < edge2) return true;
  }
  return false;
}

// The irradiance at surface point x from light `light`; point k of the layer's points, whose light samples are
// numbers k·S .. k·S + S − 1 of the layer's Sobol set for that light (S = samplesPerLight).
glm::vec3 lightIrradiance(const rays::EmbreeScene& embree, const rays::LightSet& lights, std::uint32_t light,
                          const rays::SurfacePoint& x, std::uint32_t k, std::uint32_t layerStream,
                          std::uint32_t cosineRays, const DirectLightOptions& options, std::uint64_t& rays,
                          ShadowTally& tally) {
  const scene::Scene& scene = embree.scene();
  const std::uint32_t local = lights.localIndex(light);
  // I(ω)·cosθx/r² for a point or spot light at `position`, with its shadow ray.
  auto deltaLight = [&](const glm::vec3& position, auto intensityTowards) {
    const glm::vec3 toLight = position - x.position;
    const float r2 = glm::dot(toLight, toLight);
    if (!(r2 > 0.0f)) return glm::vec3(0.0f);
    const glm::vec3 omega = toLight / std::sqrt(r2);
    const float cosX = glm::dot(x.shadingNormal, omega);
    if (!(cosX > 0.0f) || glm::dot(x.geometricNormal, omega) <= 0.0f) return glm::vec3(0.0f);
    const glm::vec3 intensity = intensityTowards(-omega);
    if (!glm::any(glm::greaterThan(intensity, glm::vec3(0.0f)))) return glm::vec3(0.0f);
    ++rays;
    const bool visible = embree.visibleLight(embree.offsetOrigin(x, toLight), position, glm::vec3(0.0f));
    tally.add(visible);
    return visible ? intensity * (cosX / r2) : glm::vec3(0.0f);
  };
  switch (lights.kind(light)) {
    case rays::LightKind::Point: {
      const scene::PointLight& point = scene.pointLights[local];
      return deltaLight(point.position, [&](const glm::vec3&) { return point.intensity; });
    }
    case rays::LightKind::Spot: {
      const scene::SpotLight& spot = scene.spotLights[local];
      const glm::vec3 axis = glm::normalize(spot.direction);
      return deltaLight(spot.position, [&](const glm::vec3& away) {
        return spot.intensity * rays::spotProfile(spot, glm::dot(axis, away));
      });
    }
    case rays::LightKind::Triangle:
      break;
  }
  // An emissive triangle: Σ_s w_s · L_e cosθx cosθy / r² · A / S over uniform points y_s on it (pdf 1/A), each
  // MIS-weighted against the cosine rays that could have found the same point (misWeight). Where every shadow ray
  // reached the light (and no cosine ray shares the work), nothing of it is in shadow as far as they tell, and
  // the light's unshadowed integral in closed form, L_e·Ω⊥ (rays/projected_solid_angle.hpp), replaces their
  // estimate of it: exact in the lit regions, so that their layers' points agree and stop at kFirstPoints. That
  // holds as well where the triangle crosses the point's tangent plane (a box's side under a lamp that overhangs
  // it): the samples below it cast no ray and the closed form clips that part off (also where all of them fell
  // below: returning their estimate, 0, there would darken every such point by the chance of it). Where the
  // geometric normal drops a sample that the shading normal keeps (smooth shading), the estimate stays: the
  // closed form knows only the shading normal's horizon.
  const scene::EmissiveTriangle& emitter = scene.emitters()[local];
  const std::uint32_t stream = rays::hashCombine(layerStream, light);
  glm::vec3 sum(0.0f);
  std::uint32_t traced = 0, reached = 0;  // shadow rays cast, and those that reached the light
  bool belowGeometricHorizon = false;
  for (std::uint32_t s = 0; s < options.samplesPerLight; ++s) {
    const glm::vec2 b = rays::squareToTriangleBarycentrics(rays::sobolPair(k * options.samplesPerLight + s, stream, 0));
    const glm::vec3 y = b.x * emitter.v0 + b.y * emitter.v1 + (1.0f - b.x - b.y) * emitter.v2;
    const glm::vec3 toLight = y - x.position;
    const float r2 = glm::dot(toLight, toLight);
    if (!(r2 > 0.0f)) continue;
    const glm::vec3 omega = toLight / std::sqrt(r2);
    const float cosX = glm::dot(x.shadingNormal, omega);
    const float cosY = -glm::dot(emitter.normal, omega);
    if (!(cosX > 0.0f) || !(cosY > 0.0f)) continue;
    if (glm::dot(x.geometricNormal, omega) <= 0.0f) {
      belowGeometricHorizon = true;
      continue;
    }
    ++rays;
    ++traced;
    const bool visible = embree.visibleLight(embree.offsetOrigin(x, toLight), y, emitter.normal);
    tally.add(visible);
    if (!visible) continue;
    ++reached;
    const float lightPdf = r2 / (emitter.area * cosY);  // solid angle, one uniform point on the triangle
    sum += glm::vec3(cosX * cosY / r2 * misWeight(lightPdf, cosX, options.samplesPerLight, cosineRays));
  }
  const bool inFront = glm::dot(x.position - emitter.v0, emitter.normal) > 0.0f;  // Ω⊥ ignores which side emits
  if (cosineRays == 0 && inFront && reached == traced && !belowGeometricHorizon)
    return emitter.radiance *
           rays::projectedSolidAngle(x.position, x.shadingNormal, emitter.v0, emitter.v1, emitter.v2);
  return emitter.radiance * sum * (emitter.area / float(options.samplesPerLight));
}

// The emitted light the C cosine rays of point k find: Σ_c w_c · π·L_e(y_c) / C over C cosine-distributed
// directions (pdf cosθx/π), the hit emitter's own front side only. Together with the light
// samples (multiple importance sampling, power heuristic) this keeps an emitter that touches the surface (the
// furnace's walls, an emissive mesh beside a wall) from the 1/r² spikes of sampling its area alone.
glm::vec3 cosineSampledEmission(const rays::EmbreeScene& embree, const rays::LightSet& lights,
                                const rays::SurfacePoint& x, std::uint32_t k, std::uint32_t layerStream,
                                std::uint32_t cosineRays, const DirectLightOptions& options, std::uint64_t& rays) {
  const std::uint32_t stream = rays::hashCombine(layerStream, kCosineStream);
  const rays::Frame frame(x.shadingNormal);
  glm::vec3 sum(0.0f);
  for (std::uint32_t c = 0; c < cosineRays; ++c) {
    const glm::vec3 direction =
        frame.toWorld(rays::squareToCosineHemisphere(rays::sobolPair(k * cosineRays + c, stream, 0)));
    const float cosX = glm::dot(x.shadingNormal, direction);
    if (!(cosX > 0.0f) || glm::dot(x.geometricNormal, direction) <= 0.0f) continue;
    rays::Ray ray;
    ray.origin = embree.offsetOrigin(x, direction);
    ray.direction = direction;
    ++rays;
    const rays::Hit hit = embree.intersect(ray);
    if (!hit.valid()) continue;
    const std::int64_t light = lights.emitterAt(hit.instance, hit.triangle);
    if (light < 0) continue;
    const scene::EmissiveTriangle& emitter = embree.scene().emitters()[std::size_t(light)];
    const float cosY = -glm::dot(emitter.normal, direction);
    if (!(cosY > 0.0f)) continue;  // its back: it emits from the front only
    const float lightPdf = hit.t * hit.t / (emitter.area * cosY);
    const float weight =
        1.0f - misWeight(lightPdf, cosX, options.samplesPerLight, cosineRays);  // the cosine ray's share
    sum += emitter.radiance * (glm::pi<float>() * weight);
  }
  return sum / float(cosineRays);
}

// E of one layer: the mean over its points that found the surface; `foundSurface` false when none did.
glm::vec3 layerDirectLight(const rays::EmbreeScene& embree, const rays::LightSet& lights, const LayeredDepthCube& store,
                           std::uint32_t pixel, std::uint32_t layerIndex, const DirectLightOptions& options,
                           std::uint64_t& rays, bool& foundSurface) {
  const std::uint32_t stream = rays::hashCombine(rays::hashCombine(kDirectStream, options.seed), layerIndex);
  glm::vec3 sum(0.0f);
  std::uint32_t found = 0;
  ShadowTally tally;
  bool castCosineRays = false;
  FirstPoints first;
  for (std::uint32_t k = 0; k < options.points; ++k) {
    // A layer whose first points all found its surface, cast no cosine rays, whose shadow rays all agree (no
    // penumbra, no edge of the surface in the pixel) and whose points' irradiances lie on a plane across the
    // pixel stops there, with the plane's mean.
    if (k == kFirstPoints && found == kFirstPoints && !castCosineRays && tally.agree())
      if (const std::optional<glm::vec3> mean = planeMean(first)) {
        foundSurface = true;
        return *mean;
      }
    const glm::vec2 jitter = rays::sobolPair(k, stream, 0);
    const std::optional<rays::SurfacePoint> x = layerSurfacePoint(embree, store, pixel, layerIndex, jitter, rays);
    if (!x) continue;
    ++found;
    const std::uint32_t cosineRays =
        nearAnEmitter(embree.scene(), x->position) ? kCosineRaysNearAnEmitter : 0;
    castCosineRays = castCosineRays || cosineRays > 0;
    glm::vec3 point(0.0f);
    for (std::uint32_t light = 0; light < lights.size(); ++light)
      point += lightIrradiance(embree, lights, light, *x, k, stream, cosineRays, options, rays, tally);
    if (cosineRays > 0) point += cosineSampledEmission(embree, lights, *x, k, stream, cosineRays, options, rays);
    sum += point;
    if (k < kFirstPoints) {
      first.jitter[k] = jitter;
      first.irradiance[k] = point;
    }
  }
  foundSurface = found > 0;
  return found > 0 ? sum / float(found) : glm::vec3(0.0f);
}

}  // namespace

std::vector<glm::vec3> directLightPerLayer(const LayeredDepthCube& store, const rays::EmbreeScene& embree,
                                           const rays::LightSet& lights, const DirectLightOptions& options,
                                           DirectLightStats& stats, const ProgressObserver& progress) {
  IBRR_CHECK(options.points > 0 && options.samplesPerLight > 0, "the direct light needs points and samples");
  const Stopwatch time;
  std::atomic<std::uint64_t> done{0};
  const std::uint64_t total = store.layers().size();
  PerLayerValues direct = estimatePerLayer(
      store, 0, store.frame().pixelCount(),
      [&](std::uint32_t pixel, std::uint32_t layer, std::uint64_t& rays, bool& found) {
        return layerDirectLight(embree, lights, store, pixel, layer, options, rays, found);
      },
      [&](std::uint64_t count) {
        const std::uint64_t now = done.fetch_add(count) + count;
        if (progress) progress({kDirectLightPhase, now, total, "layers", {}});
      });
  stats.rays += direct.rays;
  stats.layersWithoutSurface = direct.layersWithoutSurface;
  stats.seconds = time.seconds();
  return std::move(direct.values);
}

}  // namespace ibrr::bake
