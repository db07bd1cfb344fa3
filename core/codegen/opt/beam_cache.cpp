// The disk cache of BEAM's results (tg/beam.hpp): one entry (tg/cache_entry.hpp) per kernel and
// target under $TG_CACHE_DIR/beam, its payload one Opt a line ("UPCAST 0 4"). A file that does
// not read as an entry is corrupt: a warning names it, and the search's result replaces it.
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string_view>

#include "tg/beam.hpp"
#include "tg/cache_entry.hpp"
#include "tg/compile_cache.hpp"
#include "tg/ir/print.hpp"

namespace fs = std::filesystem;

namespace tg {

namespace {

constexpr std::string_view kMagic{"TGBEAM01", 8};

std::string opts_text(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts)
    s += std::string(opt_op_name(o.op)) + " " + std::to_string(o.axis) + " " +
         std::to_string(o.amount) + "\n";
  return s;
}

std::optional<std::vector<Opt>> parse_opts(const std::string& text) {
  std::vector<Opt> out;
  std::istringstream in(text);
  std::string name;
  int axis = 0, amount = 0;
  while (in >> name >> axis >> amount) {
    bool known = false;
    for (int op = 0; op <= static_cast<int>(OptOp::TC); ++op)
      if (opt_op_name(static_cast<OptOp>(op)) == name) {
        out.push_back({static_cast<OptOp>(op), axis, amount});
        known = true;
      }
    if (!known) return std::nullopt;
  }
  if (!in.eof()) return std::nullopt;
  return out;
}

} // namespace

std::string beam_cache_path(const std::string& key) {
  const fs::path dir = cache_dir();
  if (dir.empty()) return {};
  return (dir / "beam" / (cache_entry_name(key) + ".beam")).string();
}

std::string beam_cache_key(const UOpPtr& ast, const BeamTarget& target, int64_t width) {
  Device& dev = *target.device;
  std::string key = "beam width " + std::to_string(width) + "\ndevice " + dev.name() + " arch " +
                    dev.arch() + "\nrenderer " + target.renderer + "\ncompiler " +
                    dev.compiler(target.renderer).identity() + "\n";
  key += print_graph(ast);
  return key;
}

std::optional<std::vector<Opt>> beam_cache_load(const std::string& key) {
  const std::string path = beam_cache_path(key);
  if (path.empty()) return std::nullopt;
  std::string payload, why;
  CacheRead read = read_cache_entry(path, kMagic, key, payload, why);
  std::optional<std::vector<Opt>> opts;
  if (read == CacheRead::Hit) {
    opts = parse_opts(payload);
    if (opts) return opts;
    read = CacheRead::Corrupt;
    why = "the result does not parse as Opts";
  }
  if (read == CacheRead::Corrupt)
    std::cerr << "warning: BEAM cache entry " << path << " is corrupt (" << why
              << "); ignoring it, the search's result will replace it\n";
  return std::nullopt;
}

void beam_cache_store(const std::string& key, const std::vector<Opt>& opts) {
  const std::string path = beam_cache_path(key);
  if (!path.empty()) write_cache_entry(path, kMagic, key, opts_text(opts));
}

} // namespace tg
