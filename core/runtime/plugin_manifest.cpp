#include "plugin_manifest.hpp"

#include <boost/json.hpp>
#include <fstream>
#include <limits>
#include <sstream>

#include "tg/checked.hpp"
#include "tg/error.hpp"

namespace tg::detail {
namespace {

namespace json = boost::json;

const json::value& field(const json::object& o, const char* key, const std::string& origin) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr)
    throw Error(origin + ": manifest has no \"" + key +
                "\" field; rebuild the plugin with tg_add_plugin() or fix the file");
  return *v;
}

std::string get_string(const json::object& o, const char* key, const std::string& origin) {
  const json::value& v = field(o, key, origin);
  if (!v.is_string()) throw Error(origin + ": manifest field \"" + key + "\" must be a string");
  return std::string(v.get_string());
}

// An integer field in [lo, hi]. JSON numbers past 2^63 arrive as uint64 or double and a
// fraction as double: each is refused with its value rather than narrowed into range.
int get_int(const json::object& o, const char* key, const std::string& origin, int lo, int hi) {
  const json::value& v = field(o, key, origin);
  const std::string name = std::string("manifest field \"") + key + "\"";
  const std::string range =
      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.is_int64()) throw_parse_error(origin, name, json::serialize(v), "must be " + range);
  const int64_t x = v.get_int64();
  if (x < lo || x > hi) throw_parse_error(origin, name, std::to_string(x), "must be " + range);
  return static_cast<int>(x);
}

std::vector<std::string> get_strings(const json::object& o, const char* key,
                                     const std::string& origin, bool required) {
  std::vector<std::string> out;
  const json::value* v = o.if_contains(key);
  if (v == nullptr) {
    if (required) field(o, key, origin); // throws
    return out;
  }
  if (!v->is_array())
    throw Error(origin + ": manifest field \"" + key + "\" must be an array of strings");
  for (const json::value& item : v->get_array()) {
    if (!item.is_string())
      throw Error(origin + ": manifest field \"" + key + "\" must be an array of strings");
    out.emplace_back(item.get_string());
  }
  return out;
}

} // namespace

Manifest parse_manifest(const std::string& text, const std::string& origin) {
  boost::system::error_code ec;
  json::value root = json::parse(text, ec);
  if (ec) throw Error(origin + ": manifest is not valid JSON (" + ec.message() + ")");
  if (!root.is_object()) throw Error(origin + ": manifest must be a JSON object");
  const json::object& o = root.get_object();
  Manifest m;
  m.name = get_string(o, "name", origin);
  m.version = get_string(o, "version", origin);
  constexpr int kIntMax = std::numeric_limits<int>::max();
  m.abi_major = get_int(o, "abi_major", origin, 0, kIntMax);
  m.abi_minor = get_int(o, "abi_minor", origin, 0, kIntMax);
  m.library = get_string(o, "library", origin);
  m.devices = get_strings(o, "devices", origin, true);
  m.renderers = get_strings(o, "renderers", origin, false);
  m.requirements = get_strings(o, "requires", origin, false);
  m.os = o.contains("os") ? get_string(o, "os", origin) : "";
  m.arch = o.contains("arch") ? get_string(o, "arch", origin) : "";
  m.priority = o.contains("priority") ? get_int(o, "priority", origin, -kIntMax, kIntMax) : 0;
  if (m.devices.empty()) throw Error(origin + ": manifest lists no devices");
  if (m.library.find('/') != std::string::npos)
    throw Error(origin + ": manifest field \"library\" must be a file name in the same folder");
  return m;
}

Manifest read_manifest(const std::filesystem::path& path) {
  // A manifest is a few hundred bytes; a file far beyond that is not one (and is not read).
  constexpr std::uintmax_t kMaxManifest = 1 << 20;
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path.string() + ": cannot read the manifest (" + ec.message() + ")");
  if (size > kMaxManifest)
    throw Error(path.string() + ": a manifest of " + std::to_string(size) +
                " bytes is larger than the 1 MiB a manifest may be; it is not a plugin manifest");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read the manifest");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_manifest(text.str(), path.string());
}

} // namespace tg::detail
