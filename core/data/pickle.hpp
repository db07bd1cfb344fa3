#pragma once
// A restricted unpickler: Python's pickle protocols 0-5 as far as data goes (None, bools,
// integers up to 64 bits, floats, str, bytes, tuples, lists, dicts, the memo, marks), with no
// code. Globals, REDUCE and persistent ids, the three ways a pickle reaches outside plain data,
// are answered by the caller's hooks, which decide what exists (torch.load's weights_only idea:
// a checkpoint may name only what a reader of tensors knows). Objects live in the result's arena
// and refer to each other by pointer, so a pickle that builds a cycle (a list inside itself) is
// still freed whole.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tg::data {

struct PyObject {
  enum class Kind { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Object };
  Kind kind = Kind::None;
  int64_t i = 0;                                     // Bool, Int
  double f = 0;                                      // Float
  std::string s;                                     // Str, Bytes; the type tag of an Object
  std::vector<PyObject*> items;                      // Tuple, List; the fields of an Object
  std::vector<std::pair<PyObject*, PyObject*>> dict; // Dict, in insertion order
};

const char* py_kind_name(PyObject::Kind k);

struct Pickle {
  std::vector<std::unique_ptr<PyObject>> arena;
  PyObject* root = nullptr;
};

// What a pickle may reach. Each hook returns an object made through `make` (or one of its
// arguments), or throws tg::Error saying what is not allowed and why.
struct PickleHooks {
  using Make = std::function<PyObject*(PyObject::Kind)>;
  // GLOBAL / STACK_GLOBAL `module` `name`.
  std::function<PyObject*(const std::string& module, const std::string& name, const Make& make)>
      global;
  // REDUCE: `callable(*args)`, callable being what `global` returned.
  std::function<PyObject*(PyObject* callable, PyObject* args, const Make& make)> reduce;
  // BINPERSID / PERSID: the object a persistent id stands for.
  std::function<PyObject*(PyObject* pid, const Make& make)> persistent_load;
};

// The most objects one pickle may create: a state dict's pickle makes a few per tensor, a
// hostile one could otherwise turn each input byte into an allocation.
inline constexpr size_t kPickleMaxObjects = 10'000'000;

// Runs the pickle in `bytes` up to its STOP. Raises tg::Error naming `origin`, the opcode and
// its byte offset for: an unknown or unsupported opcode (NEWOBJ, INST, OBJ, EXT*: object
// construction), a truncated argument, a stack underflow or missing MARK, a memo key never
// stored, an integer beyond 64 bits, an operation on an object of the wrong kind, too many
// objects, and bytes that end before STOP.
Pickle unpickle(std::span<const uint8_t> bytes, const std::string& origin,
                const PickleHooks& hooks);

} // namespace tg::data
