# Every dependency comes from Debian packages; ibrr.sh installs them. A missing one stops the
# configure step with the package that provides it.
function(ibrr_require_package name debian_package)
  find_package(${name} ${ARGN} QUIET)
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR "ibrr: ${name} not found. Install the Debian package '${debian_package}' "
                        "(./ibrr.sh build installs every dependency).")
  endif()
endfunction()

ibrr_require_package(glm libglm-dev)
ibrr_require_package(TBB libtbb-dev)
ibrr_require_package(assimp libassimp-dev)
ibrr_require_package(nlohmann_json nlohmann-json3-dev)
ibrr_require_package(OpenEXR libopenexr-dev)
ibrr_require_package(CLI11 libcli11-dev)
ibrr_require_package(embree libembree-dev 3)
ibrr_require_package(glfw3 libglfw3-dev 3.3)
ibrr_require_package(Threads libc6-dev)
find_package(PkgConfig REQUIRED)
pkg_check_modules(STB REQUIRED IMPORTED_TARGET stb)
if(IBRR_BUILD_TESTS)
  ibrr_require_package(Catch2 catch2 2)
  # Catch2 v2 ships Catch.cmake (catch_discover_tests) beside its package config.
  list(APPEND CMAKE_MODULE_PATH ${Catch2_DIR})
endif()

# Dear ImGui (libimgui-dev 1.86, for the viewer's overlay): the core as libimgui.a through
# pkg-config; Debian ships its GLFW and OpenGL 3 backends only as sources, compiled here from there.
pkg_check_modules(IMGUI QUIET IMPORTED_TARGET imgui)
if(NOT IMGUI_FOUND)
  message(FATAL_ERROR "ibrr: Dear ImGui not found. Install the Debian package 'libimgui-dev' "
                      "(./ibrr.sh build installs every dependency).")
endif()
set(IBRR_IMGUI_BACKENDS_DIR "/usr/share/doc/libimgui-dev/examples/backends"
    CACHE PATH "folder with Dear ImGui's imgui_impl_glfw.cpp and imgui_impl_opengl3.cpp")
foreach(backend imgui_impl_glfw.cpp imgui_impl_opengl3.cpp)
  if(NOT EXISTS "${IBRR_IMGUI_BACKENDS_DIR}/${backend}")
    message(FATAL_ERROR "ibrr: ${IBRR_IMGUI_BACKENDS_DIR}/${backend} is missing: reinstall the Debian package "
                        "'libimgui-dev' (it ships the backends under examples/backends), or point "
                        "-DIBRR_IMGUI_BACKENDS_DIR at a folder holding them.")
  endif()
endforeach()
add_library(ibrr_imgui_backends STATIC "${IBRR_IMGUI_BACKENDS_DIR}/imgui_impl_glfw.cpp"
                                       "${IBRR_IMGUI_BACKENDS_DIR}/imgui_impl_opengl3.cpp")
target_include_directories(ibrr_imgui_backends PUBLIC ${IMGUI_INCLUDE_DIRS} "${IMGUI_INCLUDEDIR}/backends")
target_link_libraries(ibrr_imgui_backends PUBLIC PkgConfig::IMGUI glfw PRIVATE ${CMAKE_DL_LIBS})

# Open MPI (libopenmpi-dev) for `mpirun ibrr bake|reference` (src/cluster); see IBRR_MPI in CMakeLists.txt.
if(NOT DEFINED IBRR_MPI_REQUESTED)
  find_package(MPI COMPONENTS C QUIET)
  set(IBRR_MPI ${MPI_C_FOUND} CACHE BOOL "Build distributed bakes with MPI (src/cluster)")
elseif(IBRR_MPI_REQUESTED)
  find_package(MPI COMPONENTS C REQUIRED)
endif()
message(STATUS "ibrr: MPI ${IBRR_MPI}")
