#pragma once
// The options of a tinyrun subcommand: `--name value` or `--name=value`, every option taking a
// value, unknown names refused with the list of the known ones. Errors are tg::Error prefixed
// with the command ("mnist train: --steps must be an integer, got 'x'").
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tinyrun {

class Options {
public:
  // `command` names the subcommand in messages ("cifar train"); `positional` is where words
  // that are not options go (nullptr: they are refused).
  Options(std::string command, const std::vector<std::string>& args,
          const std::vector<std::string>& known, std::vector<std::string>* positional = nullptr);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string str(const std::string& name, const std::string& fallback) const;
  // An integer >= min (and <= max).
  int64_t integer(const std::string& name, int64_t fallback, int64_t min,
                  int64_t max = INT64_MAX) const;
  // A positive number.
  double real(const std::string& name, double fallback) const;

private:
  std::string cmd_;
  std::map<std::string, std::string> values_;
};

// Runs the subcommand named by args[0] with the rest of the arguments: `help`, `-h` and
// `--help` print `usage` to stdout (exit 0); a missing or unknown subcommand says so and prints
// `usage` to stderr (exit 2). `command` names the command in messages ("tinyrun mnist").
using Subcommand = std::function<int(const std::vector<std::string>&)>;
int dispatch_subcommand(const std::string& command, const std::vector<std::string>& args,
                        const std::vector<std::pair<std::string, Subcommand>>& subcommands,
                        void (*usage)(std::FILE*));

} // namespace tinyrun
