#pragma once
// Datasets on disk: finding them and reading the IDX format (MNIST, Fashion-MNIST), gzipped or
// not. Used by `tinyrun mnist` and the tests; every malformed input raises tg::Error naming the
// file and what is wrong.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tg/ir/dtype.hpp"

namespace tg::data {

// Where the project's data lives: $TG_DATA_DIR, else `<repo>/../shared/data` when `repo_root`
// is given and that folder exists, else ~/.cache/tg. The first that exists, or nullopt.
std::optional<std::filesystem::path> data_dir(const std::filesystem::path& repo_root = {});

// The first of $TG_DATA_DIR, `<repo>/../shared/data` and ~/.cache/tg that holds `relative`
// (a file or folder), as a full path; nullopt when none does. For what scripts fetch into the
// cache (scripts/fetch-minilm.sh) while the shared data folder is also there.
std::optional<std::filesystem::path> find_data(const std::filesystem::path& relative,
                                               const std::filesystem::path& repo_root = {});

// An IDX array: element type, shape (big-endian dims of the header) and elements converted to
// host byte order.
struct IdxArray {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // prod(shape) elements of dtype, little-endian
  // prod(shape); tg::Error when it does not fit in int64 (0 when a dimension is 0).
  int64_t numel() const;
};

// Parses the bytes of an IDX file (http://yann.lecun.com/exdb/mnist/ format: 0x00 0x00 type
// ndim, ndim big-endian uint32 sizes, big-endian data), gzipped when they start with the gzip
// magic (1f 8b). Raises tg::Error naming `origin` for a bad magic, an unknown type, counts
// that overflow, a truncated file, trailing bytes, corrupt gzip data, gzip data that holds
// more than the header announces, and a lack of memory for what it announces. Pure: touches
// no file and no device (the fuzz target calls it).
IdxArray parse_idx(std::span<const uint8_t> file, const std::string& origin);

// Reads and parses an IDX file; errors name the file.
IdxArray read_idx(const std::filesystem::path& path);

} // namespace tg::data
