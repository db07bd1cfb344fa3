#pragma once
// Helpers for the plugin tests: where the test plugins are, a scratch folder, and scoped
// environment variables.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>

namespace tg::test {

inline std::filesystem::path case_dir(const std::string& name) {
  return std::filesystem::path(TG_TEST_CASES) / name;
}
// The library of test plugin `name` in its case folder.
inline std::string case_lib(const std::string& dir, const std::string& name) {
  return (case_dir(dir) / ("libtg-" + name + ".so")).string();
}

class TempDir {
public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("tg-test-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

// Sets (or unsets, with nullopt) an environment variable for the scope.
class ScopedEnv {
public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  const char* name_;
  std::optional<std::string> old_;
};

} // namespace tg::test
