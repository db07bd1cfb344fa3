// Reading a whole file; see file_bytes.hpp.
#include "file_bytes.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <new>

#include "tg/error.hpp"

namespace tg::data {

std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path.string() + ": cannot open the file (" + std::strerror(errno) + ")");
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error(path.string() + ": cannot tell the size of the file");
  std::vector<uint8_t> bytes;
  try {
    bytes.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    throw Error(path.string() + ": out of memory allocating " + std::to_string(size) +
                " bytes to read the file");
  }
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (in.gcount() != size)
    throw Error(path.string() + ": reading the file failed after " + std::to_string(in.gcount()) +
                " of " + std::to_string(size) + " bytes");
  return bytes;
}

} // namespace tg::data
