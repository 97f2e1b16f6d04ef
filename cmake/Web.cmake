# The walkthrough page of `ibrr export --html` (web/): its template and its script, three.js and the page's own
# code bundled into one file by esbuild from web/node_modules (the packages pinned in web/package-lock.json, which
# ./ibrr.sh installs with `npm ci`). The exporter reads both from IBRR_WEB_DIR (overridable at run time).
set(IBRR_WEB_DIR "${PROJECT_BINARY_DIR}/web")
find_program(IBRR_ESBUILD esbuild PATHS "${PROJECT_SOURCE_DIR}/web/node_modules/.bin" NO_DEFAULT_PATH)
if(IBRR_ESBUILD)
  add_custom_command(
    OUTPUT "${IBRR_WEB_DIR}/walkthrough.js"
    COMMAND "${IBRR_ESBUILD}" "${PROJECT_SOURCE_DIR}/web/walkthrough.js" --bundle --minify --format=iife
            --target=es2020 --log-level=warning "--outfile=${IBRR_WEB_DIR}/walkthrough.js"
    DEPENDS "${PROJECT_SOURCE_DIR}/web/walkthrough.js" "${PROJECT_SOURCE_DIR}/web/package-lock.json"
    COMMENT "Bundling the walkthrough page's script (three.js + web/walkthrough.js) with esbuild")
  add_custom_command(
    OUTPUT "${IBRR_WEB_DIR}/page.html"
    COMMAND "${CMAKE_COMMAND}" -E copy "${PROJECT_SOURCE_DIR}/web/page.html" "${IBRR_WEB_DIR}/page.html"
    DEPENDS "${PROJECT_SOURCE_DIR}/web/page.html")
  add_custom_target(ibrr_web ALL DEPENDS "${IBRR_WEB_DIR}/walkthrough.js" "${IBRR_WEB_DIR}/page.html")
else()
  message(WARNING "web/node_modules has no esbuild: 'ibrr export --html' will not work until './ibrr.sh build' "
                  "installs the page's npm packages (npm ci in web/) and the build is configured again")
  add_custom_target(ibrr_web)
endif()
