#pragma once
// Reading a JSON object with typed getters, defaults and a check that every key was used
// (after pbrt's ParameterDictionary::ReportUnused): a typo in a manifest is an error naming the
// file and the key path, never a silently ignored setting.
#include <glm/glm.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>

namespace ibrr::scene {

class ManifestObject {
public:
  // `file` names the manifest in messages; `where` is the key path of this object ("meshes[0]").
  ManifestObject(const nlohmann::json& value, std::string file, std::string where);

  [[nodiscard]] bool has(const std::string& key) const;
  [[nodiscard]] std::string getString(const std::string& key, const std::optional<std::string>& fallback = {});
  [[nodiscard]] float getNumber(const std::string& key, const std::optional<float>& fallback = {});
  [[nodiscard]] int getInteger(const std::string& key, const std::optional<int>& fallback = {});
  [[nodiscard]] glm::vec3 getVec3(const std::string& key, const std::optional<glm::vec3>& fallback = {});
  // The raw value of a key (marks it used); throws if missing.
  [[nodiscard]] const nlohmann::json& get(const std::string& key);
  // A nested object; throws if missing or not an object.
  [[nodiscard]] ManifestObject getObject(const std::string& key);

  // Throws ibrr::Error naming the first key that no getter asked for, and the known keys.
  void rejectUnknownKeys(const std::set<std::string>& alsoKnown = {}) const;

  // "file: where.key: message" as an ibrr::Error.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[nodiscard]] std::string keyPath(const std::string& key) const;
  [[nodiscard]] const std::string& file() const { return m_file; }

private:
  const nlohmann::json& m_value;
  std::string m_file;
  std::string m_where;
  std::set<std::string> m_used;
};

// Parses a manifest file; a syntax error names the file, line and column.
nlohmann::json parseManifestFile(const std::string& path);

}  // namespace ibrr::scene
