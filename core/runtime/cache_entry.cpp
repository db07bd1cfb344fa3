// The file format of one disk-cache entry (see tg/cache_entry.hpp).
#include "tg/cache_entry.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <unistd.h>

#include "tg/error.hpp"

namespace fs = std::filesystem;

namespace tg {

namespace {

uint64_t fnv1a(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

bool read_u64(std::istream& in, uint64_t& v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&v), sizeof v));
}

void write_u64(std::ostream& out, uint64_t v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

constexpr size_t kMagicSize = 8;

} // namespace

std::string cache_entry_name(std::string_view key) {
  char name[40];
  std::snprintf(name, sizeof name, "%016llx%016llx", static_cast<unsigned long long>(fnv1a(key)),
                static_cast<unsigned long long>(fnv1a(key, 0x84222325cbf29ce4ull)));
  return name;
}

CacheRead read_cache_entry(const fs::path& path, std::string_view magic, std::string_view key,
                           std::string& payload, std::string& why) {
  if (magic.size() != kMagicSize)
    throw Error("cache entry: the magic must be 8 bytes, not " + std::to_string(magic.size()));
  std::error_code ec;
  if (!fs::exists(path, ec)) return CacheRead::Miss;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) return CacheRead::Miss;
  std::ifstream in(path, std::ios::binary);
  if (!in) return CacheRead::Miss;
  std::string stored_magic(kMagicSize, '\0');
  if (!in.read(stored_magic.data(), kMagicSize) || stored_magic != magic) {
    why = "bad magic: not an entry of this cache";
    return CacheRead::Corrupt;
  }
  uint64_t key_len = 0, len = 0, sum = 0;
  if (!read_u64(in, key_len) || key_len > size) {
    why = "the key's length is past the end of the file";
    return CacheRead::Corrupt;
  }
  std::string stored_key(key_len, '\0');
  if (!in.read(stored_key.data(), static_cast<std::streamsize>(key_len))) {
    why = "the file ends inside the key";
    return CacheRead::Corrupt;
  }
  if (!read_u64(in, len) || !read_u64(in, sum)) {
    why = "the file ends before the payload";
    return CacheRead::Corrupt;
  }
  const auto at = static_cast<uint64_t>(in.tellg());
  if (len != size - at) {
    why = "the payload's length does not match the file's size";
    return CacheRead::Corrupt;
  }
  std::string bytes(len, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(len)) || fnv1a(bytes) != sum) {
    why = "the payload's checksum does not match";
    return CacheRead::Corrupt;
  }
  if (stored_key != key) return CacheRead::Miss; // another key with the same hash
  payload = std::move(bytes);
  return CacheRead::Hit;
}

bool write_cache_entry(const fs::path& path, std::string_view magic, std::string_view key,
                       std::string_view payload) {
  if (magic.size() != kMagicSize)
    throw Error("cache entry: the magic must be 8 bytes, not " + std::to_string(magic.size()));
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return false;
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(magic.data(), kMagicSize);
    write_u64(out, key.size());
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    write_u64(out, payload.size());
    write_u64(out, fnv1a(payload));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out.flush()) {
      out.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

} // namespace tg
