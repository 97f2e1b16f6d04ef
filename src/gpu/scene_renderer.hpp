#pragma once
// The one scene draw loop every pass calls ("the solver asks, the host draws"): the scene's meshes
// live on the GPU once, grouped by material and cut into spatially coherent chunks (triangles in
// Morton order of their centroids, at most kChunkTriangles each) with bounding boxes, and draw()
// issues the chunks inside the view frustum, one glMultiDrawElements per material with the standard
// uniforms of shaders/scene_uniforms.glsl set for it. A pass binds its own program and target, then calls
// draw() with its view-projection.
#include "gpu/resources.hpp"
#include "shaders/interface.glsl"
#include "scene/scene.hpp"

#include <glm/glm.hpp>

#include <span>
#include <vector>

namespace ibrr::gpu {

// Uniform locations shared by every program that draws the scene (scene_uniforms.glsl; the values are
// shaders/interface.glsl's).
inline constexpr GLint kUniformObjectToWorld = IBRR_U_OBJECT_TO_WORLD;         // mat4
inline constexpr GLint kUniformNormalToWorld = IBRR_U_NORMAL_TO_WORLD;         // mat4 (inverse transpose)
inline constexpr GLint kUniformViewProjection = IBRR_U_VIEW_PROJECTION;        // mat4
inline constexpr GLint kUniformAlbedo = IBRR_U_ALBEDO;                         // vec3, linear ρ
inline constexpr GLint kUniformEmission = IBRR_U_EMISSION;                     // vec3, radiance L_e
inline constexpr GLint kUniformHasAlbedoTexture = IBRR_U_HAS_ALBEDO_TEXTURE;   // int (0/1)
inline constexpr GLint kUniformMaterialIndex = IBRR_U_MATERIAL_INDEX;          // int
inline constexpr GLint kFirstPassUniform = IBRR_U_FIRST_PASS_UNIFORM;          // passes use locations from here on
inline constexpr GLuint kAlbedoTextureUnit = IBRR_T_ALBEDO;

// The scene's albedo textures on the GPU, in Scene::textures order: linear RGB32F, mipmapped,
// repeating, uploaded bottom row first so that texcoord v = 0 addresses the image's bottom row
// (the OBJ/Assimp convention).
[[nodiscard]] std::vector<Texture> uploadAlbedoTextures(const scene::Scene& scene);

// Sets the scene_uniforms.glsl material uniforms of `program` (albedo, emission, texture flag,
// material index) and binds the material's albedo texture, if any, to kAlbedoTextureUnit.
void setMaterialUniforms(GLuint program, const scene::Material& material, std::uint32_t materialIndex,
                         const std::vector<Texture>& albedoTextures);

class SceneRenderer {
public:
  explicit SceneRenderer(const scene::Scene& scene);
  SceneRenderer(const SceneRenderer&) = delete;
  SceneRenderer& operator=(const SceneRenderer&) = delete;
  SceneRenderer(SceneRenderer&&) = default;
  SceneRenderer& operator=(SceneRenderer&&) = default;

  static constexpr std::size_t kChunkTriangles = 128;

  // What a draw sets per material: its uniforms and albedo texture (Set), or nothing, for a program that reads
  // no material (None: the hemicube pass; the chunks in view then go out in one glMultiDrawElements an instance,
  // in the same order, so the picture is the same and llvmpipe sets up one draw instead of one a material).
  enum class Materials { Set, None };

  // Draws every chunk that intersects the view frustum with the currently bound program, which
  // must declare the scene_uniforms.glsl uniforms it uses (unused ones are skipped by GL).
  // Returns the number of triangles submitted.
  std::size_t draw(const glm::mat4& viewProjection, Materials materials = Materials::Set) const;

  // Draws the scene into many views in one pass, with no material set (Materials::None): viewProjections[v] is
  // view v's world → clip. Each view's chunks are culled against its own frustum as draw() culls them (the views
  // in parallel when there are many), and every view gets its triangles in draw()'s order. Per scene instance, one
  // glMultiDrawElementsIndirect issues every view's runs of chunks, each command with baseInstance = v, so that
  // the instanced attribute at location IBRR_A_VIEW carries its view to the vertex shader (hemicube.vert), which
  // routes the triangles to the view's layer and viewport. Returns the number of triangles submitted, over all
  // views.
  std::size_t drawViews(std::span<const glm::mat4> viewProjections) const;

  [[nodiscard]] std::size_t triangleCount() const { return m_triangleCount; }
  // Scenes uploaded by this process so far (one per construction): a viewer or a comparison uploads its
  // scene once and shares it (display::RenderRequest::geometry).
  [[nodiscard]] static std::uint64_t uploads();

private:
  struct DrawRange {
    GLsizei firstIndex = 0;  // into the mesh's index buffer
    GLsizei indexCount = 0;
    std::uint32_t material = 0;
    glm::vec3 boundsMin{0.0f};  // object space
    glm::vec3 boundsMax{0.0f};
  };
  struct GpuMesh {
    Buffer vertices;  // interleaved position (vec3), normal (vec3), texcoord (vec2)
    Buffer indices;   // uint32, sorted by material
    VertexArray vertexArray;
    std::vector<DrawRange> ranges;
  };

  // The runs of consecutive chunks among `ranges` that are not wholly outside the frustum of `objectToClip`:
  // emit(firstIndex, indexCount) for each. Returns the triangles in them.
  template <class Emit>
  static std::size_t emitVisibleRuns(const glm::mat4& objectToClip, std::span<const DrawRange> ranges, Emit emit);
  // The view buffer of drawViews(): 0, 1, …, views − 1, bound to every mesh's vertex array as the instanced
  // attribute IBRR_A_VIEW (grown when a draw has more views).
  void bindViewIndices(std::size_t views) const;

  std::vector<GpuMesh> m_meshes;
  std::vector<scene::MeshInstance> m_instances;
  std::vector<scene::Material> m_materials;
  std::vector<Texture> m_textures;  // sRGB→linear RGB textures, mipmapped
  std::size_t m_triangleCount = 0;
  // draw()'s lists of the runs of indices that go out in one glMultiDrawElements, kept from call to call.
  mutable std::vector<GLsizei> m_drawCounts;
  mutable std::vector<const void*> m_drawOffsets;
  // drawViews()'s commands, per instance and view, and the buffers it hands them and the view indices to GL in.
  struct IndirectCommand {  // GL's DrawElementsIndirectCommand
    GLuint count, instanceCount, firstIndex;
    GLint baseVertex;
    GLuint baseInstance;
  };
  mutable std::vector<std::vector<IndirectCommand>> m_viewCommands;
  mutable std::vector<IndirectCommand> m_commands;
  mutable Buffer m_commandBuffer, m_viewIndexBuffer;
  mutable std::size_t m_viewIndices = 0;  // views the view buffer holds
};

}  // namespace ibrr::gpu
