#include "rays/light_set.hpp"

#include "util/error.hpp"

#include <glm/gtc/constants.hpp>

#include <algorithm>
#include <string>

namespace ibrr::rays {

float spotProfile(const scene::SpotLight& light, float cosTheta) {
  if (cosTheta >= light.cosInner) return 1.0f;
  if (cosTheta <= light.cosOuter) return 0.0f;
  const float t = (cosTheta - light.cosOuter) / (light.cosInner - light.cosOuter);
  return t * t * (3.0f - 2.0f * t);
}

glm::vec3 spotPower(const scene::SpotLight& light) {
  // The smoothstep ramp integrates to half its width.
  const float integral = (1.0f - light.cosInner) + 0.5f * (light.cosInner - light.cosOuter);
  return glm::two_pi<float>() * light.intensity * integral;
}

LightSet::LightSet(const scene::Scene& scene, const char* purpose) : m_scene(scene) {
  for (const scene::EmissiveTriangle& emitter : scene.emitters()) m_power.push_back(emitter.power);
  m_triangleCount = m_power.size();
  for (const scene::PointLight& light : scene.pointLights) m_power.push_back(4.0f * glm::pi<float>() * light.intensity);
  m_pointCount = scene.pointLights.size();
  for (const scene::SpotLight& light : scene.spotLights) m_power.push_back(spotPower(light));

  double total = 0.0;
  for (const glm::vec3& power : m_power) {
    m_totalPower += power;
    total += std::max(0.0, (double(power.r) + power.g + power.b) / 3.0);
  }
  if (m_power.empty() || !(total > 0.0)) {
    const std::string where = scene.sourcePath.empty() ? std::string("the scene") : scene.sourcePath.string();
    throw Error(where + " has no light, so " + purpose +
                " has nothing to shoot from: give a material an \"emission\" (a radiance > 0) or add a point "
                "or spot light to the manifest");
  }
  double running = 0.0;
  for (const glm::vec3& power : m_power) {
    const double p = std::max(0.0, (double(power.r) + power.g + power.b) / 3.0) / total;
    m_probability.push_back(float(p));
    running += p;
    m_cdf.push_back(float(running));
  }
  m_cdf.back() = 1.0f;
  for (std::uint32_t i = 0; i < m_triangleCount; ++i) {
    const scene::EmissiveTriangle& emitter = scene.emitters()[i];
    m_emitterByTriangle.emplace((std::uint64_t(emitter.instance) << 32) | emitter.triangle, i);
  }
}

LightKind LightSet::kind(std::uint32_t light) const {
  if (light < m_triangleCount) return LightKind::Triangle;
  if (light < m_triangleCount + m_pointCount) return LightKind::Point;
  return LightKind::Spot;
}

std::uint32_t LightSet::localIndex(std::uint32_t light) const {
  if (light < m_triangleCount) return light;
  if (light < m_triangleCount + m_pointCount) return std::uint32_t(light - m_triangleCount);
  return std::uint32_t(light - m_triangleCount - m_pointCount);
}

std::uint32_t LightSet::choose(float u, float& probability) const {
  auto it = std::upper_bound(m_cdf.begin(), m_cdf.end(), u);
  std::size_t index = std::min<std::size_t>(std::size_t(it - m_cdf.begin()), m_cdf.size() - 1);
  // Skip lights of zero probability that an edge value could land on.
  while (m_probability[index] <= 0.0f && index + 1 < m_cdf.size()) ++index;
  probability = m_probability[index];
  return std::uint32_t(index);
}

std::int64_t LightSet::emitterAt(std::uint32_t instance, std::uint32_t triangle) const {
  const auto it = m_emitterByTriangle.find((std::uint64_t(instance) << 32) | triangle);
  return it == m_emitterByTriangle.end() ? -1 : std::int64_t(it->second);
}

}  // namespace ibrr::rays
