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

// Errors of a kind Python code tells apart by its exception type (PyTorch's and tinygrad's
// choices); the Python binding raises each as a tinygrad_cpp.Error that is also that built-in.
// An argument of the wrong kind, or a combination of arguments the op does not take (TypeError).
class TypeError : public Error {
public:
  using Error::Error;
};

// A mode or form named by the caller that does not exist (NotImplementedError, as PyTorch's
// pad with an unknown mode).
class NotImplementedError : public Error {
public:
  using Error::Error;
};

// A value outside the range of the dtype it must be stored in (OverflowError).
class OverflowError : public Error {
public:
  using Error::Error;
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
