#pragma once
// Running `tinyrun mnist` as a user does, and the small IDX files its tests write: shared by
// the mnist.cli and mnist.hostile suites.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace mnist_cli {

namespace fs = std::filesystem;

struct Run {
  int rc;
  std::string out; // stdout and stderr together
};

// Runs `tinyrun mnist ARGS` through the shell; `prefix` goes before it (for example
// "ulimit -v N; exec "). rc is the exit code, -1 when a signal ended the process.
inline Run tinyrun(const std::string& args, const std::string& prefix = "") {
  const std::string cmd = prefix + std::string(TINYRUN_PATH) + " mnist " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// An IDX file of uint8 elements: magic 00 00 08 rank, big-endian dims, then `data` (which may
// be shorter or longer than the dims announce).
inline void write_idx(const fs::path& path, const std::vector<uint32_t>& dims,
                      const std::vector<uint8_t>& data) {
  std::ofstream f(path, std::ios::binary);
  const uint8_t head[4] = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  f.write(reinterpret_cast<const char*>(head), 4);
  for (uint32_t d : dims) {
    const uint8_t be[4] = {static_cast<uint8_t>(d >> 24), static_cast<uint8_t>(d >> 16),
                           static_cast<uint8_t>(d >> 8), static_cast<uint8_t>(d)};
    f.write(reinterpret_cast<const char*>(be), 4);
  }
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

inline std::vector<uint8_t> pixels(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 37) % 256);
  return v;
}

// A fresh folder with 4 well-formed digits (images.idx, labels.idx) and room for bad files.
struct Folder {
  fs::path dir;
  Folder() {
    dir = fs::temp_directory_path() /
          ("tg_mnist_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::remove_all(dir);
    fs::create_directories(dir);
    write_idx(dir / "images.idx", {4, 28, 28}, pixels(4 * 784));
    write_idx(dir / "labels.idx", {4}, {3, 1, 4, 1});
  }
  ~Folder() { fs::remove_all(dir); }
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::string data() const { return "--data " + dir.string(); }
};

} // namespace mnist_cli
