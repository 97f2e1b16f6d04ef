// The reference path tracer against known answers: the furnace, the direct light of a rectangle
// light (closed-form form factor), its own variance estimates, and 1/sqrt(spp) convergence.
#include "metrics/metrics.hpp"
#include "rays/reference.hpp"
#include "test_scenes.hpp"
#include "util/error.hpp"

#include <catch2/catch.hpp>
#include <tbb/task_arena.h>

#include <cmath>

using namespace ibrr;
using namespace ibrr::rays;

namespace {

ReferenceOptions quiet(int size, std::uint32_t spp, std::uint32_t seed = 0) {
  ReferenceOptions options;
  options.width = options.height = size;
  options.spp = spp;
  options.seed = seed;
  options.showProgress = false;
  return options;
}

// Σ(x−y)² over Σ of both variance estimates: 1 when the estimates predict the error exactly.
double errorOverPredicted(const ReferenceImage& a, const ReferenceImage& b) {
  double squared = 0.0, predicted = 0.0;
  for (std::size_t i = 0; i < a.radiance.pixels.size(); ++i) {
    const glm::dvec3 d = glm::dvec3(a.radiance.pixels[i]) - glm::dvec3(b.radiance.pixels[i]);
    squared += glm::dot(d, d);
    const glm::dvec3 v = glm::dvec3(a.variance.pixels[i]) + glm::dvec3(b.variance.pixels[i]);
    predicted += v.r + v.g + v.b;
  }
  return squared / predicted;
}

// The fraction of pixel channels whose difference from `expected` (an image, or the second render)
// lies within k estimated standard deviations. With K = spp/16 batch means per pixel the
// standardised difference follows Student's t with about K − 1 degrees of freedom (2K − 2 for two
// renders), so the fractions are a little below the normal 95.4% (k = 2) and 99.7% (k = 3).
double fractionWithin(const ReferenceImage& a, const Image& expected, const Image* otherVariance,
                      double k) {
  std::size_t inside = 0, total = 0;
  for (std::size_t i = 0; i < a.radiance.pixels.size(); ++i) {
    for (int c = 0; c < 3; ++c) {
      double variance = a.variance.pixels[i][c] + (otherVariance ? otherVariance->pixels[i][c] : 0.0f);
      const double d = std::abs(double(a.radiance.pixels[i][c]) - expected.pixels[i][c]);
      if (variance == 0.0 && d == 0.0) continue;  // e.g. pixels inside the light: no noise at all
      ++total;
      inside += d <= k * std::sqrt(variance) ? 1 : 0;
    }
  }
  return double(inside) / double(total);
}

double sumSquares(const Image& image) {
  double s = 0.0;
  for (const glm::vec3& p : image.pixels) s += glm::dot(glm::dvec3(p), glm::dvec3(p));
  return s;
}

double sumVariance(const Image& image) {
  double s = 0.0;
  for (const glm::vec3& p : image.pixels) s += double(p.r) + p.g + p.b;
  return s;
}

}  // namespace

TEST_CASE("furnace: the reference gives E/(1−a) within 1% over the image", "[rays][reference][furnace]") {
  const float albedo = 0.5f;
  const glm::vec3 emission(1.0f, 0.5f, 0.25f);
  const scene::Scene scene = test::makeFurnace(albedo, emission);
  const EmbreeScene embree(scene);
  const ReferenceImage image = renderReference(embree, quiet(48, 256));
  const glm::dvec3 expected = glm::dvec3(emission) / (1.0 - albedo);
  glm::dvec3 mean(0.0);
  for (const glm::vec3& p : image.radiance.pixels) mean += glm::dvec3(p);
  mean /= double(image.radiance.pixels.size());
  INFO("mean " << mean.r << " " << mean.g << " " << mean.b);
  for (int c = 0; c < 3; ++c) CHECK(mean[c] == Approx(expected[c]).epsilon(0.01));
  // Each pixel agrees with E/(1 − a) within its own error bar about as often as t statistics with
  // 15 degrees of freedom say (2σ: 93.6%, 3σ: 99.1%); Russian roulette makes the samples skewed, so
  // a little less.
  const Image exact(48, 48, glm::vec3(expected));
  const double within2 = fractionWithin(image, exact, nullptr, 2.0);
  const double within3 = fractionWithin(image, exact, nullptr, 3.0);
  INFO("within 2σ: " << within2 << ", within 3σ: " << within3);
  CHECK(within2 > 0.89);
  CHECK(within2 < 0.97);
  CHECK(within3 > 0.97);
  CHECK(image.spp == 256);
  CHECK(image.rayCount > 0);
}

TEST_CASE("direct light from a rectangle light matches the closed-form form factor within 1%",
          "[rays][reference][analytic]") {
  const test::PlaneUnderLight setup;
  const scene::Scene scene = test::makePlaneUnderLight(setup);
  const EmbreeScene embree(scene);
  const LightSet lights(scene, "the test");
  const PathTracer tracer(embree, lights);
  std::uint64_t rays = 0;
  std::uint32_t stream = 11;
  for (const glm::vec2 p : {glm::vec2(0.0f), glm::vec2(0.3f, 0.1f), glm::vec2(-0.7f, 0.4f), glm::vec2(1.5f, -1.0f)}) {
    // Aim at p from the side, below the light, so the ray does not pass the light's back.
    Ray ray;
    ray.origin = glm::vec3(p, 0.0f) + glm::vec3(2.0f, 1.0f, 0.4f);
    ray.direction = glm::normalize(glm::vec3(p, 0.0f) - ray.origin);
    constexpr std::uint32_t kSamples = 1u << 13;
    glm::dvec3 sum(0.0);
    for (std::uint32_t i = 0; i < kSamples; ++i) {
      SampleStream samples(++stream * 7919u, i);
      sum += glm::dvec3(tracer.radiance(ray, samples, rays));
    }
    const glm::dvec3 radiance = sum / double(kSamples);
    // L_out = ρ/π · E = ρ/π · L·π·F = ρ·L·F.
    const double form = test::formFactor(setup, p.x, p.y);
    for (int c = 0; c < 3; ++c) {
      const double expected = double(setup.albedo[c]) * setup.radiance[c] * form;
      INFO("point " << p.x << "," << p.y << " channel " << c << ": " << radiance[c] << " expected " << expected);
      CHECK(radiance[c] == Approx(expected).epsilon(0.01));
    }
  }
}

TEST_CASE("the reference is deterministic for a seed on any thread count", "[rays][reference]") {
  const scene::Scene scene = test::makeCornellBox();
  const EmbreeScene embree(scene);
  const ReferenceImage all = renderReference(embree, quiet(24, 8, 5));
  ReferenceImage one;
  tbb::task_arena arena(1);
  arena.execute([&] { one = renderReference(embree, quiet(24, 8, 5)); });
  CHECK(all.radiance.pixels == one.radiance.pixels);
  CHECK(all.variance.pixels == one.variance.pixels);
  const ReferenceImage other = renderReference(embree, quiet(24, 8, 6));
  CHECK(all.radiance.pixels != other.radiance.pixels);
  // A render stopped by its time budget equals the fixed-count render with the count it reached.
  ReferenceOptions timed = quiet(24, 0, 5);
  timed.seconds = 0.2;
  const ReferenceImage byTime = renderReference(embree, timed);
  REQUIRE(byTime.spp >= 1);
  const ReferenceImage same = renderReference(embree, quiet(24, byTime.spp, 5));
  CHECK(byTime.radiance.pixels == same.radiance.pixels);
}

TEST_CASE("Cornell: renders with two seeds differ by what their variance estimates predict",
          "[rays][reference][statistics]") {
  const scene::Scene scene = test::makeCornellBox();
  const EmbreeScene embree(scene);
  const ReferenceImage a = renderReference(embree, quiet(48, 256, 1));
  const ReferenceImage b = renderReference(embree, quiet(48, 256, 2));
  // Per pixel: |a − b| within k·sqrt(va + vb) as often as t statistics with ≈ 30 degrees of
  // freedom say (2σ: 94.6%, 3σ: 99.5%).
  const double within2 = fractionWithin(a, b.radiance, &b.variance, 2.0);
  const double within3 = fractionWithin(a, b.radiance, &b.variance, 3.0);
  const double ratio = errorOverPredicted(a, b);
  INFO("within 2σ: " << within2 << ", within 3σ: " << within3 << ", Σ(a−b)² / Σ(va+vb) = " << ratio);
  CHECK(within2 > 0.92);
  CHECK(within2 < 0.975);
  CHECK(within3 > 0.985);
  // Summed over the image (dominated by the few noisiest pixels, at the light's edges).
  CHECK(ratio > 0.6);
  CHECK(ratio < 1.6);
  const metrics::ErrorMetrics m = metrics::compareImages(a.radiance, b.radiance);
  CHECK(m.energyRatio.r == Approx(1.0).epsilon(0.01));
  CHECK(m.energyRatio.g == Approx(1.0).epsilon(0.01));
}

TEST_CASE("Cornell: relRMSE falls as 1/sqrt(spp)", "[rays][reference][statistics]") {
  const scene::Scene scene = test::makeCornellBox();
  const EmbreeScene embree(scene);
  const ReferenceImage truth = renderReference(embree, quiet(48, 1024, 9));
  const double norm = sumSquares(truth.radiance);
  const double truthNoise = sumVariance(truth.variance);
  double error[2];
  int slot = 0;
  for (std::uint32_t spp : {64u, 256u}) {
    const ReferenceImage image = renderReference(embree, quiet(48, spp, 10));
    const metrics::ErrorMetrics m = metrics::compareImages(image.radiance, truth.radiance);
    // Remove the 1024-spp image's own expected noise from the measured squared error.
    error[slot++] = std::sqrt(std::max(0.0, m.relativeRmse * m.relativeRmse - truthNoise / norm));
  }
  const double ratio = error[0] / error[1];
  INFO("relRMSE at 64 spp " << error[0] << ", at 256 spp " << error[1] << ", ratio " << ratio);
  CHECK(ratio == Approx(2.0).epsilon(0.2));
}

TEST_CASE("the reference refuses a scene without light and bad options", "[rays][reference][errors]") {
  scene::Scene scene;
  test::addQuad(scene, {-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}, glm::vec3(0.5f));
  scene.finalize();
  const EmbreeScene embree(scene);
  try {
    (void)renderReference(embree, quiet(8, 1));
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK_THAT(error.what(), Catch::Contains("no light") && Catch::Contains("reference"));
  }
  const scene::Scene cornell = test::makeCornellBox();
  const EmbreeScene cornellEmbree(cornell);
  CHECK_THROWS_AS(renderReference(cornellEmbree, quiet(0, 1)), Error);
  CHECK_THROWS_AS(renderReference(cornellEmbree, quiet(8, 0)), Error);
  ReferenceOptions badCamera = quiet(8, 1);
  badCamera.camera = "nope";
  CHECK_THROWS_AS(renderReference(cornellEmbree, badCamera), Error);
}
