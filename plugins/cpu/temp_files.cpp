#include "temp_files.hpp"

#include <cerrno>
#include <cstdlib> // mkdtemp
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg::cpu {

TempDir::TempDir() {
  const std::string tmp = knobs::TMPDIR.get();
  std::string tmpl = (tmp.empty() ? std::string("/tmp") : tmp) + "/tg-cpu-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr)
    throw Error("CPU plugin: cannot create a temporary directory from " + tmpl + ": " +
                std::strerror(errno) + "; set TMPDIR to a writable directory");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec); // best effort: nothing to do about a failure here
}

void write_file(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw Error("CPU plugin: cannot write " + path + "; is the disk full?");
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("CPU plugin: cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

} // namespace tg::cpu
