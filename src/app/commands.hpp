#pragma once
// The `ibrr` subcommands. Each add*Command() adds one subcommand (with its own --help) to the
// top-level CLI11 app and installs its callback; command_line.cpp lists them in one table.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

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

// Parses `ibrr ARGUMENTS...` (argv[0] the program) and runs the command, in this process; returns the exit code
// (0, or the failure's: 1 bad input, 2 a refused command line, 3 no GL, 4 a bug, 5 out of memory, 130/143 a signal)
// after printing the one-line message. The table of methods is read when the commands are made.
int runCommandLine(int argc, char** argv);
int runCommandLine(std::vector<std::string> arguments);

}  // namespace ibrr::app
