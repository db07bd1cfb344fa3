#pragma once
// Reading plugin manifests (libtg-<name>.json): the loader learns a plugin's name, devices
// and priority from this file alone, without loading the library.
#include <filesystem>
#include <string>
#include <vector>

namespace tg::detail {

struct Manifest {
  std::string name;
  std::string version;
  int abi_major = -1;
  int abi_minor = -1;
  std::string library; // file name, relative to the manifest's folder
  std::vector<std::string> devices;
  std::vector<std::string> renderers;
  std::vector<std::string> requirements;
  std::string os;
  std::string arch;
  int priority = 0;
};

// Parses manifest text; `origin` names it in errors. Throws tg::Error naming the bad field.
Manifest parse_manifest(const std::string& json, const std::string& origin);
// Reads and parses a manifest file. Throws tg::Error naming the file.
Manifest read_manifest(const std::filesystem::path& path);

} // namespace tg::detail
