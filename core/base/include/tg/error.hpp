#pragma once
// Every error the library raises on bad input derives from tg::Error. Messages say what was
// wrong and what to do; nothing aborts on bad user input.
#include <stdexcept>
#include <string>

namespace tg {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A graph or node that breaks the IR's rules (spec checker, wrong dtype from a rewrite).
class SpecError : public Error {
public:
  using Error::Error;
};

// graph_rewrite that does not reach a fixed point within its bound.
class RewriteError : public Error {
public:
  using Error::Error;
};

} // namespace tg
