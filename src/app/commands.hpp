#pragma once
// The `ibrr` subcommands. Each add*Command() adds one subcommand (with its own --help) to the
// top-level CLI11 app and installs its callback; main.cpp lists them in one table.
#include <CLI/CLI.hpp>

namespace ibrr::app {

void addInfoCommand(CLI::App& app);
void addBakeCommand(CLI::App& app);
void addRenderCommand(CLI::App& app);
void addReferenceCommand(CLI::App& app);
void addDiffCommand(CLI::App& app);
void addBenchCommand(CLI::App& app);
void addViewCommand(CLI::App& app);
void addCompareCommand(CLI::App& app);
void addExportCommand(CLI::App& app);

}  // namespace ibrr::app
