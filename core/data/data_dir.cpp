// Where the project's data folder is; see tg/data.hpp.
#include "tg/data.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"

#include <vector>

namespace tg::data {

namespace fs = std::filesystem;

std::optional<fs::path> data_dir(const fs::path& repo_root) {
  if (const std::string env = knobs::TG_DATA_DIR.get(); !env.empty()) {
    if (fs::is_directory(env)) return fs::path(env);
    throw Error("TG_DATA_DIR=" + env + " is not a directory");
  }
  if (!repo_root.empty()) {
    const fs::path shared = repo_root / ".." / "shared" / "data";
    if (fs::is_directory(shared)) return fs::weakly_canonical(shared);
  }
  if (const std::string home = knobs::HOME.get(); !home.empty()) {
    const fs::path cache = fs::path(home) / ".cache" / "tg";
    if (fs::is_directory(cache)) return cache;
  }
  return std::nullopt;
}

std::optional<fs::path> find_data(const fs::path& relative, const fs::path& repo_root) {
  std::vector<fs::path> roots;
  if (const std::string env = knobs::TG_DATA_DIR.get(); !env.empty()) roots.emplace_back(env);
  if (!repo_root.empty()) roots.push_back(repo_root / ".." / "shared" / "data");
  if (const std::string home = knobs::HOME.get(); !home.empty())
    roots.push_back(fs::path(home) / ".cache" / "tg");
  for (const fs::path& r : roots) {
    std::error_code ec;
    if (fs::exists(r / relative, ec)) return fs::weakly_canonical(r / relative);
  }
  return std::nullopt;
}

} // namespace tg::data
