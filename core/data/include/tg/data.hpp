#pragma once
// Datasets on disk: finding them and reading the IDX format (MNIST, Fashion-MNIST), gzipped or
// not. Used by `tinyrun mnist` and the tests; every malformed input raises tg::Error naming the
// file and what is wrong.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tg/ir/dtype.hpp"

namespace tg::data {

// Where the project's data lives: $TG_DATA_DIR, else `<repo>/../shared/data` when `repo_root`
// is given and that folder exists, else ~/.cache/tg. The first that exists, or nullopt.
std::optional<std::filesystem::path> data_dir(const std::filesystem::path& repo_root = {});

// The bytes of a file, gunzipped when it starts with the gzip magic (1f 8b).
std::vector<uint8_t> read_maybe_gzipped(const std::filesystem::path& path);

// An IDX array: element type, shape (big-endian dims of the header) and elements converted to
// host byte order.
struct IdxArray {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // prod(shape) elements of dtype, little-endian
  int64_t numel() const;
};

// Reads an IDX file (http://yann.lecun.com/exdb/mnist/ format: 0x00 0x00 type ndim, ndim
// big-endian uint32 sizes, big-endian data). Raises tg::Error for a bad magic, an unknown
// type, a truncated file, or trailing bytes.
IdxArray read_idx(const std::filesystem::path& path);

} // namespace tg::data
