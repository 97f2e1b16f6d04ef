#pragma once
// The report of `ibrr compare`, a folder that opens in any browser without a network:
//   index.html       the table of figures, the image grid (camera × reference and methods), the
//                    false-colour error images and the error-against-time plot (inline SVG);
//   results.json     every figure and the exact settings, for later comparison;
//   results.csv      one row per method and camera;  convergence.csv  one row per curve point;
//   images/          PNG pictures (tone-mapped as `ibrr render` does) and the linear EXRs.
// The folder is written under a temporary name and swapped in at the end, so a failure never
// leaves a half-written report or loses the previous one.
#include "compare/compare.hpp"

#include <filesystem>
#include <string>

namespace ibrr::compare {

void writeReport(const CompareResults& results, const std::filesystem::path& folder);

// The checks writeReport makes before it replaces anything, for a command to make before its work:
// the parent folder exists and is writable; an existing `folder` is a previous report (index.html
// and results.json) or empty, never another folder of the user's; and no file the command has
// read lies inside it. Throws ibrr::Error naming the folder and the fix.
void checkReportFolder(const std::filesystem::path& folder);

// The results as JSON (also written to results.json).
std::string resultsJson(const CompareResults& results);

// The error-against-time plot: log-log, one polyline per method, as a standalone <svg> element.
std::string convergenceSvg(const CompareResults& results);

}  // namespace ibrr::compare
