// The disk cache of BEAM's results (tg/beam.hpp): one file per kernel and target under
// $TG_CACHE_DIR/beam, named by a hash of the key and holding the whole key, so a collision is a
// miss. Entry layout (as the compile cache's): magic, key length, key, payload length, payload
// checksum, payload; the payload one Opt a line ("UPCAST 0 4"). A file that does not read as an
// entry is corrupt: a warning names it, and the search's result replaces it.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <unistd.h>

#include "tg/beam.hpp"
#include "tg/compile_cache.hpp"
#include "tg/ir/print.hpp"

namespace fs = std::filesystem;

namespace tg {

namespace {

constexpr char kMagic[8] = {'T', 'G', 'B', 'E', 'A', 'M', '0', '1'};

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string opts_text(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts)
    s += std::string(opt_op_name(o.op)) + " " + std::to_string(o.axis) + " " +
         std::to_string(o.amount) + "\n";
  return s;
}

std::optional<std::vector<Opt>> parse_opts(const std::string& text) {
  std::vector<Opt> out;
  std::istringstream in(text);
  std::string name;
  int axis = 0, amount = 0;
  while (in >> name >> axis >> amount) {
    bool known = false;
    for (int op = 0; op <= static_cast<int>(OptOp::TC); ++op)
      if (opt_op_name(static_cast<OptOp>(op)) == name) {
        out.push_back({static_cast<OptOp>(op), axis, amount});
        known = true;
      }
    if (!known) return std::nullopt;
  }
  if (!in.eof()) return std::nullopt;
  return out;
}

bool read_u64(std::istream& in, uint64_t& v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&v), sizeof v));
}

enum class Read { Hit, Miss, Corrupt };

// Reads the entry at `path` for `key`: Miss when there is none or it holds another key.
Read read_entry(const fs::path& path, const std::string& key, std::vector<Opt>& out,
                std::string& why) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Read::Miss;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Read::Miss;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) return Read::Miss;
  char magic[sizeof kMagic];
  uint64_t key_len = 0, len = 0, sum = 0;
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    why = "not a BEAM cache entry (bad magic)";
    return Read::Corrupt;
  }
  if (!read_u64(in, key_len) || key_len > size) {
    why = "the key's length is past the end of the file";
    return Read::Corrupt;
  }
  std::string stored(key_len, '\0');
  if (!in.read(stored.data(), static_cast<std::streamsize>(key_len))) {
    why = "the file ends inside the key";
    return Read::Corrupt;
  }
  if (!read_u64(in, len) || !read_u64(in, sum)) {
    why = "the file ends before the result";
    return Read::Corrupt;
  }
  const auto at = static_cast<uint64_t>(in.tellg());
  if (len != size - at) {
    why = "the result's length does not match the file's size";
    return Read::Corrupt;
  }
  std::string payload(len, '\0');
  if (!in.read(payload.data(), static_cast<std::streamsize>(len)) ||
      fnv1a(payload.data(), payload.size()) != sum) {
    why = "the result's checksum does not match";
    return Read::Corrupt;
  }
  auto opts = parse_opts(payload);
  if (!opts) {
    why = "the result does not parse as Opts";
    return Read::Corrupt;
  }
  if (stored != key) return Read::Miss; // another kernel with the same hash
  out = std::move(*opts);
  return Read::Hit;
}

} // namespace

std::string beam_cache_path(const std::string& key) {
  const fs::path dir = cache_dir();
  if (dir.empty()) return {};
  char name[48];
  std::snprintf(
      name, sizeof name, "%016llx%016llx.beam",
      static_cast<unsigned long long>(fnv1a(key.data(), key.size())),
      static_cast<unsigned long long>(fnv1a(key.data(), key.size(), 0x84222325cbf29ce4ull)));
  return (dir / "beam" / name).string();
}

std::string beam_cache_key(const UOpPtr& ast, const BeamTarget& target, int64_t width) {
  Device& dev = *target.device;
  std::string key = "beam width " + std::to_string(width) + "\ndevice " + dev.name() + " arch " +
                    dev.arch() + "\nrenderer " + target.renderer + "\ncompiler " +
                    dev.compiler(target.renderer).identity() + "\n";
  key += print_graph(ast);
  return key;
}

std::optional<std::vector<Opt>> beam_cache_load(const std::string& key) {
  const std::string path = beam_cache_path(key);
  if (path.empty()) return std::nullopt;
  std::vector<Opt> opts;
  std::string why;
  switch (read_entry(path, key, opts, why)) {
  case Read::Hit:
    return opts;
  case Read::Corrupt:
    std::cerr << "warning: BEAM cache entry " << path << " is corrupt (" << why
              << "); ignoring it, the search's result will replace it\n";
    return std::nullopt;
  case Read::Miss:
    break;
  }
  return std::nullopt;
}

void beam_cache_store(const std::string& key, const std::vector<Opt>& opts) {
  static std::atomic<uint64_t> counter{0};
  const std::string p = beam_cache_path(key);
  if (p.empty()) return;
  const fs::path path(p);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return;
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    const std::string payload = opts_text(opts);
    const uint64_t key_len = key.size(), len = payload.size(),
                   sum = fnv1a(payload.data(), payload.size());
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&key_len), sizeof key_len);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(reinterpret_cast<const char*>(&len), sizeof len);
    out.write(reinterpret_cast<const char*>(&sum), sizeof sum);
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out.flush()) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  // rename() is atomic: readers see the old entry, none, or the whole new one.
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

} // namespace tg
