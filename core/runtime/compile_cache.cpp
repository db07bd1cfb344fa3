#include "tg/compile_cache.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

#include "tg/knobs.hpp"

namespace fs = std::filesystem;

namespace tg {
namespace {

// Entry layout: magic, key length, key, binary length, binary checksum, binary.
constexpr char kMagic[8] = {'T', 'G', 'C', 'C', '0', '0', '0', '1'};

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// 128 bits from two differently seeded passes: the file name. The entry's stored key decides.
std::string key_name(const std::string& key) {
  char name[40];
  std::snprintf(
      name, sizeof name, "%016llx%016llx",
      static_cast<unsigned long long>(fnv1a(key.data(), key.size())),
      static_cast<unsigned long long>(fnv1a(key.data(), key.size(), 0x84222325cbf29ce4ull)));
  return name;
}

bool read_u64(std::istream& in, uint64_t& v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&v), sizeof v));
}

bool read_entry(const fs::path& path, const std::string& key, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[sizeof kMagic];
  uint64_t key_len = 0, bin_len = 0, sum = 0;
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0) return false;
  if (!read_u64(in, key_len) || key_len != key.size()) return false;
  std::string stored(key_len, '\0');
  if (!in.read(stored.data(), static_cast<std::streamsize>(key_len)) || stored != key) return false;
  if (!read_u64(in, bin_len) || !read_u64(in, sum)) return false;
  // The binary must be exactly the rest of the file: a corrupt length allocates nothing.
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec || size < static_cast<uint64_t>(in.tellg()) ||
      bin_len != size - static_cast<uint64_t>(in.tellg()))
    return false;
  std::vector<uint8_t> bin(bin_len);
  if (!in.read(reinterpret_cast<char*>(bin.data()), static_cast<std::streamsize>(bin_len)))
    return false;
  if (fnv1a(bin.data(), bin.size()) != sum || in.peek() != std::char_traits<char>::eof())
    return false;
  out = std::move(bin);
  return true;
}

void write_entry(const fs::path& path, const std::string& key, const std::vector<uint8_t>& bin) {
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return;
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    uint64_t key_len = key.size(), bin_len = bin.size(), sum = fnv1a(bin.data(), bin.size());
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&key_len), sizeof key_len);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(reinterpret_cast<const char*>(&bin_len), sizeof bin_len);
    out.write(reinterpret_cast<const char*>(&sum), sizeof sum);
    out.write(reinterpret_cast<const char*>(bin.data()), static_cast<std::streamsize>(bin.size()));
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

} // namespace

fs::path cache_dir() {
  if (std::string dir = knobs::TG_CACHE_DIR.get(); !dir.empty()) return dir;
  if (std::string xdg = knobs::XDG_CACHE_HOME.get(); !xdg.empty()) return fs::path(xdg) / "tg";
  if (std::string home = knobs::HOME.get(); !home.empty()) return fs::path(home) / ".cache" / "tg";
  return {};
}

namespace {
std::atomic<int64_t> g_hits{0}, g_misses{0};
} // namespace

CompileCacheStats compile_cache_stats() { return {g_hits.load(), g_misses.load()}; }

std::vector<uint8_t> compile_cached(Compiler& compiler, const std::string& source) {
  fs::path dir = cache_dir();
  if (knobs::TG_COMPILER_CACHE == 0 || dir.empty()) {
    ++g_misses;
    return compiler.compile(source);
  }
  std::string key = compiler.identity();
  key.push_back('\0');
  key += source;
  fs::path path = dir / "compile" / (key_name(key) + ".bin");
  std::vector<uint8_t> bin;
  if (read_entry(path, key, bin)) {
    ++g_hits;
    return bin;
  }
  ++g_misses;
  bin = compiler.compile(source);
  write_entry(path, key, bin);
  return bin;
}

} // namespace tg
