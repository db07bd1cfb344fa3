// Read-only file mappings; see file_map.hpp.
#include "file_map.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tg/error.hpp"

namespace tg::data {

FileMapping::~FileMapping() {
  if (addr && size) munmap(addr, size);
}

std::shared_ptr<FileMapping> map_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error(path.string() + ": cannot open the file (" + std::strerror(errno) + ")");
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(path.string() + ": cannot stat the file");
  }
  auto m = std::make_shared<FileMapping>();
  m->size = static_cast<size_t>(st.st_size);
  if (m->size > 0) {
    m->addr = mmap(nullptr, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->addr == MAP_FAILED) {
      m->addr = nullptr;
      ::close(fd);
      throw Error(path.string() + ": cannot map the file (" + std::strerror(errno) + ")");
    }
  }
  ::close(fd);
  return m;
}

} // namespace tg::data
