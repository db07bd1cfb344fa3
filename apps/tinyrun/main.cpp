// tinyrun: the one command line of tinygrad-cpp. Today it reports what it is built with and
// exercises the IR; `llm`, `mnist`, `cifar`, `bert`, `plugins` and `bench` join it as the
// engine and the device plugins land.
#include <cstdio>
#include <cstring>
#include <string>

#include "tg/error.hpp"
#include "tg/ir/print.hpp"
#include "tg/ir/symbolic.hpp"

namespace {

void usage(FILE* to) {
  std::fprintf(to, "usage: tinyrun [command]\n"
                   "  (none)    print the version, the devices found and run a small computation\n"
                   "  version   print the version\n"
                   "  simplify  simplify an index expression and print both forms\n");
}

// The index arithmetic a scheduler emits for reading a (4, 8) buffer through a reshape to
// (32,) and back: symbolic simplification must fold it to the plain loop index.
int simplify_demo() {
  using namespace tg;
  UOpPtr row = UOp::range(UOp::const_(dtypes::index, 4), 0);
  UOpPtr col = UOp::range(UOp::const_(dtypes::index, 8), 1);
  UOpPtr flat = row * 8 + col;
  UOpPtr idx = (flat / 8) * 8 + flat % 8;
  UOpPtr simple = simplify(idx);
  std::printf("index expression:   %s\n", render_expr(idx).c_str());
  std::printf("after simplify:     %s\n", render_expr(simple).c_str());
  std::printf("nodes: %zu -> %zu\n", idx->toposort().size(), simple->toposort().size());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
      usage(stdout);
      return 0;
    }
    if (cmd == "version") {
      std::printf("tinyrun %s\n", TG_VERSION);
      return 0;
    }
    if (cmd == "simplify") return simplify_demo();
    if (!cmd.empty()) {
      std::fprintf(stderr, "tinyrun: unknown command '%s'\n", cmd.c_str());
      usage(stderr);
      return 2;
    }
    std::printf("tinyrun %s\n", TG_VERSION);
    std::printf("devices: none yet (device plugins are not part of this build)\n");
    return simplify_demo();
  } catch (const tg::Error& e) {
    std::fprintf(stderr, "tinyrun: %s\n", e.what());
    return 1;
  }
}
