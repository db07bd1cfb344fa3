#pragma once
// Running `tinyrun cifar` as a user does, and the small CIFAR batches its tests write.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "tg/data.hpp"

namespace cifar_cli {

namespace fs = std::filesystem;

struct Run {
  int rc;
  std::string out; // stdout and stderr together
};

// `tinyrun cifar ARGS`; rc is the exit code, -1 when a signal ended the process.
inline Run tinyrun(const std::string& args) {
  const std::string cmd = std::string(TINYRUN_PATH) + " cifar " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// `n` records with labels i % 10 and patterned pixels, plus `extra` stray bytes.
inline void write_batch(const fs::path& path, size_t n, size_t extra = 0, int bad_label = -1) {
  std::ofstream f(path, std::ios::binary);
  for (size_t i = 0; i < n; ++i) {
    const auto label = static_cast<char>(static_cast<int>(i) == bad_label ? 12 : i % 10);
    f.put(label);
    for (int k = 0; k < 3072; ++k) f.put(static_cast<char>((k * 13 + i * 7) % 256));
  }
  for (size_t i = 0; i < extra; ++i) f.put('\x55');
}

// A fresh folder, removed at the end.
struct Folder {
  fs::path dir;
  Folder() {
    static int counter = 0;
    dir = fs::temp_directory_path() /
          ("tg_cifar_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() { fs::remove_all(dir); }
  std::string data() const { return "--data " + dir.string(); }
};

// A file of the data folder ($TG_DATA_DIR or ../shared/data), if it is there.
inline std::optional<fs::path> shared(const std::string& rel) {
  auto d = tg::data::data_dir(TG_SOURCE_DIR);
  if (!d || !fs::exists(*d / rel)) return std::nullopt;
  return *d / rel;
}

} // namespace cifar_cli
