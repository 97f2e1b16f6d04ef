#include "scene/manifest_reader.hpp"

#include "scene/scene.hpp"

#include "util/error.hpp"
#include "util/input_file.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

namespace ibrr::scene {

ManifestObject::ManifestObject(const nlohmann::json& value, std::string file, std::string where)
    : m_value(value), m_file(std::move(file)), m_where(std::move(where)) {
  if (!m_value.is_object())
    throw Error(m_file + ": " + (m_where.empty() ? "the manifest" : m_where) + " must be a JSON object");
}

std::string ManifestObject::keyPath(const std::string& key) const {
  return m_where.empty() ? key : m_where + "." + key;
}

void ManifestObject::fail(const std::string& key, const std::string& message) const {
  throw Error(m_file + ": key '" + keyPath(key) + "': " + message);
}

bool ManifestObject::has(const std::string& key) const { return m_value.contains(key); }

const nlohmann::json& ManifestObject::get(const std::string& key) {
  if (!m_value.contains(key)) fail(key, "missing (it is required)");
  m_used.insert(key);
  return m_value.at(key);
}

std::string ManifestObject::getString(const std::string& key, const std::optional<std::string>& fallback) {
  if (!has(key) && fallback) return *fallback;
  const nlohmann::json& value = get(key);
  if (!value.is_string()) fail(key, "expected a string");
  return value.get<std::string>();
}

float ManifestObject::getNumber(const std::string& key, const std::optional<float>& fallback) {
  if (!has(key) && fallback) return *fallback;
  const nlohmann::json& value = get(key);
  if (!value.is_number() || !(std::fabs(value.get<double>()) <= kMaxCoordinate))
    fail(key, "expected a finite number within ±1e9");
  return value.get<float>();
}

int ManifestObject::getInteger(const std::string& key, const std::optional<int>& fallback) {
  if (!has(key) && fallback) return *fallback;
  const nlohmann::json& value = get(key);
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() ? value.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<int>::max())
                                  : value.get<std::int64_t>() < std::numeric_limits<int>::min() ||
                                        value.get<std::int64_t>() > std::numeric_limits<int>::max()))
    fail(key, "expected an integer within ±2147483647");
  return value.get<int>();
}

glm::vec3 ManifestObject::getVec3(const std::string& key, const std::optional<glm::vec3>& fallback) {
  if (!has(key) && fallback) return *fallback;
  const nlohmann::json& value = get(key);
  if (!value.is_array() || value.size() != 3) fail(key, "expected an array of 3 numbers, e.g. [1, 0.5, 0]");
  glm::vec3 result;
  for (int i = 0; i < 3; ++i) {
    if (!value[i].is_number() || !(std::fabs(value[i].get<double>()) <= kMaxCoordinate))
      fail(key, "expected an array of 3 finite numbers within ±1e9");
    result[i] = value[i].get<float>();
  }
  return result;
}

ManifestObject ManifestObject::getObject(const std::string& key) {
  const nlohmann::json& value = get(key);
  if (!value.is_object()) fail(key, "expected a JSON object");
  return ManifestObject(value, m_file, keyPath(key));
}

void ManifestObject::rejectUnknownKeys(const std::set<std::string>& alsoKnown) const {
  for (const auto& [key, value] : m_value.items()) {
    if (m_used.count(key) || alsoKnown.count(key)) continue;
    std::string known;
    for (const std::string& k : m_used) known += (known.empty() ? "" : ", ") + k;
    for (const std::string& k : alsoKnown) known += (known.empty() ? "" : ", ") + k;
    throw Error(m_file + ": unknown key '" + keyPath(key) + "'" +
                (known.empty() ? "" : " (keys read here: " + known + ")") +
                "; fix the spelling or remove it (scenes/README.md lists the keys)");
  }
}

nlohmann::json parseManifestFile(const std::string& path) {
  requireRegularFile(path, "scene manifest");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the scene manifest (check the path)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    // Translate the byte offset into a line and column for the message.
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < error.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string reason = error.what();
    if (const auto colon = reason.rfind(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
    throw Error(path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": JSON syntax error: " + reason);
  } catch (const nlohmann::json::out_of_range& error) {  // a number beyond a double's range, "1e999"
    throw Error(path + ": a number is out of range (" + error.what() + "); manifest numbers lie within ±1e9");
  }
}

}  // namespace ibrr::scene
