#pragma once
// Scratch files for the C compiler and the shared-object loader: a private directory under
// $TMPDIR (or /tmp) that is removed with everything in it when the object goes away.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tg::cpu {

class TempDir {
public:
  TempDir(); // throws tg::Error when no directory can be made
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

void write_file(const std::string& path, std::span<const uint8_t> bytes);
std::vector<uint8_t> read_file(const std::string& path);

} // namespace tg::cpu
