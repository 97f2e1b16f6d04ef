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

