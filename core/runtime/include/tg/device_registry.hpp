#pragma once
// The device registry: finds device plugins (libtg-<name>.so with a libtg-<name>.json
// manifest beside it), loads them lazily, checks their handshake and hands out devices.
//
// Search order (first plugin of a name wins; later ones are recorded as shadowed):
//   1. paths given to add_search_path(), in the order given (folders or files)
//   2. TG_PLUGIN_PATH, colon-separated folders or files
//   3. <folder of libtg.so>/tg/plugins
//   4. <install prefix>/lib/tg/plugins
//   5. <folder of the executable> and <folder of the executable>/tg/plugins
// Never the working directory.
//
// Manifests are read without loading anything. A library is loaded (RTLD_NOW | RTLD_LOCAL),
// checked and probed on first enumeration (plugins()) or when a device it serves is asked
// for, and its device is created on first use. Libraries are never unloaded.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tg/plugin/device.hpp"

namespace tg {

// DEV=DEVICE[:N][:RENDERER[:ARCH]], e.g. "CPU", "cpu:c", "CUDA:PTX:sm_90", "CL:1" (the second
// OpenCL device). The device name is upper-cased and carries the index ("CL:1"; index 0 is
// dropped: "CL:0" is "CL"); renderer and arch are kept as given (renderers match
// case-insensitively). A plugin serves every index of the kinds its manifest lists: its
// create() receives the device name with the index.
struct DeviceSpec {
  std::string device;                               // "CPU", "CL:1"
  std::string kind() const;                         // the device without its index: "CL"
  std::string renderer;                             // empty: the device's default
  std::string arch;                                 // empty: the device's default
  static DeviceSpec parse(const std::string& spec); // throws tg::Error on an empty or bad spec
  std::string str() const;
};

enum class PluginState {
  found,       // manifest read, library not loaded yet
  loaded,      // (transient) loaded and handshake accepted, not probed yet
  available,   // probe() says a device can be created here
  unavailable, // probe() or create() said no; `reason` says why
  refused,     // the loader will not use it; `reason` names the file and what to do
  shadowed,    // another plugin of the same name was found first
};
std::string_view to_string(PluginState s);

struct PluginInfo {
  std::string name;
  std::filesystem::path library_path;
  std::filesystem::path manifest_path;
  std::string version;
  std::string abi; // "1.0" from the manifest; "1.0 gcc12/libstdc++-cxx11abi1/release" once loaded
  std::vector<std::string> devices;
  std::vector<std::string> renderers;
  std::vector<std::string> requirements; // the manifest's "requires"
  int priority = 0;
  PluginState state = PluginState::found;
  std::string reason;
};

class DeviceRegistry {
public:
  // standard_locations=false searches only the add_search_path() paths (for tests).
  explicit DeviceRegistry(bool standard_locations = true);
  ~DeviceRegistry();
  DeviceRegistry(const DeviceRegistry&) = delete;
  DeviceRegistry& operator=(const DeviceRegistry&) = delete;

  // The process-wide registry with the standard search order.
  static DeviceRegistry& global();

  // Searched before every other location. Add paths before the first enumeration: plugins
  // found earlier keep their names.
  void add_search_path(const std::filesystem::path& path);
  // The folders and files searched, in order.
  std::vector<std::filesystem::path> search_path() const;

  // Every manifest found, nothing loaded.
  std::vector<PluginInfo> manifests();
  // Every manifest found, each library loaded, checked and probed.
  std::vector<PluginInfo> plugins();
  // Upper-case names of the devices whose plugin is available, highest priority first.
  std::vector<std::string> available_devices();

  // The device named by `spec` ("CPU", "CPU:C"), created on first use and shared after.
  // Raises tg::Error with every candidate's reason and the available devices when it cannot.
  std::shared_ptr<Device> open(const std::string& spec);
  std::shared_ptr<Device> open(const DeviceSpec& spec);
  // DEV when set (an explicit request: failures raise); otherwise the available device of
  // highest priority whose create() succeeds (CPU before NULL).
  std::shared_ptr<Device> default_device();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The renderer of `device` that `spec` asks for, with the device's spelling ("C" for "c");
// the device's default when spec.renderer is empty. Raises tg::Error listing its renderers.
std::string resolve_renderer(const Device& device, const DeviceSpec& spec);

} // namespace tg
