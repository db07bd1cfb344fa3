// Option parsing for `tinyrun llm`; see cli_options.hpp.
#include "cli_options.hpp"

#include <cstdlib>

#include "help_requested.hpp"
#include "tg/error.hpp"

namespace tg::llm {

ParsedOptions::ParsedOptions(const std::string& cmd, const std::vector<std::string>& args,
                             const std::vector<OptionSpec>& specs)
    : cmd_(cmd) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], value;
    bool has_value = false;
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) {
      positional_.push_back(a);
      continue;
    }
    if (const size_t eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs)
      for (const std::string& n : s.names)
        if (n == a) spec = &s;
    if (!spec && tinyrun::is_help_flag(a))
      throw tinyrun::HelpRequested("usage: tinyrun llm " + cmd + " [options]\n" +
                                   options_help(specs));
    if (!spec)
      throw Error("llm " + cmd + ": unknown option '" + a + "'; the options are:\n" +
                  options_help(specs));
    if (spec->takes_value && !has_value) {
      if (i + 1 >= args.size()) throw Error("llm " + cmd + ": " + a + " needs a value");
      value = args[++i];
    } else if (!spec->takes_value && has_value) {
      throw Error("llm " + cmd + ": " + a + " takes no value");
    }
    values_[spec->names.front()] = spec->takes_value ? value : "1";
  }
}

std::string ParsedOptions::str(const std::string& c, const std::string& fallback) const {
  auto it = values_.find(c);
  return it == values_.end() ? fallback : it->second;
}

int64_t ParsedOptions::integer(const std::string& c, int64_t fallback) const {
  auto it = values_.find(c);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end)
    throw Error("llm " + cmd_ + ": " + c + " '" + it->second + "' is not an integer");
  return v;
}

double ParsedOptions::number(const std::string& c, double fallback) const {
  auto it = values_.find(c);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end)
    throw Error("llm " + cmd_ + ": " + c + " '" + it->second + "' is not a number");
  return v;
}

std::string options_help(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const OptionSpec& s : specs) {
    std::string names;
    for (const std::string& n : s.names) names += (names.empty() ? "" : ", ") + n;
    if (s.takes_value) names += " V";
    out +=
        "  " + names + std::string(names.size() < 30 ? 30 - names.size() : 1, ' ') + s.help + "\n";
  }
  return out;
}

} // namespace tg::llm
