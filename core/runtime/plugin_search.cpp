#include "plugin_search.hpp"

#include <algorithm>
#include <dlfcn.h>
#include <system_error>

#include "tg/knobs.hpp"

namespace fs = std::filesystem;

namespace tg::detail {
namespace {

// The folder of libtg.so itself: dladdr on a function that lives in it.
fs::path core_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&standard_plugin_locations), &info) == 0 ||
      info.dli_fname == nullptr)
    return {};
  std::error_code ec;
  fs::path p = fs::canonical(info.dli_fname, ec);
  return ec ? fs::path() : p.parent_path();
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::vector<fs::path> standard_plugin_locations() {
  std::vector<fs::path> out;
  std::string env = knobs::TG_PLUGIN_PATH.get();
  size_t start = 0;
  while (start <= env.size() && !env.empty()) {
    size_t colon = env.find(':', start);
    std::string item =
        env.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    // A relative entry would make the result depend on the working directory; skip it.
    if (!item.empty() && fs::path(item).is_absolute()) out.emplace_back(item);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (fs::path core = core_library_dir(); !core.empty()) out.push_back(core / "tg" / "plugins");
  out.emplace_back(TG_INSTALL_PLUGIN_DIR);
  if (fs::path exe = executable_dir(); !exe.empty()) {
    out.push_back(exe);
    out.push_back(exe / "tg" / "plugins");
  }
  // The same folder reached twice (build tree == install prefix) is searched once.
  std::vector<fs::path> unique;
  for (const fs::path& p : out) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(p, ec);
    if (ec) key = p;
    if (std::find(unique.begin(), unique.end(), key) == unique.end()) unique.push_back(key);
  }
  return unique;
}

std::vector<fs::path> plugin_files_at(const fs::path& location) {
  std::error_code ec;
  if (fs::is_regular_file(location, ec)) {
    std::string name = location.filename().string();
    if (ends_with(name, ".so")) {
      fs::path manifest = location;
      manifest.replace_extension(".json");
      if (fs::exists(manifest, ec)) return {manifest};
    }
    return {location};
  }
  if (!fs::is_directory(location, ec)) return {};
  std::vector<fs::path> manifests, libraries;
  for (const fs::directory_entry& e : fs::directory_iterator(location, ec)) {
    std::string name = e.path().filename().string();
    if (!starts_with(name, "libtg-")) continue;
    if (ends_with(name, ".json"))
      manifests.push_back(e.path());
    else if (ends_with(name, ".so"))
      libraries.push_back(e.path());
  }
  for (const fs::path& lib : libraries) {
    fs::path manifest = lib;
    manifest.replace_extension(".json");
    if (std::find(manifests.begin(), manifests.end(), manifest) == manifests.end())
      manifests.push_back(lib);
  }
  std::sort(manifests.begin(), manifests.end());
  return manifests;
}

} // namespace tg::detail
