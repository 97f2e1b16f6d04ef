#pragma once
// Every light of a scene in one list, chosen in proportion to its power: the emissive triangles
// (area lights and emissive meshes, Scene::emitters()), then the point lights, then the spot
// lights. Both the light paths that place VPLs and the path tracer's next-event estimation draw
// lights from here, so both see the same emitted power.
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ibrr::rays {

enum class LightKind : std::uint8_t { Triangle, Point, Spot };

// A spot light's profile: 1 inside cosInner, a smoothstep down to 0 at cosOuter.
float spotProfile(const scene::SpotLight& light, float cosTheta);
// Φ = 2π·I·∫ profile(μ) dμ = 2π·I·[(1 − cosInner) + (cosInner − cosOuter)/2] per channel.
glm::vec3 spotPower(const scene::SpotLight& light);

class LightSet {
public:
  // Throws ibrr::Error naming the scene and the fix when it has no light at all; `purpose` says
  // what needed the light (e.g. "the reference path tracer").
  LightSet(const scene::Scene& scene, const char* purpose);

  [[nodiscard]] std::size_t size() const { return m_cdf.size(); }
  [[nodiscard]] LightKind kind(std::uint32_t light) const;
  // Index into Scene::emitters(), pointLights or spotLights for a light of that kind.
  [[nodiscard]] std::uint32_t localIndex(std::uint32_t light) const;

  // Chooses a light with probability power/total (power = mean of the RGB channels).
  [[nodiscard]] std::uint32_t choose(float u, float& probability) const;
  [[nodiscard]] float probability(std::uint32_t light) const { return m_probability[light]; }
  [[nodiscard]] glm::vec3 power(std::uint32_t light) const { return m_power[light]; }
  [[nodiscard]] glm::vec3 totalPower() const { return m_totalPower; }

  // The light index of the emissive triangle hit at (instance, triangle), or -1.
  [[nodiscard]] std::int64_t emitterAt(std::uint32_t instance, std::uint32_t triangle) const;

  [[nodiscard]] const scene::Scene& scene() const { return m_scene; }

private:
  const scene::Scene& m_scene;
  std::vector<float> m_cdf;  // inclusive prefix sums of the probabilities, last = 1
  std::vector<float> m_probability;
  std::vector<glm::vec3> m_power;
  glm::vec3 m_totalPower{0.0f};
  std::size_t m_triangleCount = 0, m_pointCount = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> m_emitterByTriangle;
};

}  // namespace ibrr::rays
