#include "options.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "help_requested.hpp"
#include "tg/error.hpp"

namespace tinyrun {

using tg::Error;

Options::Options(std::string command, const std::vector<std::string>& args,
                 const std::vector<std::string>& known, std::vector<std::string>* positional)
    : cmd_(std::move(command)) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (is_help_flag(a)) {
      std::string list;
      for (const std::string& k : known) list += " [--" + k + " V]";
      throw HelpRequested("usage: tinyrun " + cmd_ + list + "\n");
    }
    if (a.rfind("--", 0) != 0) {
      if (positional) {
        positional->push_back(a);
        continue;
      }
      throw Error(cmd_ + ": unexpected argument '" + a + "' (options are --name VALUE)");
    }
    std::string name = a.substr(2), value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      if (i + 1 >= args.size()) throw Error(cmd_ + ": --" + name + " needs a value");
      value = args[++i];
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += " --" + k;
      throw Error(cmd_ + ": unknown option --" + name + " (known:" + list + ")");
    }
    values_[name] = value;
  }
}

std::string Options::str(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

int64_t Options::integer(const std::string& name, int64_t fallback, int64_t min,
                         int64_t max) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno == ERANGE)
    throw Error(cmd_ + ": --" + name + " must be an integer, got '" + it->second + "'");
  if (v < min)
    throw Error(cmd_ + ": --" + name + " must be at least " + std::to_string(min) + ", got " +
                it->second);
  if (v > max)
    throw Error(cmd_ + ": --" + name + " must be at most " + std::to_string(max) + ", got " +
                it->second);
  return v;
}

double Options::real(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || !(v > 0))
    throw Error(cmd_ + ": --" + name + " must be a positive number, got '" + it->second + "'");
  return v;
}

int dispatch_subcommand(const std::string& command, const std::vector<std::string>& args,
                        const std::vector<std::pair<std::string, Subcommand>>& subcommands,
                        void (*usage)(std::FILE*)) {
  const std::string sub = args.empty() ? "" : args[0];
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  for (const auto& [name, run] : subcommands)
    if (sub == name) return run(rest);
  if (sub == "-h" || sub == "--help" || sub == "help") {
    usage(stdout);
    return 0;
  }
  std::fprintf(stderr, "%s: %s\n", command.c_str(),
               sub.empty() ? "a subcommand is needed"
                           : ("unknown subcommand '" + sub + "'").c_str());
  usage(stderr);
  return 2;
}

} // namespace tinyrun
