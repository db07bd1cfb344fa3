// Reading data files: gzip through zlib, the IDX format, and where the data folder is.
#include <zlib.h>

#include <fstream>
#include <iterator>

#include "tg/data.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg::data {

namespace fs = std::filesystem;

std::optional<fs::path> data_dir(const fs::path& repo_root) {
  if (const std::string env = knobs::TG_DATA_DIR.get(); !env.empty()) {
    if (fs::is_directory(env)) return fs::path(env);
    throw Error("TG_DATA_DIR=" + env + " is not a directory");
  }
  if (!repo_root.empty()) {
    const fs::path shared = repo_root / ".." / "shared" / "data";
    if (fs::is_directory(shared)) return fs::weakly_canonical(shared);
  }
  if (const std::string home = knobs::HOME.get(); !home.empty()) {
    const fs::path cache = fs::path(home) / ".cache" / "tg";
    if (fs::is_directory(cache)) return cache;
  }
  return std::nullopt;
}

std::vector<uint8_t> read_maybe_gzipped(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open the file");
  std::vector<uint8_t> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (raw.size() < 2 || raw[0] != 0x1f || raw[1] != 0x8b) return raw;
  // gzip: inflate with automatic header detection (windowBits 15 + 32).
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw Error(path.string() + ": zlib init failed");
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 16);
  zs.next_in = raw.data();
  zs.avail_in = static_cast<uInt>(raw.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = chunk.data();
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = zs.msg ? zs.msg : "inflate error " + std::to_string(rc);
      inflateEnd(&zs);
      throw Error(path.string() + ": corrupt or truncated gzip data (" + why + ")");
    }
    out.insert(out.end(), chunk.data(), chunk.data() + (chunk.size() - zs.avail_out));
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      throw Error(path.string() + ": truncated gzip data (the stream ends early)");
    }
  }
  inflateEnd(&zs);
  return out;
}

int64_t IdxArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

IdxArray read_idx(const fs::path& path) {
  const std::vector<uint8_t> b = read_maybe_gzipped(path);
  const std::string where = path.string() + ": ";
  if (b.size() < 4 || b[0] != 0 || b[1] != 0)
    throw Error(where + "not an IDX file (it must start with two zero bytes, a type and a rank)");
  IdxArray a;
  int item = 0;
  switch (b[2]) {
  case 0x08:
    a.dtype = dtypes::uint8, item = 1;
    break;
  case 0x09:
    a.dtype = dtypes::int8, item = 1;
    break;
  case 0x0B:
    a.dtype = dtypes::int16, item = 2;
    break;
  case 0x0C:
    a.dtype = dtypes::int32, item = 4;
    break;
  case 0x0D:
    a.dtype = dtypes::float32, item = 4;
    break;
  case 0x0E:
    a.dtype = dtypes::float64, item = 8;
    break;
  default:
    throw Error(where + "unknown IDX element type 0x" +
                std::string(1, "0123456789abcdef"[b[2] >> 4]) +
                std::string(1, "0123456789abcdef"[b[2] & 15]));
  }
  const size_t ndim = b[3];
  if (b.size() < 4 + 4 * ndim)
    throw Error(where + "truncated header (" + std::to_string(ndim) + " dimensions announced)");
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) {
    const uint8_t* p = b.data() + 4 + 4 * i;
    const uint32_t d =
        (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    a.shape.push_back(d);
    n *= d;
  }
  const size_t header = 4 + 4 * ndim, want = n * static_cast<size_t>(item);
  if (b.size() - header < want)
    throw Error(where + "truncated: the header announces " + std::to_string(n) + " elements (" +
                std::to_string(want) + " bytes) but " + std::to_string(b.size() - header) +
                " bytes follow");
  if (b.size() - header > want)
    throw Error(where + std::to_string(b.size() - header - want) +
                " bytes after the last element announced by the header");
  a.bytes.resize(want);
  // Big-endian elements to host (little-endian) order.
  for (size_t i = 0; i < n; ++i)
    for (int k = 0; k < item; ++k)
      a.bytes[i * static_cast<size_t>(item) + static_cast<size_t>(k)] =
          b[header + i * static_cast<size_t>(item) + static_cast<size_t>(item - 1 - k)];
  return a;
}

} // namespace tg::data
