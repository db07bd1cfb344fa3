#include <doctest/doctest.h>
#include <fstream>

#include "plugin_test_util.hpp"
#include "tg/compile_cache.hpp"
#include "tg/knobs.hpp"

namespace fs = std::filesystem;
using namespace tg;
using tg::test::TempDir;

namespace {

class CountingCompiler : public Compiler {
public:
  explicit CountingCompiler(std::string id) : id_(std::move(id)) {}
  std::string identity() const override { return id_; }
  std::vector<uint8_t> compile(const std::string& src) override {
    ++compiles;
    std::vector<uint8_t> out(src.rbegin(), src.rend()); // something not equal to the source
    out.push_back(static_cast<uint8_t>(id_.size()));
    return out;
  }
  int compiles = 0;

private:
  std::string id_;
};

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::exists(dir / "compile"))
    for (const auto& e : fs::directory_iterator(dir / "compile")) out.push_back(e.path());
  return out;
}

} // namespace

TEST_SUITE("plugins.compile_cache") {
  TEST_CASE("a second compile of the same source and compiler is served from disk") {
    TempDir tmp;
    tg::Context dir{{"TG_CACHE_DIR", tmp.path().string()}};
    tg::Context on{{"TG_COMPILER_CACHE", ""}};
    CountingCompiler c("cc 1"), other("cc 1.1");
    std::vector<uint8_t> first = compile_cached(c, "int k;");
    CHECK(c.compiles == 1);
    CHECK(compile_cached(c, "int k;") == first);
    CHECK(c.compiles == 1);
    CHECK(entries(tmp.path()).size() == 1);
    // A different identity or source is a different entry.
    CHECK(compile_cached(other, "int k;") != first);
    CHECK(other.compiles == 1);
    compile_cached(c, "int j;");
    CHECK(c.compiles == 2);
    CHECK(entries(tmp.path()).size() == 3);
    CHECK(cache_dir() == tmp.path());
  }

  TEST_CASE("corrupt or truncated entries are ignored and rewritten") {
    TempDir tmp;
    tg::Context dir{{"TG_CACHE_DIR", tmp.path().string()}};
    CountingCompiler c("cc");
    std::vector<uint8_t> good = compile_cached(c, "src");
    REQUIRE(entries(tmp.path()).size() == 1);
    fs::path entry = entries(tmp.path())[0];
    auto size = fs::file_size(entry);
    for (int damage = 0; damage < 3; ++damage) {
      CAPTURE(damage);
      if (damage == 0) std::ofstream(entry, std::ios::binary) << "garbage";
      if (damage == 1) fs::resize_file(entry, size - 1);
      if (damage == 2) {
        std::fstream f(entry, std::ios::binary | std::ios::in | std::ios::out);
        f.seekp(static_cast<std::streamoff>(size - 1));
        f.put('\x7f'); // flips the binary's last byte: the checksum no longer matches
      }
      int before = c.compiles;
      CHECK(compile_cached(c, "src") == good);
      CHECK(c.compiles == before + 1);
      CHECK(fs::file_size(entry) == size); // rewritten whole
    }
    // No temp files are left behind.
    CHECK(entries(tmp.path()).size() == 1);
  }

  TEST_CASE("TG_COMPILER_CACHE=0 compiles every time and writes nothing") {
    TempDir tmp;
    tg::Context dir{{"TG_CACHE_DIR", tmp.path().string()}};
    tg::Context off{{"TG_COMPILER_CACHE", "0"}};
    CountingCompiler c("cc");
    compile_cached(c, "src");
    compile_cached(c, "src");
    CHECK(c.compiles == 2);
    CHECK(entries(tmp.path()).empty());
  }

  TEST_CASE("an unwritable cache only costs compiles") {
    tg::Context dir{{"TG_CACHE_DIR", "/proc/tg-cache-cannot-exist"}};
    CountingCompiler c("cc");
    CHECK(compile_cached(c, "src") == compile_cached(c, "src"));
    CHECK(c.compiles == 2);
  }
}
