#pragma once
// The directory of a ZIP archive read from its bytes, for torch.save's checkpoints (a ZIP of
// stored entries: the pickle and one file per storage). Only what a reader of such archives
// needs: the central directory (with ZIP64 sizes and offsets), each entry's name, compression
// method and where its bytes lie. Every offset and size is checked against the file, so an
// entry that is accepted can be read in place.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tg::data {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;      // 0: stored; anything else is compressed
  bool encrypted = false;   // general purpose flag bit 0
  uint64_t data_offset = 0; // where the entry's bytes start in the file
  uint64_t size = 0;        // bytes in the file (compressed size)
  uint64_t uncompressed_size = 0;
  uint32_t crc32 = 0; // of the uncompressed bytes, as the directory records it
};

struct ZipArchive {
  std::vector<ZipEntry> entries; // in central-directory order
  const ZipEntry* find(const std::string& name) const;
};

// Whether the bytes start like a ZIP file (a local file header or an empty archive).
bool looks_like_zip(std::span<const uint8_t> file);

// The directory of the archive `file`. Raises tg::Error naming `origin` and the fault for: no
// end-of-central-directory record, a multi-disk archive, a central directory or local header
// outside the file or with a bad signature, and an entry whose bytes run past the file.
ZipArchive parse_zip(std::span<const uint8_t> file, const std::string& origin);

} // namespace tg::data
