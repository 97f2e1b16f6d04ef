#include "cluster/distributed_reference.hpp"

#include <vector>

namespace ibrr::cluster {
namespace {

// Every rank's copy of `image` added pixel by pixel into each rank's: exact, since each pixel is non-zero on
// one rank only.
void addImagesOfEveryRank(Cluster& cluster, Image& image) {
  std::vector<double> values;
  values.reserve(image.pixels.size() * 3);
  for (const glm::vec3& p : image.pixels) values.insert(values.end(), {p.r, p.g, p.b});
  values = cluster.allSum(values);
  for (std::size_t k = 0; k < image.pixels.size(); ++k)
    image.pixels[k] = glm::vec3(float(values[3 * k]), float(values[3 * k + 1]), float(values[3 * k + 2]));
}

}  // namespace

rays::ReferenceImage renderReferenceAcrossRanks(Cluster& cluster, const rays::EmbreeScene& embree,
                                                rays::ReferenceOptions options) {
  options.shareIndex = cluster.rank();
  options.shareCount = cluster.size();
  options.showProgress = options.showProgress && cluster.isRoot();
  options.agreedSeconds = [&cluster](double seconds) {
    cluster.agree();  // no rank enters the exchange while another has failed
    return cluster.allMax(std::vector<double>{seconds})[0];
  };
  rays::ReferenceImage image = rays::renderReference(embree, options);
  cluster.agree();
  addImagesOfEveryRank(cluster, image.radiance);
  addImagesOfEveryRank(cluster, image.variance);
  image.rayCount = std::uint64_t(cluster.allSum(std::vector<double>{double(image.rayCount)})[0]);
  return image;
}

}  // namespace ibrr::cluster
