// Error metrics on images with known answers.
#include "metrics/metrics.hpp"
#include "util/error.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ibrr;

TEST_CASE("metrics of known images", "[metrics]") {
  Image reference(2, 2, glm::vec3(1.0f));
  Image test = reference;
  test.at(0, 0) = glm::vec3(2.0f);  // one pixel off by 1 in every channel
  const metrics::ErrorMetrics m = metrics::compareImages(test, reference);
  // sqrt(3·1² / (12·1²)) = 0.5
  CHECK(m.relativeRmse == Approx(0.5));
  // (3 values of 1/(1 + 0.01)) / 12
  CHECK(m.relMse == Approx(3.0 / 1.01 / 12.0));
  CHECK(m.energyRatio.r == Approx(5.0 / 4.0));
  CHECK(m.pixelCount == 4);

  const std::vector<std::uint8_t> mask = {0, 1, 1, 1};  // leave out the wrong pixel
  const metrics::ErrorMetrics masked = metrics::compareImages(test, reference, mask);
  CHECK(masked.relativeRmse == 0.0);
  CHECK(masked.relMse == 0.0);
  CHECK(masked.energyRatio.g == 1.0);
  CHECK(masked.pixelCount == 3);

  CHECK(metrics::compareImages(reference, reference).relativeRmse == 0.0);
  CHECK_THAT(metrics::formatMetrics(m), Catch::Contains("relRMSE 0.5"));
}

TEST_CASE("relMSE stays finite on black reference pixels", "[metrics]") {
  Image reference(1, 1, glm::vec3(0.0f));
  Image test(1, 1, glm::vec3(0.1f));
  const metrics::ErrorMetrics m = metrics::compareImages(test, reference);
  CHECK(m.relMse == Approx(0.01 / 0.01));
  CHECK(std::isinf(m.relativeRmse));
}

TEST_CASE("metrics refuse images of different sizes and empty masks", "[metrics][errors]") {
  const Image a(2, 2), b(3, 2);
  CHECK_THROWS_AS(metrics::compareImages(a, b), Error);
  const std::vector<std::uint8_t> none(4, 0);
  CHECK_THROWS_AS(metrics::compareImages(a, a, none), Error);
  const std::vector<std::uint8_t> wrongSize(3, 1);
  CHECK_THROWS_AS(metrics::compareImages(a, a, wrongSize), Error);
}

TEST_CASE("the error heat map runs from blue to red and greys out masked pixels", "[metrics]") {
  Image reference(3, 1, glm::vec3(1.0f));
  Image test = reference;
  test.at(1, 0) = glm::vec3(1.5f);
  test.at(2, 0) = glm::vec3(3.0f);
  const std::vector<std::uint8_t> mask = {1, 1, 0};
  float scale = 0.0f;
  const Image heat = metrics::errorHeatmap(test, reference, mask, 0.5f, &scale);
  CHECK(scale == 0.5f);
  CHECK(heat.at(0, 0).b > heat.at(0, 0).g);  // no error: the cold (dark blue-violet) end
  CHECK(heat.at(1, 0).r > heat.at(1, 0).b);  // at the scale: the hot (dark red) end
  CHECK(heat.at(1, 0).r > 4.0f * heat.at(0, 0).r);
  CHECK(heat.at(2, 0).r == Approx(heat.at(2, 0).g));  // masked: grey
}

TEST_CASE("dark pixels are those below half the reference's luminance, inside the mask", "[metrics]") {
  Image reference(4, 1, glm::vec3(1.0f));
  reference.at(3, 0) = glm::vec3(0.0f);  // black in the reference: never counted
  Image test = reference;
  test.at(0, 0) = glm::vec3(0.49f);               // dark
  test.at(1, 0) = glm::vec3(0.51f);               // not dark
  test.at(2, 0) = glm::vec3(0.0f, 0.0f, 1.0f);    // luminance 0.0722: dark whatever its blue
  const metrics::DarkPixels all = metrics::countDarkPixels(test, reference);
  CHECK(all.compared == 3);
  CHECK(all.dark == 2);
  CHECK(all.fraction() == Approx(2.0 / 3.0));
  const std::vector<std::uint8_t> mask = {0, 1, 1, 1};
  const metrics::DarkPixels masked = metrics::countDarkPixels(test, reference, mask);
  CHECK(masked.compared == 2);
  CHECK(masked.dark == 1);
  CHECK(metrics::countDarkPixels(test, reference, mask, 0.05f).dark == 0);

  CHECK(metrics::intersectMasks(mask, std::vector<std::uint8_t>{1, 1, 0, 1}) == std::vector<std::uint8_t>{0, 1, 0, 1});
  CHECK(metrics::intersectMasks({}, mask) == mask);
  CHECK_THROWS_AS(metrics::intersectMasks(mask, std::vector<std::uint8_t>{1}), Error);

  // The picture: dark and lit in red, dark and in shadow in blue, masked out black, others grey.
  const std::vector<std::uint8_t> shadow = {0, 0, 1, 0};
  const Image picture = metrics::darkPixelImage(test, reference, {}, shadow);
  CHECK(picture.at(0, 0) == glm::vec3(1.0f, 0.0f, 0.0f));
  CHECK(picture.at(2, 0) == glm::vec3(0.0f, 0.1f, 1.0f));
  CHECK(picture.at(1, 0).r == picture.at(1, 0).b);  // grey
  CHECK(picture.at(1, 0).r > 0.0f);
  CHECK(metrics::darkPixelImage(test, reference, mask, shadow).at(0, 0) == glm::vec3(0.0f));
}
