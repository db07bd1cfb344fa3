// ZIP central directory parse; see zip_archive.hpp. Layouts from PKWARE's APPNOTE.TXT: the
// end-of-central-directory record (EOCD) is found by scanning back from the end over at most
// its size plus the longest comment; ZIP64 replaces 0xFFFF/0xFFFFFFFF fields through its own
// EOCD record and each entry's extra field 0x0001.
#include "zip_archive.hpp"

#include <algorithm>
#include <cstring>

#include "tg/checked.hpp"

namespace tg::data {

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEocd = 0x06054b50,
                   kZip64Eocd = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr size_t kEocdSize = 22, kCentralSize = 46, kLocalSize = 30, kLocatorSize = 20,
                 kZip64EocdSize = 56;

class Reader {
public:
  Reader(std::span<const uint8_t> file, const std::string& origin) : f_(file), origin_(origin) {}

  // The little-endian integer of `n` bytes at `at`; `what` names it in the error when the file
  // ends first.
  uint64_t le(uint64_t at, size_t n, const char* what) const {
    need(at, n, what);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(f_[at + i]) << (8 * i);
    return v;
  }
  void need(uint64_t at, uint64_t n, const char* what) const {
    if (at > f_.size() || n > f_.size() - at)
      throw_parse_error(origin_, what,
                        "bytes " + std::to_string(at) + ".." + std::to_string(at) + "+" +
                            std::to_string(n),
                        "past the end of the file (" + std::to_string(f_.size()) +
                            " bytes): the archive is truncated or malformed");
  }
  std::string str(uint64_t at, size_t n, const char* what) const {
    need(at, n, what);
    return std::string(reinterpret_cast<const char*>(f_.data() + at), n);
  }
  size_t size() const { return f_.size(); }
  const std::string& origin() const { return origin_; }

private:
  std::span<const uint8_t> f_;
  const std::string& origin_;
};

std::optional<uint64_t> find_eocd(const Reader& r) {
  if (r.size() < kEocdSize) return std::nullopt;
  const uint64_t last = r.size() - kEocdSize;
  const uint64_t first = last > 0xFFFF ? last - 0xFFFF : 0;
  for (uint64_t at = last + 1; at-- > first;)
    if (r.le(at, 4, "end of central directory") == kEocd &&
        at + kEocdSize + r.le(at + 20, 2, "comment length") == r.size())
      return at;
  return std::nullopt;
}

} // namespace

const ZipEntry* ZipArchive::find(const std::string& name) const {
  for (const ZipEntry& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

bool looks_like_zip(std::span<const uint8_t> file) {
  if (file.size() < 4) return false;
  const uint32_t sig = static_cast<uint32_t>(file[0]) | static_cast<uint32_t>(file[1]) << 8 |
                       static_cast<uint32_t>(file[2]) << 16 | static_cast<uint32_t>(file[3]) << 24;
  return sig == kLocalHeader || sig == kEocd;
}

ZipArchive parse_zip(std::span<const uint8_t> file, const std::string& origin) {
  const Reader r(file, origin);
  const std::optional<uint64_t> eocd = find_eocd(r);
  if (!eocd)
    throw_parse_error(origin, "end of central directory", "",
                      "not found: the file is not a ZIP archive, or it is truncated");
  if (r.le(*eocd + 4, 2, "disk number") != 0 || r.le(*eocd + 6, 2, "central directory disk") != 0)
    throw_parse_error(origin, "disk number", std::to_string(r.le(*eocd + 4, 2, "disk number")),
                      "multi-disk archives are not supported");
  uint64_t count = r.le(*eocd + 10, 2, "entry count");
  uint64_t cd_size = r.le(*eocd + 12, 4, "central directory size");
  uint64_t cd_offset = r.le(*eocd + 16, 4, "central directory offset");
  if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset == 0xFFFFFFFF) {
    if (*eocd < kLocatorSize || r.le(*eocd - kLocatorSize, 4, "ZIP64 locator") != kZip64Locator)
      throw_parse_error(origin, "ZIP64 locator", "",
                        "missing although the end record says the archive is ZIP64");
    const uint64_t rec = r.le(*eocd - kLocatorSize + 8, 8, "ZIP64 end record offset");
    r.need(rec, kZip64EocdSize, "ZIP64 end record");
    if (r.le(rec, 4, "ZIP64 end record") != kZip64Eocd)
      throw_parse_error(origin, "ZIP64 end record", "at " + std::to_string(rec),
                        "bad signature (the archive is malformed)");
    count = r.le(rec + 32, 8, "ZIP64 entry count");
    cd_size = r.le(rec + 40, 8, "ZIP64 central directory size");
    cd_offset = r.le(rec + 48, 8, "ZIP64 central directory offset");
  }
  r.need(cd_offset, cd_size, "central directory");
  // Each entry takes at least its fixed header: a count beyond that is a lie, refused before
  // anything is reserved for it.
  if (count > cd_size / kCentralSize)
    throw_parse_error(origin, "entry count", std::to_string(count),
                      "more entries than the central directory of " + std::to_string(cd_size) +
                          " bytes can hold");

  ZipArchive out;
  out.entries.reserve(static_cast<size_t>(count));
  uint64_t at = cd_offset;
  const uint64_t cd_end = cd_offset + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (at + kCentralSize > cd_end || r.le(at, 4, "central directory entry") != kCentralHeader)
      throw_parse_error(origin, "central directory entry " + std::to_string(i),
                        "at " + std::to_string(at), "bad signature or past the directory's end");
    ZipEntry e;
    const uint64_t flags = r.le(at + 8, 2, "flags");
    e.encrypted = (flags & 1) != 0;
    e.method = static_cast<uint16_t>(r.le(at + 10, 2, "method"));
    e.crc32 = static_cast<uint32_t>(r.le(at + 16, 4, "CRC-32"));
    uint64_t csize = r.le(at + 20, 4, "compressed size");
    uint64_t usize = r.le(at + 24, 4, "uncompressed size");
    const uint64_t name_len = r.le(at + 28, 2, "name length");
    const uint64_t extra_len = r.le(at + 30, 2, "extra length");
    const uint64_t comment_len = r.le(at + 32, 2, "comment length");
    uint64_t local = r.le(at + 42, 4, "local header offset");
    const uint64_t var_end = at + kCentralSize + name_len + extra_len + comment_len;
    if (var_end > cd_end)
      throw_parse_error(origin, "central directory entry " + std::to_string(i),
                        std::to_string(var_end - at) + " bytes", "runs past the directory's end");
    e.name = r.str(at + kCentralSize, name_len, "entry name");
    // ZIP64 extra field: the 64-bit forms of exactly the fields saturated above, in order.
    for (uint64_t x = at + kCentralSize + name_len, xe = x + extra_len; x + 4 <= xe;) {
      const uint64_t id = r.le(x, 2, "extra field id"), len = r.le(x + 2, 2, "extra field size");
      if (x + 4 + len > xe)
        throw_parse_error(origin, e.name + ": extra field", std::to_string(len) + " bytes",
                          "runs past the entry's extra data");
      if (id == 0x0001) {
        uint64_t y = x + 4;
        auto take = [&](uint64_t& field, const char* what) {
          if (field != 0xFFFFFFFF) return;
          if (y + 8 > x + 4 + len)
            throw_parse_error(origin, e.name + ": ZIP64 " + what, "",
                              "missing from the ZIP64 extra field");
          field = r.le(y, 8, what);
          y += 8;
        };
        take(usize, "uncompressed size");
        take(csize, "compressed size");
        take(local, "local header offset");
      }
      x += 4 + len;
    }
    r.need(local, kLocalSize, "local header");
    if (r.le(local, 4, "local header") != kLocalHeader)
      throw_parse_error(origin, e.name + ": local header", "at " + std::to_string(local),
                        "bad signature (the archive is malformed)");
    const uint64_t lname = r.le(local + 26, 2, "local name length");
    const uint64_t lextra = r.le(local + 28, 2, "local extra length");
    e.data_offset = local + kLocalSize + lname + lextra;
    e.size = csize;
    e.uncompressed_size = usize;
    if (e.data_offset > r.size() || e.size > r.size() - e.data_offset)
      throw_parse_error(origin, e.name,
                        std::to_string(e.size) + " bytes at " + std::to_string(e.data_offset),
                        "the entry's data runs past the end of the file (" +
                            std::to_string(r.size()) + " bytes): the archive is truncated");
    out.entries.push_back(std::move(e));
    at = var_end;
  }
  return out;
}

} // namespace tg::data
