#include "compare/report.hpp"

#include "metrics/metrics.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/html.hpp"
#include "util/image.hpp"
#include "util/input_file.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <system_error>

namespace ibrr::compare {
namespace {

namespace fs = std::filesystem;

// Colours of the plot's curves, one per method in order (Okabe–Ito, readable by colour-blind eyes).
constexpr const char* kCurveColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"};

// A file-name-safe version of a camera or method name.
std::string slug(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return out.empty() ? "unnamed" : out;
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string imageName(const std::string& method, const std::string& camera) {
  return slug(method) + "_" + slug(camera);
}

// The PNG, EXR and error images of every method and camera, with one error scale per camera (the
// largest 99th percentile over the methods) so that the colours compare across methods.
std::vector<float> writeImages(const CompareResults& results, const fs::path& imageFolder) {
  std::vector<float> scales;
  for (std::size_t c = 0; c < results.references.size(); ++c) {
    const Reference& reference = results.references[c];
    writeImage(reference.image, imageFolder / ("reference_" + slug(reference.camera) + ".png"));
    writeImage(reference.image, imageFolder / ("reference_" + slug(reference.camera) + ".exr"));
    float scale = 0.0f;
    for (const MethodResult& method : results.methods) {
      float used = 0.0f;
      (void)metrics::errorHeatmap(method.cameras[c].image, reference.image, reference.mask, 0.0f, &used);
      scale = std::max(scale, used);
    }
    scales.push_back(scale > 0.0f ? scale : 1.0f);
    for (const MethodResult& method : results.methods) {
      const CameraResult& camera = method.cameras[c];
      const std::string name = imageName(method.method, camera.camera);
      writeImage(camera.image, imageFolder / (name + ".png"));
      writeImage(camera.image, imageFolder / (name + ".exr"));
      writeImage(metrics::errorHeatmap(camera.image, reference.image, reference.mask, scales.back()),
                          imageFolder / (name + "_error.png"));
    }
  }
  return scales;
}

// A method's walkthrough page (compare --export), relative to the report.
std::string pagePath(const std::string& method) { return "pages/" + slug(method) + ".html"; }

std::string resultsCsv(const CompareResults& results) {
  std::ostringstream csv;
  csv << "method,camera,bake_seconds,bytes,display_ms,rel_rmse,rel_mse,energy_r,energy_g,energy_b,hole_pixels,"
         "covered_pixels\n";
  for (const MethodResult& method : results.methods)
    for (const CameraResult& camera : method.cameras)
      csv << method.method << ',' << camera.camera << ',' << format("%.4f", method.bakeSeconds) << ','
          << method.bytes << ',' << format("%.4f", camera.displayMilliseconds) << ','
          << format("%.6f", camera.error.relativeRmse) << ',' << format("%.7f", camera.error.relMse) << ','
          << format("%.5f", camera.error.energyRatio.r) << ',' << format("%.5f", camera.error.energyRatio.g) << ','
          << format("%.5f", camera.error.energyRatio.b) << ',' << camera.holePixels << ',' << camera.coveredPixels
          << '\n';
  return csv.str();
}

std::string convergenceCsv(const CompareResults& results) {
  std::ostringstream csv;
  csv << "method,seconds,mean_rel_rmse,label\n";
  for (const MethodResult& method : results.methods)
    for (const ConvergencePoint& point : method.convergence)
      csv << method.method << ',' << format("%.4f", point.seconds) << ',' << format("%.6f", point.relativeRmse)
          << ",\"" << point.label << "\"\n";
  return csv.str();
}

std::string tableHtml(const CompareResults& results) {
  std::ostringstream html;
  html << "<table id=\"figures\">\n<thead><tr><th>method</th><th>camera</th><th>bake / solve</th><th>memory</th>"
          "<th>display per frame</th><th>relRMSE</th><th>relMSE</th><th>energy ratio R G B</th>"
          "<th>invalid</th></tr></thead>\n<tbody>\n";
  for (const MethodResult& method : results.methods)
    for (const CameraResult& camera : method.cameras) {
      html << "<tr><td>" << htmlEscape(method.method) << "</td><td>" << htmlEscape(camera.camera) << "</td><td>"
           << format("%.2f s", method.bakeSeconds) << "</td><td>"
           << format("%.2f MiB", double(method.bytes) / (1 << 20)) << " <small>" << htmlEscape(method.bytesWhat)
           << "</small></td><td>" << format("%.2f ms", camera.displayMilliseconds) << "</td><td>"
           << format("%.2f%%", 100.0 * camera.error.relativeRmse) << "</td><td>"
           << format("%.5f", camera.error.relMse) << "</td><td>" << format("%.3f ", camera.error.energyRatio.r)
           << format("%.3f ", camera.error.energyRatio.g) << format("%.3f", camera.error.energyRatio.b)
           << "</td><td>";
      if (method.invalidWhat == "hole pixels")
        html << camera.holePixels << " of " << camera.coveredPixels << " <small>hole pixels</small>";
      else if (!method.invalidWhat.empty())
        html << method.invalid << " <small>" << htmlEscape(method.invalidWhat) << "</small>";
      else
        html << "&ndash;";
      html << "</td></tr>\n";
    }
  html << "</tbody></table>\n";
  return html.str();
}

std::string gridHtml(const CompareResults& results, const std::vector<float>& scales) {
  std::ostringstream html;
  for (std::size_t c = 0; c < results.references.size(); ++c) {
    const Reference& reference = results.references[c];
    html << "<h3>Camera " << htmlEscape(reference.camera) << "</h3>\n<div class=\"grid\">\n";
    html << "<figure><img src=\"images/reference_" << slug(reference.camera) << ".png\" alt=\"reference\">"
         << "<figcaption>reference (" << (reference.spp > 0 ? std::to_string(reference.spp) + " spp" : "")
         << htmlEscape(reference.source == "rendered" ? "" : reference.source) << ")</figcaption></figure>\n";
    for (const MethodResult& method : results.methods) {
      const CameraResult& camera = method.cameras[c];
      html << "<figure><img src=\"images/" << imageName(method.method, camera.camera) << ".png\" alt=\""
           << htmlEscape(method.method) << "\"><figcaption>" << htmlEscape(method.method) << ", relRMSE "
           << format("%.2f%%", 100.0 * camera.error.relativeRmse) << "</figcaption></figure>\n";
    }
    html << "</div>\n<div class=\"grid\">\n<figure class=\"legend\"><div class=\"ramp\"></div><figcaption>per-pixel "
            "relative error, 0 (blue) to "
         << format("%.3g", scales[c]) << " (red); grey = emitter, not compared</figcaption></figure>\n";
    for (const MethodResult& method : results.methods) {
      const CameraResult& camera = method.cameras[c];
      html << "<figure><img src=\"images/" << imageName(method.method, camera.camera) << "_error.png\" alt=\""
           << htmlEscape(method.method) << " error\"><figcaption>" << htmlEscape(method.method)
           << " error</figcaption></figure>\n";
    }
    html << "</div>\n";
  }
  return html.str();
}

}  // namespace

std::string convergenceSvg(const CompareResults& results) {
  // Log-log axes over the points' range, widened to whole decades.
  double tMin = 1e30, tMax = 0.0, eMin = 1e30, eMax = 0.0;
  for (const MethodResult& method : results.methods)
    for (const ConvergencePoint& p : method.convergence) {
      if (!(p.seconds > 0.0) || !(p.relativeRmse > 0.0)) continue;
      tMin = std::min(tMin, p.seconds), tMax = std::max(tMax, p.seconds);
      eMin = std::min(eMin, p.relativeRmse), eMax = std::max(eMax, p.relativeRmse);
    }
  const int width = 640, height = 400, left = 70, right = 170, top = 20, bottom = 50;
  std::ostringstream svg;
  svg << "<svg id=\"convergence\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  if (tMax <= 0.0) {
    svg << "<text x=\"20\" y=\"40\">no convergence points</text></svg>\n";
    return svg.str();
  }
  const double x0 = std::floor(std::log10(tMin)), x1 = std::max(x0 + 1.0, std::ceil(std::log10(tMax)));
  const double y0 = std::floor(std::log10(eMin)), y1 = std::max(y0 + 1.0, std::ceil(std::log10(eMax)));
  const double plotW = width - left - right, plotH = height - top - bottom;
  auto px = [&](double t) { return left + (std::log10(t) - x0) / (x1 - x0) * plotW; };
  auto py = [&](double e) { return top + (1.0 - (std::log10(e) - y0) / (y1 - y0)) * plotH; };
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plotW << "\" height=\"" << plotH
      << "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (double d = x0; d <= x1 + 1e-9; d += 1.0) {
    const double x = px(std::pow(10.0, d));
    svg << "<line x1=\"" << x << "\" y1=\"" << top << "\" x2=\"" << x << "\" y2=\"" << top + plotH
        << "\" stroke=\"#ddd\"/><text x=\"" << x << "\" y=\"" << top + plotH + 16 << "\" text-anchor=\"middle\">"
        << format("%g", std::pow(10.0, d)) << "</text>\n";
  }
  for (double d = y0; d <= y1 + 1e-9; d += 1.0) {
    const double y = py(std::pow(10.0, d));
    svg << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + plotW << "\" y2=\"" << y
        << "\" stroke=\"#ddd\"/><text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
        << format("%g%%", 100.0 * std::pow(10.0, d)) << "</text>\n";
  }
  svg << "<text x=\"" << left + plotW / 2 << "\" y=\"" << height - 12
      << "\" text-anchor=\"middle\">bake / solve time (s, log)</text>\n<text x=\"16\" y=\"" << top + plotH / 2
      << "\" transform=\"rotate(-90 16 " << top + plotH / 2
      << ")\" text-anchor=\"middle\">relRMSE vs reference (log)</text>\n";
  std::size_t m = 0;
  for (const MethodResult& method : results.methods) {
    const char* colour = kCurveColours[m % std::size(kCurveColours)];
    std::ostringstream points;
    for (const ConvergencePoint& p : method.convergence)
      if (p.seconds > 0.0 && p.relativeRmse > 0.0) points << px(p.seconds) << ',' << py(p.relativeRmse) << ' ';
    svg << "<polyline class=\"curve\" data-method=\"" << htmlEscape(method.method) << "\" fill=\"none\" stroke=\""
        << colour << "\" stroke-width=\"2\" points=\"" << points.str() << "\"/>\n";
    for (const ConvergencePoint& p : method.convergence)
      if (p.seconds > 0.0 && p.relativeRmse > 0.0)
        svg << "<circle cx=\"" << px(p.seconds) << "\" cy=\"" << py(p.relativeRmse) << "\" r=\"3.5\" fill=\""
            << colour << "\"><title>" << htmlEscape(method.method + ", " + p.label) << ": "
            << format("%.2f%%", 100.0 * p.relativeRmse) << " at " << format("%.2f s", p.seconds)
            << "</title></circle>\n";
    const double ly = top + 14 + 20.0 * double(m);
    svg << "<line x1=\"" << left + plotW + 12 << "\" y1=\"" << ly << "\" x2=\"" << left + plotW + 36 << "\" y2=\""
        << ly << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/><text x=\"" << left + plotW + 42 << "\" y=\""
        << ly + 4 << "\">" << htmlEscape(method.method) << "</text>\n";
    ++m;
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string resultsJson(const CompareResults& results) {
  const CompareOptions& o = results.options;
  nlohmann::json json;
  char fingerprint[32];
  std::snprintf(fingerprint, sizeof fingerprint, "%016llx", static_cast<unsigned long long>(results.sceneFingerprint));
  json["scene"] = {{"name", results.sceneName},
                   {"argument", o.scene},
                   {"fingerprint", fingerprint},
                   {"triangles", results.triangles}};
  json["settings"] = {{"quality", qualityName(o.quality)}, {"budgetSeconds", o.budgetSeconds},
                      {"width", o.width},                 {"height", o.height},
                      {"seed", o.seed},                   {"referenceSpp", o.referenceSpp},
                      {"methods", o.methods},             {"cameras", o.cameras}};
  json["machine"] = {{"gpu", results.gpu}, {"cpu", results.cpu}};
  json["references"] = nlohmann::json::array();
  for (const Reference& r : results.references)
    json["references"].push_back({{"camera", r.camera}, {"source", r.source}, {"spp", r.spp}, {"seconds", r.seconds},
                                  {"image", "images/reference_" + slug(r.camera) + ".exr"}});
  json["methods"] = nlohmann::json::array();
  for (const MethodResult& m : results.methods) {
    nlohmann::json method = {{"method", m.method},
                             {"summary", m.summary},
                             {"settings", nlohmann::json::parse(m.settingsJson.empty() ? "{}" : m.settingsJson)},
                             {"bakeSeconds", m.bakeSeconds},
                             {"bytes", m.bytes},
                             {"bytesWhat", m.bytesWhat},
                             {"invalid", m.invalid},
                             {"invalidWhat", m.invalidWhat}};
    method["cameras"] = nlohmann::json::array();
    for (const CameraResult& c : m.cameras)
      method["cameras"].push_back({{"camera", c.camera},
                                   {"relRmse", c.error.relativeRmse},
                                   {"relMse", c.error.relMse},
                                   {"energyRatio", {c.error.energyRatio.r, c.error.energyRatio.g, c.error.energyRatio.b}},
                                   {"displayMilliseconds", c.displayMilliseconds},
                                   {"holePixels", c.holePixels},
                                   {"coveredPixels", c.coveredPixels},
                                   {"image", "images/" + imageName(m.method, c.camera) + ".exr"}});
    method["convergence"] = nlohmann::json::array();
    for (const ConvergencePoint& p : m.convergence)
      method["convergence"].push_back({{"seconds", p.seconds}, {"relRmse", p.relativeRmse}, {"label", p.label}});
    json["methods"].push_back(std::move(method));
  }
  return json.dump(2) + "\n";
}

// Writes the report's files into `staging`, a new folder.
static void writeReportFiles(const CompareResults& results, const fs::path& staging) {
  fs::create_directories(staging / "images");
  const std::vector<float> scales = writeImages(results, staging / "images");
  writeBytes(staging / "results.json", resultsJson(results));
  writeBytes(staging / "results.csv", resultsCsv(results));
  writeBytes(staging / "convergence.csv", convergenceCsv(results));
  for (const MethodResult& method : results.methods)
    if (!method.page.empty()) {
      fs::create_directories(staging / "pages");
      writeBytes(staging / pagePath(method.method), method.page);
    }

  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ibrr compare: "
       << htmlEscape(results.sceneName) << "</title>\n<style>\n"
       << "body{font-family:sans-serif;margin:24px;max-width:1400px;color:#222}"
          "table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:4px 8px;"
          "text-align:right}td:first-child,td:nth-child(2),th{text-align:left}th{background:#f3f3f3}"
          ".grid{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0}figure img{display:block;width:"
       << std::min(results.options.width, 320)
       << "px;image-rendering:pixelated}figcaption{font-size:12px;max-width:320px}"
          ".ramp{width:256px;height:16px;background:linear-gradient(to right,#30123b,#4686fb,#1be5b5,#a4fc3c,"
          "#fbb938,#e4460a,#7a0403)}pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px}\n"
       << "</style></head><body>\n<h1>ibrr compare: " << htmlEscape(results.sceneName) << "</h1>\n<p>"
       << results.triangles << " triangles; " << results.references.size() << " camera(s) at "
       << results.options.width << "&times;" << results.options.height << "; quality "
       << qualityName(results.options.quality)
       << (results.options.budgetSeconds > 0 ? format(", budget %.0f s per method", results.options.budgetSeconds)
                                             : std::string())
       << "; seed " << results.options.seed << ".<br>GPU: " << htmlEscape(results.gpu) << "; CPU: "
       << htmlEscape(results.cpu)
       << ".<br>Errors exclude the pixels that show an emitter. Display time is each method's own per-frame work "
          "at the report size (IBRR: the reconstruction pass; lightmap: the textured draw; Keller: every VPL's "
          "shadow map and shading). Images were rendered with four samples a pixel on a rotated grid, "
          "averaged.</p>\n"
       << "<p>Images loaded: <span id=\"images-loaded\">not yet</span></p>\n"
       << "<h2>Figures</h2>\n"
       << tableHtml(results) << "<h2>Error against bake / solve time</h2>\n<p>IBRR after 1/8, 1/4, 1/2 and all "
       << "of its light paths; lightmap solvers after every iteration; Keller's one point is its frame time.</p>\n"
       << convergenceSvg(results) << "<h2>Pictures</h2>\n"
       << gridHtml(results, scales) << "<h2>Methods and settings</h2>\n";
  for (const MethodResult& method : results.methods)
    html << "<h3>" << htmlEscape(method.method) << "</h3><p>" << htmlEscape(method.summary)
         << (method.page.empty() ? std::string()
                                 : " <a class=\"walkthrough\" href=\"" + pagePath(method.method) +
                                       "\">Walk through it in the browser</a> (WebGL 2)")
         << "</p><pre>"
         << htmlEscape(nlohmann::json::parse(method.settingsJson.empty() ? "{}" : method.settingsJson).dump(2))
         << "</pre>\n";
  html << "<p>All figures: <a href=\"results.json\">results.json</a>, <a href=\"results.csv\">results.csv</a>, "
          "<a href=\"convergence.csv\">convergence.csv</a>.</p>\n"
       << "<script>window.addEventListener('load',function(){var n=0;document.querySelectorAll('img')"
          ".forEach(function(i){if(i.complete&&i.naturalWidth>0)n++;});"
          "document.getElementById('images-loaded').textContent=n+' of '+document.images.length;});</script>\n"
       << "</body></html>\n";
  writeBytes(staging / "index.html", html.str());
}

void checkReportFolder(const fs::path& folder) {
  const fs::path target = fs::absolute(folder).lexically_normal();
  const fs::path parent = target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw Error("report folder " + target.string() + ": its parent folder does not exist; create it first");
  if (access(parent.c_str(), W_OK) != 0)
    throw Error("report folder " + target.string() + ": its parent folder is not writable; choose another -o");
  if (!fs::exists(fs::symlink_status(target, ec))) return;
  if (fs::is_symlink(fs::symlink_status(target, ec)) || !fs::is_directory(target, ec))
    throw Error("report folder " + target.string() + " exists and is not a folder; choose another -o");
  const bool previousReport = fs::is_regular_file(target / "index.html", ec) &&
                              fs::is_regular_file(target / "results.json", ec);
  if (!previousReport && !fs::is_empty(target, ec))
    throw Error("report folder " + target.string() +
                " holds files that are not an ibrr report; ibrr replaces only its own reports: choose another -o");
  if (const auto input = recordedInputInside(target))
    throw Error("report folder " + target.string() + " holds " + *input +
                " this command reads; choose another -o (nothing was written)");
}

void writeReport(const CompareResults& results, const fs::path& folder) {
  checkReportFolder(folder);  // again: every input is read and recorded now
  const fs::path target = fs::absolute(folder).lexically_normal();
  const fs::path parent = target.parent_path();
  // A unique staging folder beside the target, never a fixed name that could be the user's.
  std::string pattern = (parent / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw Error("report folder " + target.string() + ": cannot create a temporary folder beside it (" +
                std::strerror(errno) + ")");
  const fs::path staging = pattern;
  std::error_code ec;
  try {
    writeReportFiles(results, staging);
    throwIfInterrupted();
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  // Swap the finished report in; the previous one (if any) is removed only after the swap.
  if (fs::exists(target, ec)) {
    std::string previousPattern = (parent / ("." + target.filename().string() + ".old-XXXXXX")).string();
    if (!mkdtemp(previousPattern.data())) {
      fs::remove_all(staging, ec);
      throw Error("report folder " + target.string() + ": cannot create a temporary folder beside it");
    }
    const fs::path previous = previousPattern;
    fs::rename(target, previous / "report");
    fs::rename(staging, target);
    fs::remove_all(previous, ec);
  } else {
    fs::rename(staging, target);
  }
  info("wrote " + (target / "index.html").string());
}


}  // namespace ibrr::compare
