#pragma once
// Streaming gunzip of a file held in memory, for the readers of core/data: the caller pulls as
// many bytes as its format's header announces and no more, so a small file cannot expand into
// gigabytes behind the reader's back (a "gzip bomb" stops at the announced size).
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tg::data {

// Whether the bytes start with the gzip magic (1f 8b).
bool is_gzip(std::span<const uint8_t> bytes) noexcept;

// Decompresses a gzip stream (several concatenated members read as one, as gunzip does).
// Corrupt data, a stream that ends early and bytes after the last member raise tg::Error
// naming `origin`.
class GzipReader {
public:
  GzipReader(std::span<const uint8_t> compressed, std::string origin);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  // Writes up to n decompressed bytes to dst and returns how many; fewer than n only at the
  // end of the data.
  size_t read(uint8_t* dst, size_t n);
  // Decompressed bytes handed out so far.
  uint64_t total_read() const { return total_; }

private:
  void feed_input();

  z_stream zs_{};
  std::span<const uint8_t> in_;
  size_t in_pos_ = 0; // bytes of in_ handed to zlib so far
  std::string origin_;
  uint64_t total_ = 0;
  bool member_ended_ = false;
};

} // namespace tg::data
