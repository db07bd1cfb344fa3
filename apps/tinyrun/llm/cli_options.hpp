#pragma once
// Command-line options of `tinyrun llm`, spelled as llama.cpp spells them so its users' habits
// work: each option has its names (`-m`, `--model`), whether it takes a value, and a help line.
// Options are data: one table per subcommand.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tg::llm {

struct OptionSpec {
  std::vector<std::string> names; // the first is canonical ("--model"), the rest aliases
  bool takes_value = true;
  std::string help;
};

class ParsedOptions {
public:
  // Parses `args` against `specs`; positional arguments are kept in order. tg::Error naming the
  // option for an unknown one, a missing value, or a value given to a flag.
  ParsedOptions(const std::string& cmd, const std::vector<std::string>& args,
                const std::vector<OptionSpec>& specs);
  bool has(const std::string& canonical) const { return values_.count(canonical) > 0; }
  std::string str(const std::string& canonical, const std::string& fallback = "") const;
  int64_t integer(const std::string& canonical, int64_t fallback) const;
  double number(const std::string& canonical, double fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

private:
  std::string cmd_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

std::string options_help(const std::vector<OptionSpec>& specs);

} // namespace tg::llm
