#pragma once
// Where the loader looks for plugins, in order (see tg/device_registry.hpp).
#include <filesystem>
#include <vector>

namespace tg::detail {

// TG_PLUGIN_PATH's entries, the folder next to libtg, the install prefix's, the executable's.
std::vector<std::filesystem::path> standard_plugin_locations();

// The manifests (libtg-*.json) at `location`: the file itself when it is one (or the manifest
// beside a libtg-*.so), else the folder's manifests sorted by name. Libraries without a
// manifest are returned as themselves so the loader can report them.
std::vector<std::filesystem::path> plugin_files_at(const std::filesystem::path& location);

} // namespace tg::detail
