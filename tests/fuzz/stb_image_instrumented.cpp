// stb_image compiled from its header into the mesh and manifest targets, with the fuzzer's
// instrumentation and ASan, instead of Debian's uninstrumented libstb0: the textures the mesh loader
// decodes are then checked as the loader itself is, and a fault in stb is reported where it happens,
// not as a damaged heap later. An executable's definitions take precedence over the shared library's.
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>
