#include "text_file.hpp"

#include <fstream>
#include <sstream>

#include "tg/error.hpp"

namespace tinyrun {

std::string read_text_file(const std::filesystem::path& path, uint64_t max_bytes,
                           const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw tg::Error(path.string() + ": no such " + what + " file");
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw tg::Error(path.string() + ": cannot read the " + what + " (" + ec.message() + ")");
  if (size > max_bytes)
    throw tg::Error(path.string() + ": " + std::to_string(size) + " bytes is larger than a " +
                    what + " file may be (" + std::to_string(max_bytes) + " bytes)");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw tg::Error(path.string() + ": cannot open the " + what);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

} // namespace tinyrun
