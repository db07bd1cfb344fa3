// The plugin loader. Scanning reads manifests only; load() dlopens a library and checks its
// handshake in the order the refusals are documented (tg/device_registry.hpp), so the first
// problem found is the one reported; create() happens on first use.
#include "tg/device_registry.hpp"

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cstdio>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <set>

#include "abi_adapter.hpp"
#include "plugin_manifest.hpp"
#include "plugin_search.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/plugin/abi.hpp"

namespace fs = std::filesystem;

namespace tg {

std::string_view to_string(PluginState s) {
  switch (s) {
  case PluginState::found:
    return "found";
  case PluginState::loaded:
    return "loaded";
  case PluginState::available:
    return "available";
  case PluginState::unavailable:
    return "unavailable";
  case PluginState::refused:
    return "refused";
  case PluginState::shadowed:
    return "shadowed";
  }
  return "?";
}

namespace {

using Library = boost::dll::shared_library;

// Libraries are never unloaded: code from a plugin may still be referenced (vtables, thread
// functions) after every object we know of is gone. Leaked on purpose, so no exit-time
// destructor runs either.
void keep_forever(const std::shared_ptr<Library>& lib) {
  static auto* mu = new std::mutex();
  static auto* libs = new std::vector<std::shared_ptr<Library>>();
  std::lock_guard lock(*mu);
  libs->push_back(lib);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string abi_string(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

constexpr size_t kWhyLen = 1024;

struct Entry {
  PluginInfo info;
  std::shared_ptr<Library> library;
  const tg_plugin_info_v1* handshake = nullptr;
  // Created devices, by "DEVICE:ARCH" (one instance per architecture).
  std::map<std::string, std::shared_ptr<Device>> devices;
};

} // namespace

struct DeviceRegistry::Impl {
  bool standard = true;
  std::vector<fs::path> explicit_paths;
  std::vector<std::unique_ptr<Entry>> entries; // search order
  std::set<fs::path> seen;
  bool scanned = false;
  std::mutex mu;

  std::vector<fs::path> locations() const {
    std::vector<fs::path> out = explicit_paths;
    if (standard)
      for (const fs::path& p : detail::standard_plugin_locations()) out.push_back(p);
    return out;
  }

  void scan() {
    if (scanned) return;
    scanned = true;
    for (const fs::path& location : locations())
      for (const fs::path& file : detail::plugin_files_at(location)) {
        std::error_code ec;
        fs::path key = fs::weakly_canonical(file, ec);
        if (ec) key = file;
        if (seen.insert(key).second) add_file(file);
      }
  }

  void add_file(const fs::path& file) {
    auto e = std::make_unique<Entry>();
    PluginInfo& info = e->info;
    std::string stem = file.stem().string();
    info.name = stem.rfind("libtg-", 0) == 0 ? stem.substr(6) : stem;
    if (file.extension() == ".so") {
      info.library_path = file;
      fs::path manifest = file;
      manifest.replace_extension(".json");
      refuse(*e, file.string() + ": no manifest " + manifest.filename().string() +
                     " beside it; reinstall the plugin (tg_add_plugin() writes both files)");
      entries.push_back(std::move(e));
      return;
    }
    info.manifest_path = file;
    try {
      detail::Manifest m = detail::read_manifest(file);
      info.name = m.name;
      info.version = m.version;
      info.abi = std::to_string(m.abi_major) + "." + std::to_string(m.abi_minor);
      info.library_path = file.parent_path() / m.library;
      info.devices = m.devices;
      info.renderers = m.renderers;
      info.requirements = m.requirements;
      info.priority = m.priority;
      if ((!m.os.empty() && m.os != "linux") || (!m.arch.empty() && m.arch != TG_HOST_ARCH))
        refuse(*e, file.string() + ": built for " + m.os + "/" + m.arch +
                       ", this machine is linux/" + TG_HOST_ARCH +
                       "; install the plugin built for this machine");
    } catch (const Error& err) {
      refuse(*e, err.what());
    }
    for (const auto& earlier : entries) {
      if (earlier->info.name != info.name || earlier->info.state == PluginState::shadowed) continue;
      info.state = PluginState::shadowed;
      info.reason = "shadowed by " + earlier->info.manifest_path.string() +
                    " (the first plugin of a name wins)";
      if (knobs::DEBUG >= 1)
        std::fprintf(stderr, "tg: plugin '%s' at %s ignored: %s\n", info.name.c_str(),
                     file.string().c_str(), info.reason.c_str());
      break;
    }
    entries.push_back(std::move(e));
  }

  static void refuse(Entry& e, std::string reason) {
    e.info.state = PluginState::refused;
    e.info.reason = std::move(reason);
  }

  // dlopen, handshake checks, probe. Leaves the entry available, unavailable or refused.
  void load(Entry& e) {
    if (e.info.state != PluginState::found) return;
    const std::string lib = e.info.library_path.string();
    std::error_code fs_ec;
    if (!fs::exists(e.info.library_path, fs_ec))
      return refuse(e, lib + ": library named by " + e.info.manifest_path.string() +
                           " is missing; reinstall the plugin");
    auto library = std::make_shared<Library>();
    boost::dll::fs::error_code ec;
    library->load(e.info.library_path,
                  boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
    if (ec || !library->is_loaded()) {
      const char* dl = dlerror();
      return refuse(e, lib + ": cannot be loaded: " + (dl != nullptr ? dl : ec.message()) +
                           "; install the missing library or remove the plugin");
    }
    keep_forever(library);
    e.library = library;
    if (!library->has(TG_PLUGIN_QUERY_SYMBOL))
      return refuse(e, lib +
                           ": not a tg plugin: it does not export " TG_PLUGIN_QUERY_SYMBOL
                           "; remove it from " +
                           e.info.library_path.parent_path().string() +
                           " or rebuild it with TG_DEFINE_PLUGIN (tg/plugin/define.hpp)");
    auto query = library->get<const tg_plugin_info_v1*()>(TG_PLUGIN_QUERY_SYMBOL);
    const tg_plugin_info_v1* h = query();
    if (h == nullptr || h->magic != TG_PLUGIN_MAGIC) {
      char got[32];
      std::snprintf(got, sizeof got, "0x%08x", h == nullptr ? 0u : h->magic);
      return refuse(e, lib + ": bad handshake magic " + got +
                           " (expected 0x31505447, \"TGP1\"); "
                           "the library is not a tg plugin or is corrupt: rebuild it");
    }
    // ABI 1.0's struct is the smallest the core reads; later fields are read only when
    // struct_size covers them.
    if (h->struct_size < TG_PLUGIN_INFO_V1_0_SIZE)
      return refuse(e, lib + ": handshake struct is " + std::to_string(h->struct_size) +
                           " bytes, the core needs at least " +
                           std::to_string(TG_PLUGIN_INFO_V1_0_SIZE) +
                           "; rebuild the plugin against this tg");
    e.info.abi = abi_string(h->abi_major, h->abi_minor) + " " + (h->abi_tag ? h->abi_tag : "?");
    const std::string core_abi = abi_string(TG_PLUGIN_ABI_MAJOR, TG_PLUGIN_ABI_MINOR);
    if (h->abi_major != TG_PLUGIN_ABI_MAJOR)
      return refuse(e, lib + ": plugin ABI " + abi_string(h->abi_major, h->abi_minor) +
                           " has a different major version than the core's " + core_abi +
                           "; rebuild the plugin against this tg (" TG_VERSION ")");
    if (h->abi_minor > TG_PLUGIN_ABI_MINOR)
      return refuse(e, lib + ": plugin ABI " + abi_string(h->abi_major, h->abi_minor) +
                           " is newer than the core's " + core_abi +
                           "; upgrade tg or rebuild the plugin against this tg (" TG_VERSION ")");
    const std::string tag = h->abi_tag ? h->abi_tag : "";
    if (tag != TG_PLUGIN_ABI_TAG)
      return refuse(e, lib + ": plugin ABI tag '" + tag + "' differs from the core's '" +
                           TG_PLUGIN_ABI_TAG +
                           "'; rebuild the plugin with the same compiler, "
                           "C++ standard library and build type as tg");
    if (std::string why = manifest_disagreement(e, *h); !why.empty())
      return refuse(e, lib + ": " + why +
                           "; reinstall the plugin so that its .so and .json "
                           "come from the same build");
    e.handshake = h;
    e.info.state = PluginState::loaded;
    char why[kWhyLen] = {};
    if (h->probe == nullptr || h->create == nullptr)
      return refuse(e, lib + ": handshake has no probe() or create(); rebuild the plugin with "
                             "TG_DEFINE_PLUGIN");
    if (h->probe(why, sizeof why) != 1) {
      why[kWhyLen - 1] = 0;
      e.info.state = PluginState::unavailable;
      e.info.reason = lib + ": probe says unavailable: " + (why[0] ? why : "no reason given");
      return;
    }
    e.info.state = PluginState::available;
  }

  // What the file says against what the binary says: name, version, ABI, devices.
  static std::string manifest_disagreement(const Entry& e, const tg_plugin_info_v1& h) {
    const PluginInfo& file = e.info;
    const std::string manifest = file.manifest_path.string();
    std::string name = h.name ? h.name : "", version = h.version ? h.version : "";
    if (name != file.name)
      return "manifest " + manifest + " names plugin '" + file.name + "' but the library is '" +
             name + "'";
    if (version != file.version)
      return "manifest " + manifest + " says version " + file.version + " but the library is " +
             version;
    detail::Manifest built;
    try {
      built = detail::parse_manifest(h.manifest_json ? h.manifest_json : "",
                                     file.library_path.string() + " (embedded manifest)");
    } catch (const Error& err) {
      return err.what();
    }
    if (built.devices != file.devices)
      return "manifest " + manifest + " lists devices [" + join(file.devices, ", ") +
             "] but the library serves [" + join(built.devices, ", ") + "]";
    return {};
  }

  // Whether the plugin's handshake has ABI 1.1's create_arch (and so its objects 1.1's
  // virtuals and caps fields).
  static bool speaks_1_1(const tg_plugin_info_v1& h) {
    return h.abi_minor >= 1 && h.struct_size >= sizeof(tg_plugin_info_v1) && h.create_arch;
  }

  // A device from an available entry for `arch` ("" for the default), created once. Empty
  // with `why` set on failure; a failure for an explicit architecture or device index
  // ("CL:1") leaves the plugin available (another may work).
  std::shared_ptr<Device> create(Entry& e, const std::string& device, const std::string& arch,
                                 std::string& why) {
    const std::string key = device + ":" + arch;
    if (auto it = e.devices.find(key); it != e.devices.end()) return it->second;
    const tg_plugin_info_v1& h = *e.handshake;
    const std::string call = "create(\"" + device + "\"" +
                             (arch.empty() ? std::string() : ", arch \"" + arch + "\"") + ")";
    char buf[kWhyLen] = {};
    Device* raw = nullptr;
    if (speaks_1_1(h)) {
      raw = h.create_arch(device.c_str(), arch.c_str(), buf, sizeof buf);
    } else if (arch.empty()) {
      raw = h.create(device.c_str(), buf, sizeof buf);
    } else {
      why = e.info.library_path.string() + ": " + call + " failed: the plugin has ABI 1.0, " +
            "which cannot take an architecture; rebuild it against this tg";
      return nullptr;
    }
    if (raw == nullptr) {
      buf[kWhyLen - 1] = 0;
      why = e.info.library_path.string() + ": " + call +
            " failed: " + (buf[0] ? buf : "no reason given");
      if (arch.empty() && device.find(':') == std::string::npos) {
        e.info.state = PluginState::unavailable;
        e.info.reason = why;
      }
      return nullptr;
    }
    // The deleter holds the library, so a device outliving the registry keeps its code. An
    // older minor's device is served through the adapter that answers the newer questions.
    std::shared_ptr<Library> lib = e.library;
    std::shared_ptr<Device> dev(raw, [lib](Device* d) { delete d; });
    if (!speaks_1_1(h))
      dev = serve_older_abi(std::move(dev), 0);
    else if (h.abi_minor < TG_PLUGIN_ABI_MINOR)
      dev = serve_older_abi(std::move(dev), h.abi_minor);
    e.devices[key] = dev;
    return dev;
  }

  void load_all() {
    scan();
    for (auto& e : entries) load(*e);
  }

  // Available entries serving `device` (all devices when empty), highest priority first,
  // search order among equals.
  std::vector<Entry*> by_priority() {
    std::vector<Entry*> out;
    for (auto& e : entries) out.push_back(e.get());
    std::stable_sort(out.begin(), out.end(),
                     [](Entry* a, Entry* b) { return a->info.priority > b->info.priority; });
    return out;
  }

  std::vector<std::string> available_devices() {
    load_all();
    std::vector<std::string> out;
    for (Entry* e : by_priority()) {
      if (e->info.state != PluginState::available) continue;
      for (const std::string& d : e->info.devices)
        if (std::find(out.begin(), out.end(), upper(d)) == out.end()) out.push_back(upper(d));
    }
    return out;
  }

  std::string searched() const {
    std::vector<std::string> dirs;
    for (const fs::path& p : locations()) dirs.push_back(p.string());
    return dirs.empty() ? "(nowhere)" : join(dirs, ":");
  }

  std::shared_ptr<Device> open(const DeviceSpec& spec) {
    scan();
    std::vector<std::string> reasons;
    bool any = false;
    for (Entry* e : by_priority()) {
      if (e->info.state == PluginState::shadowed) continue;
      bool serves = false;
      std::string device;
      for (const std::string& d : e->info.devices)
        if (upper(d) == spec.kind())
          serves = true, device = spec.device == spec.kind() ? d : spec.device;
      if (!serves) continue;
      any = true;
      load(*e);
      if (e->info.state != PluginState::available) {
        reasons.push_back(e->info.reason);
        continue;
      }
      std::string why;
      if (std::shared_ptr<Device> dev = create(*e, device, spec.arch, why)) {
        resolve_renderer(*dev, spec); // raises listing the device's renderers
        return dev;
      }
      reasons.push_back(why);
    }
    if (!any)
      reasons.push_back("no plugin provides device " + spec.device + " (searched " + searched() +
                        ")");
    std::vector<std::string> avail = available_devices();
    throw Error("DEV=" + spec.str() + " cannot be served:\n  " + join(reasons, "\n  ") +
                "\navailable devices: " + (avail.empty() ? "none" : join(avail, ", ")) +
                "\nset DEV to an available device, or fix the plugin as its reason says");
  }

  std::shared_ptr<Device> automatic() {
    load_all();
    std::vector<std::string> reasons;
    for (Entry* e : by_priority()) {
      if (e->info.state != PluginState::available) {
        if (e->info.state != PluginState::shadowed) reasons.push_back(e->info.reason);
        continue;
      }
      for (const std::string& d : e->info.devices) {
        std::string why;
        if (std::shared_ptr<Device> dev = create(*e, d, "", why)) return dev;
        reasons.push_back(why);
      }
    }
    throw Error(
        "no device available" +
        (reasons.empty() ? std::string(" (no plugin found)") : ":\n  " + join(reasons, "\n  ")) +
        "\nsearched " + searched() +
        "\ninstall a device plugin (libtg-cpu.so) there or set TG_PLUGIN_PATH");
  }
};

DeviceRegistry::DeviceRegistry(bool standard_locations) : impl_(std::make_unique<Impl>()) {
  impl_->standard = standard_locations;
}

DeviceRegistry::~DeviceRegistry() = default;

DeviceRegistry& DeviceRegistry::global() {
  // Leaked on purpose: devices may run threads that must not be torn down by exit-time
  // destructors in an unknown order.
  static DeviceRegistry* registry = new DeviceRegistry(true);
  return *registry;
}

void DeviceRegistry::add_search_path(const fs::path& path) {
  std::lock_guard lock(impl_->mu);
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  impl_->explicit_paths.push_back(ec ? path : abs);
  impl_->scanned = false; // the next enumeration picks up what the new path holds
}

std::vector<fs::path> DeviceRegistry::search_path() const {
  std::lock_guard lock(impl_->mu);
  return impl_->locations();
}

std::vector<PluginInfo> DeviceRegistry::manifests() {
  std::lock_guard lock(impl_->mu);
  impl_->scan();
  std::vector<PluginInfo> out;
  for (auto& e : impl_->entries) out.push_back(e->info);
  return out;
}

std::vector<PluginInfo> DeviceRegistry::plugins() {
  std::lock_guard lock(impl_->mu);
  impl_->load_all();
  std::vector<PluginInfo> out;
  for (auto& e : impl_->entries) out.push_back(e->info);
  return out;
}

std::vector<std::string> DeviceRegistry::available_devices() {
  std::lock_guard lock(impl_->mu);
  return impl_->available_devices();
}

std::shared_ptr<Device> DeviceRegistry::open(const std::string& spec) {
  return open(DeviceSpec::parse(spec));
}

std::shared_ptr<Device> DeviceRegistry::open(const DeviceSpec& spec) {
  std::lock_guard lock(impl_->mu);
  return impl_->open(spec);
}

std::shared_ptr<Device> DeviceRegistry::default_device() {
  std::string dev = knobs::DEV.get();
  if (!dev.empty()) return open(dev);
  std::lock_guard lock(impl_->mu);
  return impl_->automatic();
}

} // namespace tg
