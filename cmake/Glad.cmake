# The GL 4.5 core and EGL 1.5 loaders are generated at build time by Debian's glad 2
# (python3-glad), always with --reproducible so it uses its bundled Khronos XML instead of
# downloading. The generated files live in the build tree only and are never committed.
find_program(IBRR_GLAD_EXECUTABLE glad)
if(NOT IBRR_GLAD_EXECUTABLE)
  message(FATAL_ERROR "ibrr: the 'glad' generator was not found. Install the Debian package 'python3-glad'.")
endif()

set(IBRR_GLAD_DIR "${CMAKE_CURRENT_BINARY_DIR}/glad")
# Only the extensions the code uses, so the loader stays small and fast to build.
set(IBRR_GL_EXTENSIONS GL_KHR_debug,GL_ARB_gl_spirv)
set(IBRR_EGL_EXTENSIONS
    EGL_EXT_platform_base,EGL_EXT_platform_device,EGL_EXT_device_base,EGL_EXT_device_enumeration,EGL_EXT_device_query,EGL_EXT_device_drm,EGL_MESA_platform_surfaceless,EGL_KHR_create_context,EGL_KHR_surfaceless_context,EGL_KHR_no_config_context)
set(IBRR_GLAD_OUTPUTS
    ${IBRR_GLAD_DIR}/src/gl.c ${IBRR_GLAD_DIR}/src/egl.c
    ${IBRR_GLAD_DIR}/include/glad/gl.h ${IBRR_GLAD_DIR}/include/glad/egl.h)
add_custom_command(
  OUTPUT ${IBRR_GLAD_OUTPUTS}
  COMMAND ${IBRR_GLAD_EXECUTABLE} --quiet --reproducible --out-path ${IBRR_GLAD_DIR}
          --api gl:core=4.5 --extensions ${IBRR_GL_EXTENSIONS} c --loader
  COMMAND ${IBRR_GLAD_EXECUTABLE} --quiet --reproducible --out-path ${IBRR_GLAD_DIR}
          --api egl=1.5 --extensions ${IBRR_EGL_EXTENSIONS} c --loader
  COMMENT "Generating the GL 4.5 core and EGL 1.5 loaders with glad --reproducible"
  VERBATIM)

add_library(ibrr_glad STATIC ${IBRR_GLAD_OUTPUTS})
target_include_directories(ibrr_glad SYSTEM PUBLIC ${IBRR_GLAD_DIR}/include)
target_link_libraries(ibrr_glad PUBLIC ${CMAKE_DL_LIBS})
set_target_properties(ibrr_glad PROPERTIES POSITION_INDEPENDENT_CODE ON LINKER_LANGUAGE C)
