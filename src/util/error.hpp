#pragma once
// Errors caused by the user's input (files, flags, manifests) are ibrr::Error exceptions whose message names the
// file (and line or key) and what to do; a state only a bug can cause is an IBRR_CHECK, which throws
// ibrr::InternalError (`ibrr` exits 4 on it; 2 on an OptionError, a setting refused before any work, and on a command
// line CLI11 refuses; 1 on any other Error). Both are the store
// library's (ibrr/error.hpp), which every library shares.
#include "ibrr/error.hpp"
