// Streaming gunzip over zlib; see gzip.hpp.
#include "gzip.hpp"

#include <algorithm>

#include "tg/error.hpp"

namespace tg::data {

bool is_gzip(std::span<const uint8_t> bytes) noexcept {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

GzipReader::GzipReader(std::span<const uint8_t> compressed, std::string origin)
    : in_(compressed), origin_(std::move(origin)) {
  // windowBits 15 + 16: gzip framing only (a zlib or raw deflate stream is not a .gz file).
  if (inflateInit2(&zs_, 15 + 16) != Z_OK)
    throw Error(origin_ + ": cannot start zlib (" + (zs_.msg ? zs_.msg : "out of memory") + ")");
}

GzipReader::~GzipReader() { inflateEnd(&zs_); }

// zlib counts input in 32-bit uInt: hand it the file in pieces of at most 1 GiB.
void GzipReader::feed_input() {
  if (zs_.avail_in != 0 || in_pos_ == in_.size()) return;
  const size_t piece = std::min<size_t>(in_.size() - in_pos_, size_t{1} << 30);
  zs_.next_in = const_cast<Bytef*>(in_.data() + in_pos_);
  zs_.avail_in = static_cast<uInt>(piece);
  in_pos_ += piece;
}

size_t GzipReader::read(uint8_t* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    feed_input();
    const size_t unread = zs_.avail_in + (in_.size() - in_pos_);
    if (member_ended_) {
      if (unread == 0) break; // the end of the data
      // Another gzip member follows (files made by `cat a.gz b.gz`), or garbage.
      const size_t at = in_pos_ - zs_.avail_in;
      if (!is_gzip(in_.subspan(at)))
        throw Error(origin_ + ": " + std::to_string(unread) +
                    " bytes after the end of the gzip data (the file is corrupt or not one "
                    "gzip stream)");
      inflateReset(&zs_);
      member_ended_ = false;
    }
    const size_t want = std::min<size_t>(n - done, size_t{1} << 30);
    zs_.next_out = dst + done;
    zs_.avail_out = static_cast<uInt>(want);
    const int rc = inflate(&zs_, Z_NO_FLUSH);
    const size_t got = want - zs_.avail_out;
    done += got;
    total_ += got;
    if (rc == Z_STREAM_END) {
      member_ended_ = true;
      continue;
    }
    if (rc == Z_MEM_ERROR)
      throw Error(origin_ + ": out of memory while decompressing the gzip data");
    if (rc == Z_BUF_ERROR && got == 0) {
      // No progress: zlib wants more input. Hand it the next piece, or the file ends early.
      if (zs_.avail_in == 0 && in_pos_ < in_.size()) continue;
      if (zs_.avail_in == 0)
        throw Error(origin_ + ": truncated gzip data (the stream ends after " +
                    std::to_string(total_) + " decompressed bytes, before its end marker)");
      throw Error(origin_ + ": corrupt gzip data after " + std::to_string(total_) +
                  " decompressed bytes (zlib makes no progress)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw Error(origin_ + ": corrupt gzip data after " + std::to_string(total_) +
                  " decompressed bytes (" +
                  (zs_.msg ? std::string(zs_.msg) : "inflate error " + std::to_string(rc)) + ")");
  }
  return done;
}

} // namespace tg::data
