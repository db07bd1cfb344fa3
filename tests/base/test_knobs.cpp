// The knob registry: typed values with defaults, refusals that name the knob and what it takes,
// Context's scoped overrides, and the README's table of knobs against the registry.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tg/error.hpp"
#include "tg/knobs.hpp"

using namespace tg;

namespace {

struct ReadmeRow {
  std::string default_value, accepts;
};

// The rows of README.md's "Environment knobs" table: | `NAME` | default | accepts | effect |.
std::map<std::string, ReadmeRow> readme_knobs() {
  std::ifstream in(std::string(TG_SOURCE_DIR) + "/README.md");
  REQUIRE(in);
  std::map<std::string, ReadmeRow> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Environment knobs";
    if (!in_section || line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) {
      const size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    REQUIRE_MESSAGE(cells.size() >= 4, line);
    auto unquote = [](std::string s) {
      if (s.size() >= 2 && s.front() == '`' && s.back() == '`') s = s.substr(1, s.size() - 2);
      return s;
    };
    rows[unquote(cells[0])] = {unquote(cells[1]), cells[2]};
  }
  return rows;
}

std::string default_text(const Knob& k) {
  if (k.type() == Knob::Type::Int) return std::to_string(static_cast<const IntKnob&>(k).fallback());
  return "";
}

} // namespace

TEST_SUITE("knobs.registry") {
  TEST_CASE("every knob has a unique name, what it accepts and a doc") {
    std::set<std::string_view> names;
    for (const Knob* k : all_knobs()) {
      CAPTURE(k->name());
      CHECK(names.insert(k->name()).second);
      CHECK(!k->accepts().empty());
      CHECK(!k->doc().empty());
    }
    CHECK(&find_knob("DEBUG") == &knobs::DEBUG);
    CHECK_THROWS_WITH_AS(find_knob("DEBGU"), doctest::Contains("unknown knob 'DEBGU'"), Error);
  }

  TEST_CASE("a bad value is refused with the knob's name and what it takes") {
    CHECK_THROWS_WITH_AS(knobs::DEBUG.parse("abc", "environment variable"),
                         "environment variable DEBUG='abc' is not an integer; DEBUG takes 0..7 "
                         "(verbosity: 1 schedule sizes, 2 kernel launches, 3 kernel ASTs, 4 "
                         "source, 5 linearized uops, 7 assembly)",
                         Error);
    CHECK_THROWS_WITH_AS(knobs::DEBUG.parse("9", "environment variable"),
                         doctest::Contains("DEBUG='9' is out of range; DEBUG takes 0..7"), Error);
    CHECK_THROWS_WITH_AS(knobs::JIT.parse("2x", "environment variable"),
                         doctest::Contains("JIT='2x' is not an integer; JIT takes 0 or 1"), Error);
    CHECK(knobs::TRACK_MATCH_STATS.parse("2", "environment variable") == 2);
    CHECK_THROWS_WITH_AS(Context({{"NOOPT", "yes"}}),
                         doctest::Contains("Context NOOPT='yes' is not an integer"), Error);
  }

  TEST_CASE("Context overrides for its scope and restores after") {
    const int64_t debug = knobs::DEBUG;
    const std::string dev = knobs::DEV;
    {
      Context c{{"DEBUG", 3}, {"DEV", "NULL"}};
      CHECK(knobs::DEBUG == 3);
      CHECK(knobs::DEV.get() == "NULL");
      {
        Context inner{{"DEBUG", ""}}; // back to the default, as if unset
        CHECK(knobs::DEBUG == 0);
      }
      CHECK(knobs::DEBUG == 3);
    }
    CHECK(knobs::DEBUG == debug);
    CHECK(knobs::DEV.get() == dev);
  }

  TEST_CASE("a Context with one bad setting changes nothing") {
    const int64_t noopt = knobs::NOOPT;
    CHECK_THROWS_AS(Context({{"NOOPT", 1 - noopt}, {"DEBUG", 99}}), Error);
    CHECK(knobs::NOOPT == noopt);
    CHECK_THROWS_AS(Context({{"NOOPT", 1 - noopt}, {"NOPE", 1}}), Error);
    CHECK(knobs::NOOPT == noopt);
  }
}

TEST_SUITE("knobs.readme") {
  TEST_CASE("README's table of knobs lists every knob, its default and what it accepts") {
    const auto rows = readme_knobs();
    for (const Knob* k : all_knobs()) {
      const std::string name(k->name());
      CAPTURE(name);
      auto it = rows.find(name);
      REQUIRE_MESSAGE(it != rows.end(), "README.md's knob table has no row for "
                                            << name << ": | `" << name << "` | " << default_text(*k)
                                            << " | " << k->accepts() << " | " << k->doc() << " |");
      CHECK(it->second.default_value == default_text(*k));
      CHECK(it->second.accepts == k->accepts());
    }
    for (const auto& [name, row] : rows) {
      CAPTURE(name);
      CHECK_NOTHROW(find_knob(name)); // no row for a knob that does not exist
    }
  }
}
