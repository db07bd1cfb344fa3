#pragma once
// `-h` or `--help` after a subcommand (`tinyrun llm random --help`, `tinyrun mnist train -h`):
// the option parser that meets it throws this with the subcommand's usage, and main prints the
// text to stdout and exits 0, so a request for help is never an error.
#include <string>
#include <utility>

namespace tinyrun {

struct HelpRequested {
  std::string usage;
  explicit HelpRequested(std::string text) : usage(std::move(text)) {}
};

inline bool is_help_flag(const std::string& arg) { return arg == "-h" || arg == "--help"; }

} // namespace tinyrun
