// tinyrun: the one command line of tinygrad-cpp. `llm` runs llama-family models from GGUF or
// Hugging Face folders; `mnist` trains and evaluates tinygrad's beautiful_mnist on real digits;
// `cifar` trains hlb_cifar10 on CIFAR-10 and runs the MLPerf Tiny ResNet-8; `bert` embeds
// sentences and trains BERT; `demo` (also the bare command) reports what it is built with,
// lists the device plugins and runs tensors through the whole pipeline.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "bert.hpp"
#include "cifar.hpp"
#include "help_requested.hpp"
#include "llm_command.hpp"
#include "mnist.hpp"
#include "tensor_demo.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/ir/print.hpp"
#include "tg/ir/symbolic.hpp"
#include "tg/knobs.hpp"

namespace {

void usage(FILE* to) {
  std::fprintf(
      to, "usage: tinyrun [command]\n"
          "  llm       generate|chat|bench|serve|quantize|random on GGUF or Hugging Face models\n"
          "            (`tinyrun llm help` for the commands)\n"
          "  mnist     train|eval|bench tinygrad's beautiful_mnist on MNIST digits\n"
          "            (`tinyrun mnist help` for the options)\n"
          "  cifar     train|eval|bench tinygrad's hlb_cifar10 on CIFAR-10, eval the MLPerf\n"
          "            Tiny ResNet-8 (`tinyrun cifar help`)\n"
          "  bert      embed|tokenize|train|bench: BERT sentence embeddings (all-MiniLM-L6-v2)\n"
          "            and the MLPerf BERT pretraining step (`tinyrun bert help`)\n"
          "  demo, (none)\n"
          "            print the version and the devices found, run a few tensor\n"
          "            computations on the device DEV selects (DEV=CPU, DEV=CPU:C; default:\n"
          "            the best found), check them against the host, and simplify an index\n"
          "            expression\n"
          "  version   print the version\n"
          "  plugins   list every device plugin found, loaded or not and why\n"
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

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Every manifest found, in search order, each loaded and probed.
int plugins_command() {
  tg::DeviceRegistry& registry = tg::DeviceRegistry::global();
  std::printf("plugin search path (in order):\n");
  for (const auto& p : registry.search_path()) std::printf("  %s\n", p.string().c_str());
  std::vector<tg::PluginInfo> found = registry.plugins();
  if (found.empty()) std::printf("no plugins found\n");
  for (const tg::PluginInfo& p : found) {
    std::printf("\n%s: %s\n", p.name.c_str(), std::string(tg::to_string(p.state)).c_str());
    std::printf("  library   %s\n", p.library_path.string().c_str());
    if (!p.manifest_path.empty()) std::printf("  manifest  %s\n", p.manifest_path.string().c_str());
    std::printf("  version   %s\n", p.version.c_str());
    std::printf("  abi       %s\n", p.abi.c_str());
    std::printf("  devices   %s (renderers %s, priority %d)\n", join(p.devices).c_str(),
                join(p.renderers).c_str(), p.priority);
    if (!p.requirements.empty()) std::printf("  requires  %s\n", join(p.requirements).c_str());
    if (!p.reason.empty()) std::printf("  why       %s\n", p.reason.c_str());
  }
  return 0;
}

void print_devices() {
  std::vector<std::string> devices = tg::DeviceRegistry::global().available_devices();
  if (devices.empty())
    std::printf("devices: none found (run `tinyrun plugins` to see why)\n");
  else
    std::printf("devices: %s\n", join(devices).c_str());
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
    if (cmd == "plugins") return plugins_command();
    if (cmd == "llm") return tinyrun::llm_command(std::vector<std::string>(argv + 2, argv + argc));
    if (cmd == "mnist")
      return tinyrun::mnist_command(std::vector<std::string>(argv + 2, argv + argc));
    if (cmd == "cifar")
      return tinyrun::cifar_command(std::vector<std::string>(argv + 2, argv + argc));
    if (cmd == "bert")
      return tinyrun::bert_command(std::vector<std::string>(argv + 2, argv + argc));
    if (!cmd.empty() && cmd != "demo") {
      std::fprintf(stderr, "tinyrun: unknown command '%s'\n", cmd.c_str());
      usage(stderr);
      return 2;
    }
    std::printf("tinyrun %s\n", TG_VERSION);
    print_devices();
    // DEV picks the device (an explicit request that cannot be served fails with the reasons);
    // without it the best available device runs the tensors.
    int rc = tinyrun::run_tensor_demo();
    return simplify_demo() | rc;
  } catch (const tinyrun::HelpRequested& h) {
    std::fputs(h.usage.c_str(), stdout);
    return 0;
  } catch (const tg::Error& e) {
    std::fprintf(stderr, "tinyrun: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tinyrun: out of memory (raise the memory limit or use smaller inputs)\n");
    return 1;
  } catch (const std::exception& e) {
    // Not one of ours: still a message and an exit code, never std::terminate.
    std::fprintf(stderr, "tinyrun: %s\n", e.what());
    return 1;
  }
}
