#pragma once
// One entry of a disk cache (the compile cache, BEAM's results): a file named by a 128-bit hash
// of its key that holds the whole key, so a hash collision is a miss and never a wrong answer.
// Layout: 8 bytes of magic, key length, key, payload length, payload checksum (FNV-1a, 64 bit),
// payload; integers are little-endian uint64. Writes are atomic (temp file + rename).
#include <filesystem>
#include <string>
#include <string_view>

namespace tg {

// 32 hex digits from two differently seeded FNV-1a passes over the key: the entry's file name.
std::string cache_entry_name(std::string_view key);

enum class CacheRead { Hit, Miss, Corrupt };

// Reads the entry at `path` written with `magic` (8 bytes) for `key` into `payload`. Miss when
// there is no file or it holds another key; Corrupt, with the reason in `why`, when the file is
// not a whole entry (bad magic, truncated, lengths that disagree with its size, a checksum that
// does not match). A corrupt length allocates nothing.
CacheRead read_cache_entry(const std::filesystem::path& path, std::string_view magic,
                           std::string_view key, std::string& payload, std::string& why);

// Writes the entry atomically (readers see the old entry, none, or the whole new one); false
// when the folder or file cannot be written, which only costs the cache a miss later.
bool write_cache_entry(const std::filesystem::path& path, std::string_view magic,
                       std::string_view key, std::string_view payload);

} // namespace tg
