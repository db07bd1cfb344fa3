#pragma once
// Helpers for the plugin tests: where the test plugins are and a scratch folder. Knobs are
// overridden with tg::Context (tg/knobs.hpp).
#include <filesystem>
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

} // namespace tg::test
