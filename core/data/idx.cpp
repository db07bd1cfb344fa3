// The IDX format (MNIST, Fashion-MNIST), gzipped or not: a pure parse of the file's bytes and
// the read of a file. Every count comes from the header, so each is checked before it sizes
// anything: the element count and the byte count are multiplied with overflow checks, a raw
// file must hold exactly the announced bytes before anything is allocated, and a gzipped one
// is decompressed only as far as the header announces.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "file_bytes.hpp"
#include "gzip.hpp"
#include "tg/checked.hpp"
#include "tg/data.hpp"
#include "tg/error.hpp"

namespace tg::data {

namespace fs = std::filesystem;

namespace {

// The bytes of an IDX file in order: straight from memory, or through gunzip.
class IdxSource {
public:
  IdxSource(std::span<const uint8_t> file, const std::string& origin) : file_(file) {
    if (is_gzip(file)) gz_ = std::make_unique<GzipReader>(file, origin);
  }
  bool compressed() const { return gz_ != nullptr; }
  size_t read(uint8_t* dst, size_t n) {
    if (gz_) return gz_->read(dst, n);
    const size_t k = std::min(n, file_.size() - pos_);
    if (k) std::memcpy(dst, file_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  // Raw files: the bytes not read yet.
  size_t remaining() const { return file_.size() - pos_; }

private:
  std::span<const uint8_t> file_;
  size_t pos_ = 0;
  std::unique_ptr<GzipReader> gz_;
};

struct IdxType {
  DType dtype;
  int itemsize;
};

IdxType idx_type(uint8_t code, const std::string& origin) {
  switch (code) {
  case 0x08:
    return {dtypes::uint8, 1};
  case 0x09:
    return {dtypes::int8, 1};
  case 0x0B:
    return {dtypes::int16, 2};
  case 0x0C:
    return {dtypes::int32, 4};
  case 0x0D:
    return {dtypes::float32, 4};
  case 0x0E:
    return {dtypes::float64, 8};
  default: {
    const char hex[] = "0123456789abcdef";
    throw Error(origin + ": unknown IDX element type 0x" + hex[code >> 4] + hex[code & 15] +
                " in byte 2 (known: 0x08 u8, 0x09 i8, 0x0b i16, 0x0c i32, 0x0d f32, 0x0e f64)");
  }
  }
}

[[noreturn]] void out_of_memory(const std::string& origin, uint64_t bytes, uint64_t announced) {
  throw Error(origin + ": out of memory allocating " + std::to_string(bytes) + " bytes for the " +
              std::to_string(announced) + " bytes of data its header announces");
}

} // namespace

IdxArray parse_idx(std::span<const uint8_t> file, const std::string& origin) {
  IdxSource src(file, origin);
  uint8_t magic[4];
  if (src.read(magic, 4) < 4 || magic[0] != 0 || magic[1] != 0)
    throw Error(origin + ": not an IDX file (it must start with two zero bytes, a type and a "
                         "rank)");
  const IdxType type = idx_type(magic[2], origin);
  const size_t ndim = magic[3];
  std::vector<uint8_t> header(4 * ndim);
  if (src.read(header.data(), header.size()) < header.size())
    throw Error(origin + ": truncated header (" + std::to_string(ndim) +
                " dimensions announced, the file ends inside them)");
  std::vector<uint64_t> dims(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    const uint8_t* p = header.data() + 4 * i;
    dims[i] = (uint64_t{p[0]} << 24) | (uint64_t{p[1]} << 16) | (uint64_t{p[2]} << 8) | p[3];
  }
  const uint64_t numel = parse_numel(dims, origin, "the header's dimensions");
  const uint64_t want = parse_mul(numel, static_cast<uint64_t>(type.itemsize), origin,
                                  "the data size (elements * element size)");
  const std::string announced =
      std::to_string(numel) + " elements (" + std::to_string(want) + " bytes)";

  IdxArray a;
  a.dtype = type.dtype;
  for (uint64_t d : dims) a.shape.push_back(static_cast<int64_t>(d)); // < 2^32 each
  if (!src.compressed()) {
    // The file's size is known: check it before allocating anything.
    if (src.remaining() < want)
      throw Error(origin + ": truncated: the header announces " + announced + " but " +
                  std::to_string(src.remaining()) + " bytes follow");
    if (src.remaining() > want)
      throw Error(origin + ": " + std::to_string(src.remaining() - want) +
                  " bytes after the last element announced by the header (" + announced + ")");
    try {
      a.bytes.resize(want);
    } catch (const std::bad_alloc&) {
      out_of_memory(origin, want, want);
    }
    src.read(a.bytes.data(), want);
  } else {
    // Compressed: grow with the data actually decompressed (a header may announce far more than
    // the stream holds) and never past what the header announces.
    size_t have = 0;
    while (have < want) {
      const size_t cap = std::min<uint64_t>(want, std::max<uint64_t>(2 * have, 1 << 20));
      try {
        a.bytes.resize(cap);
      } catch (const std::bad_alloc&) {
        out_of_memory(origin, cap, want);
      }
      have += src.read(a.bytes.data() + have, cap - have);
      if (have < cap)
        throw Error(origin + ": truncated: the header announces " + announced +
                    " but the gzip data holds " + std::to_string(have) + " bytes after it");
    }
    uint8_t extra = 0;
    if (src.read(&extra, 1) != 0)
      throw Error(origin + ": the gzip data holds more than the " + std::to_string(want) +
                  " bytes its header announces (" + std::to_string(numel) +
                  " elements); the file is corrupt or not this IDX file");
  }
  // Big-endian elements to host (little-endian) order, in place.
  if (type.itemsize > 1)
    for (size_t i = 0; i < want; i += static_cast<size_t>(type.itemsize))
      std::reverse(a.bytes.begin() + static_cast<std::ptrdiff_t>(i),
                   a.bytes.begin() + static_cast<std::ptrdiff_t>(i) + type.itemsize);
  return a;
}

IdxArray read_idx(const fs::path& path) { return parse_idx(read_file_bytes(path), path.string()); }

int64_t IdxArray::numel() const {
  std::vector<uint64_t> dims;
  for (int64_t d : shape) {
    if (d < 0) throw Error("IdxArray: negative dimension " + std::to_string(d));
    dims.push_back(static_cast<uint64_t>(d));
  }
  const std::optional<uint64_t> n = checked_numel(dims);
  if (!n || *n > static_cast<uint64_t>(INT64_MAX))
    throw Error("IdxArray: the element count of its shape does not fit in 64 bits");
  return static_cast<int64_t>(*n);
}

} // namespace tg::data
