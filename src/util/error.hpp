#pragma once
// Errors caused by the user's input (files, flags, manifests) are ibrr::Error exceptions whose
// message names the file (and line or key) and what to do; programmer errors are asserts.
#include "ibrr/error.hpp"
