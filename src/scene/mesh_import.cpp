#include "scene/mesh_import.hpp"

#include "scene/ply_check.hpp"
#include "util/error.hpp"
#include "util/input_file.hpp"
#include "util/log.hpp"

#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <stb_image.h>
#include <assimp/BaseImporter.h>
#include <assimp/DefaultIOSystem.h>
#include <assimp/Importer.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

namespace ibrr::scene {
namespace {

float srgbToLinear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

// Decodes an 8-bit sRGB image (from a file or from memory) into a linear Texture.
Texture makeTexture(const std::string& name, unsigned char* data, int width, int height) {
  Texture texture;
  texture.path = name;
  texture.width = width;
  texture.height = height;
  texture.texels.resize(std::size_t(width) * height);
  for (std::size_t i = 0; i < texture.texels.size(); ++i)
    for (int c = 0; c < 3; ++c) texture.texels[i][c] = srgbToLinear(data[i * 3 + c] / 255.0f);
  stbi_image_free(data);
  return texture;
}

// Debian 12's stb_image (2022-09) reads past its buffer when it converts a binary PNM of more than 8
// bits (maxval above 255) to 8 bits (found by tests/fuzz/fuzz_mesh with stb instrumented).
bool isWidePnm(const std::vector<stbi_uc>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6') &&
         stbi_is_16_bit_from_memory(bytes.data(), int(bytes.size()));
}

// Decodes an image file's bytes to 8-bit RGB (stbi_image_free it), or nullptr with the reason.
unsigned char* decodeImage(const std::vector<stbi_uc>& bytes, int& width, int& height, std::string& reason) {
  if (bytes.size() > std::size_t(std::numeric_limits<int>::max())) {
    reason = "larger than 2 GB";
    return nullptr;
  }
  if (isWidePnm(bytes)) {
    reason = "a PNM of more than 8 bits a channel, which this stb_image misreads";
    return nullptr;
  }
  int channels = 0;
  unsigned char* data = stbi_load_from_memory(bytes.data(), int(bytes.size()), &width, &height, &channels, 3);
  if (!data) reason = stbi_failure_reason() ? stbi_failure_reason() : "unknown";
  return data;
}

// Loads the material's diffuse / base-colour texture, or returns -1 (with a warning) if it cannot.
int loadAlbedoTexture(const aiScene& ai, const aiMaterial& material, const std::filesystem::path& folder, Scene& scene,
                      std::map<std::string, int>& cache) {
  aiString texturePath;
  if (material.GetTexture(aiTextureType_DIFFUSE, 0, &texturePath) != AI_SUCCESS &&
      material.GetTexture(aiTextureType_BASE_COLOR, 0, &texturePath) != AI_SUCCESS)
    return -1;
  const std::string key = texturePath.C_Str();
  if (auto found = cache.find(key); found != cache.end()) return found->second;
  int width = 0, height = 0;
  unsigned char* data = nullptr;
  std::string name = key, reason = "missing, or not a regular file";
  if (const aiTexture* embedded = ai.GetEmbeddedTexture(texturePath.C_Str())) {
    if (embedded->mHeight != 0) {
      warn(key + ": uncompressed embedded textures are not supported; using the material colour");
      return cache[key] = -1;
    }
    const auto* bytes = reinterpret_cast<const stbi_uc*>(embedded->pcData);
    data = decodeImage(std::vector<stbi_uc>(bytes, bytes + embedded->mWidth), width, height, reason);
  } else {
    std::string relative = key;
    for (char& c : relative)
      if (c == '\\') c = '/';
    const std::filesystem::path file = folder / relative;
    name = file.string();
    std::error_code error;
    if (std::filesystem::is_regular_file(file, error)) {  // a FIFO would block stb
      recordInput(file, "texture");
      std::ifstream in(file, std::ios::binary);
      data = decodeImage({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}, width, height, reason);
    }
  }
  if (!data) {
    warn(name + ": cannot read texture (" + reason + "); using the material colour");
    return cache[key] = -1;
  }
  scene.textures.push_back(makeTexture(name, data, width, height));
  return cache[key] = int(scene.textures.size() - 1);
}

Material convertMaterial(const aiScene& ai, const aiMaterial& source, const std::filesystem::path& file, Scene& scene,
                         std::map<std::string, int>& textureCache) {
  const std::filesystem::path folder = file.parent_path();
  Material material;
  material.name = source.GetName().C_Str();
  // A NaN or infinite colour (an MTL "Kd nan") would pass the clamps below and poison every method, and a negative
  // one (an MTL "Ke -17 -12 -4") is a mistake the manifest refuses too: both are refused, naming the material.
  auto usableColour = [&](const glm::vec3& colour, const char* what) {
    const auto refuse = [&](const char* problem) {
      char value[96];
      std::snprintf(value, sizeof value, "%g %g %g", double(colour.x), double(colour.y), double(colour.z));
      throw Error(file.string() + ": material '" + material.name + "' has " + problem + " " + what + " (" + value +
                  "); fix the material (MTL Kd/Ke, glTF baseColorFactor/emissiveFactor/emissiveStrength)");
    };
    if (!(std::fabs(colour.x) <= kMaxCoordinate && std::fabs(colour.y) <= kMaxCoordinate &&
          std::fabs(colour.z) <= kMaxCoordinate))
      refuse("a non-finite");
    if (glm::any(glm::lessThan(colour, glm::vec3(0.0f)))) refuse("a negative");
    return colour;
  };
  aiColor4D color;
  // glTF's base colour wins over the generic diffuse colour where both exist. A reflectance above 1 is clamped to
  // 1 (MTL files from modelling tools carry such Kd values); a negative one is refused.
  if (source.Get(AI_MATKEY_BASE_COLOR, color) == AI_SUCCESS || source.Get(AI_MATKEY_COLOR_DIFFUSE, color) == AI_SUCCESS)
    material.albedo = glm::min(usableColour(glm::vec3(color.r, color.g, color.b), "diffuse colour"), 1.0f);
  aiColor3D emissive;
  if (source.Get(AI_MATKEY_COLOR_EMISSIVE, emissive) == AI_SUCCESS)
    material.emission = usableColour(glm::vec3(emissive.r, emissive.g, emissive.b), "emission");
  float emissiveStrength = 1.0f;
  if (source.Get(AI_MATKEY_EMISSIVE_INTENSITY, emissiveStrength) == AI_SUCCESS)
    material.emission = usableColour(material.emission * emissiveStrength, "emission times its strength");
  material.albedoTexture = loadAlbedoTexture(ai, source, folder, scene, textureCache);
  return material;
}

// Finite and within ±kMaxCoordinate on every axis.
bool isUsable(const glm::vec3& v) {
  return std::fabs(v.x) <= kMaxCoordinate && std::fabs(v.y) <= kMaxCoordinate && std::fabs(v.z) <= kMaxCoordinate;
}

std::string lowercaseExtension(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return extension;
}

// True for a file Assimp would read as PLY: the .ply extension, or contents that start with "ply".
bool looksLikePly(const std::filesystem::path& path) {
  if (lowercaseExtension(path) == ".ply") return true;
  std::ifstream in(path, std::ios::binary);
  char start[3] = {};
  in.read(start, 3);
  return in.gcount() == 3 && std::string_view(start, 3) == "ply";
}

std::string readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

enum class ObjText { Obj, Mtl };

// What Assimp 5.2.5 mishandles in an OBJ or MTL file (found by tests/fuzz/fuzz_mesh), or "":
// - \0, \f and \r are line ends to it, and inside a line misread: an MTL "d" followed by one made it
//   follow a null material;
// - any statement before an MTL's first newmtl (map_Kd, bump, s, a, ...): a null material too;
// - an OBJ naming itself as its MTL file (mtllib): read as an MTL, the same.
std::string assimpTextFault(const std::filesystem::path& path, ObjText kind) {
  const std::string text = readBytes(path);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\0' || text[i] == '\f' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')))
      return "holds \\0, \\f or a \\r without \\n";
  std::istringstream lines(text);
  if (kind == ObjText::Obj) {
    for (std::string line; std::getline(lines, line);) {
      const std::size_t first = line.find_first_not_of(" \t");
      if (line.compare(first == std::string::npos ? line.size() : first, 7, "mtllib ") != 0) continue;
      const std::size_t name = line.find_first_not_of(" \t", first + 7), end = line.find_last_not_of(" \t\r");
      std::error_code error;
      if (name != std::string::npos &&
          std::filesystem::equivalent(path.parent_path() / line.substr(name, end + 1 - name), path, error))
        return "names itself as its material library (mtllib)";
    }
    return "";
  }
  for (std::string line; std::getline(lines, line);) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    std::string word = line.substr(first, std::min<std::size_t>(line.find_first_of(" \t\r", first) - first, 20));
    if (word == "newmtl") break;
    if (word.starts_with("#")) continue;
    for (char& c : word)  // printable in the one-line message
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    return "has a statement ('" + word + "') before its first newmtl";
  }
  return "";
}

// A GLB's container: its length is the file's, and each chunk lies within it (Assimp allocated a chunk's
// claimed length, 4 GB, before comparing it with the file: tests/fuzz/fuzz_mesh). "" or the fault.
std::string glbFault(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  if (lowercaseExtension(path) != ".glb" && std::string_view(magic, std::size_t(in.gcount())) != "glTF") return "";
  const std::string bytes = readBytes(path);
  auto word = [&](std::size_t at) {
    std::uint32_t value = 0;
    std::memcpy(&value, bytes.data() + at, 4);  // little-endian, as this machine
    return value;
  };
  if (bytes.size() < 12 || bytes.compare(0, 4, "glTF") != 0) return "is no GLB file (no glTF header)";
  if (word(8) != bytes.size())
    return "says it is " + std::to_string(word(8)) + " bytes long but is " + std::to_string(bytes.size());
  for (std::size_t at = 12; at < bytes.size();) {
    if (bytes.size() - at < 8 || word(at) > bytes.size() - at - 8)
      return "has a chunk at byte " + std::to_string(at) + " that runs past the end of the file";
    at += 8 + std::size_t(word(at));
  }
  return "";
}

// Keeps only the readers that claim the file's extension, for the formats ibrr names (OBJ, PLY, glTF,
// GLB): Assimp otherwise tries every reader on a file its own refuses, and read a damaged .gltf as an OBJ
// whose MTL files the checks here did not look at (tests/fuzz/fuzz_mesh). Returns the readers removed
// (an Importer only deletes those it holds).
std::vector<std::unique_ptr<Assimp::BaseImporter>> keepOwnReaders(Assimp::Importer& importer,
                                                                  const std::string& extension) {
  std::vector<std::unique_ptr<Assimp::BaseImporter>> removed;
  if (extension != ".obj" && extension != ".ply" && extension != ".gltf" && extension != ".glb") return removed;
  std::vector<Assimp::BaseImporter*> others;
  for (std::size_t i = 0; i < importer.GetImporterCount(); ++i) {
    const aiImporterDesc* info = importer.GetImporterInfo(i);
    std::istringstream claimed(info && info->mFileExtensions ? info->mFileExtensions : "");
    bool own = false;
    for (std::string word; claimed >> word;) own |= "." + word == extension;
    if (!own) others.push_back(importer.GetImporter(i));
  }
  for (Assimp::BaseImporter* other : others)
    if (importer.UnregisterLoader(other) == AI_SUCCESS) removed.emplace_back(other);
  return removed;
}

// Assimp's file system, recording every file it opens (the OBJ's MTL files, a glTF's buffers) as an
// input of this run, so that no output is written over one (util/input_file.hpp). An MTL file Assimp
// would mishandle is not given to it: it goes on with default materials. For an OBJ mesh, every other
// file Assimp opens is an MTL file, whatever its name.
class RecordingIoSystem : public Assimp::DefaultIOSystem {
public:
  explicit RecordingIoSystem(const std::filesystem::path& mesh)
      : m_mesh(mesh.string()), m_obj(lowercaseExtension(mesh) == ".obj") {}

  Assimp::IOStream* Open(const char* file, const char* mode) override {
    if (file && mode && mode[0] == 'r') {
      recordInput(file, "file the mesh reads");
      const bool mtl = (m_obj && m_mesh != file) || lowercaseExtension(file) == ".mtl";
      if (const std::string fault = mtl ? assimpTextFault(file, ObjText::Mtl) : ""; !fault.empty()) {
        if (m_warned.insert(file).second)  // Assimp asks for an MTL several times
          warn(std::string(file) + ": " + fault + ", which Assimp mishandles; its materials are ignored");
        return nullptr;
      }
    }
    return Assimp::DefaultIOSystem::Open(file, mode);
  }

private:
  std::string m_mesh;
  bool m_obj;
  std::set<std::string> m_warned;
};

}  // namespace

std::uint32_t importMeshFile(const std::filesystem::path& path, Scene& scene, MeshImportStats* stats) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path.string() + ": mesh file not found (paths in a manifest are relative to the manifest)");
  // Assimp's PLY reader trusts its input (ply_check.hpp): a malformed file is refused before it.
  if (looksLikePly(path)) checkPlyFile(path);
  if (const std::string fault = lowercaseExtension(path) == ".obj" ? assimpTextFault(path, ObjText::Obj) : "";
      !fault.empty())
    throw Error(path.string() + ": " + fault + ", which Assimp's OBJ reader mishandles; repair or re-export it");
  if (const std::string fault = glbFault(path); !fault.empty())
    throw Error(path.string() + ": " + fault + "; repair or re-export the GLB file");
  recordInput(path, "mesh file");
  Assimp::Importer importer;
  importer.SetIOHandler(new RecordingIoSystem(path));  // the importer owns it
  const auto removedReaders = keepOwnReaders(importer, lowercaseExtension(path));
  // Points and lines are removed; everything else is triangulated. Normals are generated (flat)
  // only where the file has none; node transforms are baked into the vertices.
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const aiScene* ai =
      importer.ReadFile(path.string(), aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_GenNormals |
                                           aiProcess_SortByPType | aiProcess_PreTransformVertices);
  if (!ai || (ai->mFlags & AI_SCENE_FLAGS_INCOMPLETE) || !ai->HasMeshes())
    throw Error(path.string() + ": cannot read mesh: " +
                (ai && !ai->HasMeshes() ? std::string("the file has no triangles") : importer.GetErrorString()) +
                " (supported: OBJ/MTL, PLY, glTF 2.0 and the other formats Assimp reads)");

  const auto firstMaterial = std::uint32_t(scene.materials.size());
  std::map<std::string, int> textureCache;
  for (unsigned m = 0; m < ai->mNumMaterials; ++m)
    scene.materials.push_back(convertMaterial(*ai, *ai->mMaterials[m], path, scene, textureCache));
  if (ai->mNumMaterials == 0) scene.materials.push_back(Material{.name = "default"});

  TriangleMesh mesh;
  mesh.name = path.filename().string();
  bool anyTexcoords = false;
  for (unsigned m = 0; m < ai->mNumMeshes; ++m) anyTexcoords |= ai->mMeshes[m]->HasTextureCoords(0);
  MeshImportStats counts;
  for (unsigned m = 0; m < ai->mNumMeshes; ++m) {
    const aiMesh& source = *ai->mMeshes[m];
    if (!(source.mPrimitiveTypes & aiPrimitiveType_TRIANGLE)) continue;
    const auto base = std::uint32_t(mesh.positions.size());
    for (unsigned v = 0; v < source.mNumVertices; ++v) {
      const aiVector3D& p = source.mVertices[v];
      mesh.positions.emplace_back(p.x, p.y, p.z);
      glm::vec3 n(0.0f, 1.0f, 0.0f);
      if (source.HasNormals()) n = glm::vec3(source.mNormals[v].x, source.mNormals[v].y, source.mNormals[v].z);
      const float length = glm::length(n);
      mesh.normals.push_back(std::isfinite(length) && length > 0.0f ? n / length : glm::vec3(0.0f, 1.0f, 0.0f));
      if (anyTexcoords)
        mesh.texcoords.push_back(source.HasTextureCoords(0)
                                     ? glm::vec2(source.mTextureCoords[0][v].x, source.mTextureCoords[0][v].y)
                                     : glm::vec2(0.0f));
    }
    const std::uint32_t material = firstMaterial + (ai->mNumMaterials ? source.mMaterialIndex : 0);
    for (unsigned f = 0; f < source.mNumFaces; ++f) {
      const aiFace& face = source.mFaces[f];
      if (face.mNumIndices != 3) continue;
      if (face.mIndices[0] >= source.mNumVertices || face.mIndices[1] >= source.mNumVertices ||
          face.mIndices[2] >= source.mNumVertices)
        throw Error(path.string() + ": face " + std::to_string(f) + " of mesh " + std::to_string(m) +
                    " refers to a vertex beyond its " + std::to_string(source.mNumVertices) +
                    "; repair or re-export the mesh");
      const glm::uvec3 tri(base + face.mIndices[0], base + face.mIndices[1], base + face.mIndices[2]);
      const glm::vec3 &a = mesh.positions[tri.x], &b = mesh.positions[tri.y], &c = mesh.positions[tri.z];
      const float twiceArea = glm::length(glm::cross(b - a, c - a));
      if (!isUsable(a) || !isUsable(b) || !isUsable(c) || !(twiceArea > 0.0f) || !std::isfinite(twiceArea)) {
        ++counts.trianglesDropped;
        continue;
      }
      mesh.triangles.push_back(tri);
      mesh.triangleMaterials.push_back(material);
      ++counts.trianglesKept;
    }
  }
  if (mesh.triangles.empty())
    throw Error(path.string() + ": the mesh has no valid triangles" +
                (counts.trianglesDropped
                     ? " (all " + std::to_string(counts.trianglesDropped) +
                           " were degenerate or had NaN, inf or beyond-±1e9 vertices); fix or re-export the mesh"
                     : std::string("; re-export it with faces")));
  if (counts.trianglesDropped > 0)
    warn(path.string() + ": dropped " + std::to_string(counts.trianglesDropped) +
         " degenerate or non-finite (NaN, inf or beyond ±1e9) triangles");
  if (stats) *stats = counts;
  scene.meshes.push_back(std::move(mesh));
  return std::uint32_t(scene.meshes.size() - 1);
}

}  // namespace ibrr::scene
