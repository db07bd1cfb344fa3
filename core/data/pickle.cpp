// The restricted unpickler; see pickle.hpp. Opcode meanings from CPython's Lib/pickletools.py
// (the reference description of every opcode): arguments are little-endian except BINFLOAT's
// big-endian double; LONG1/LONG4 are two's-complement little-endian of the given length.
#include "pickle.hpp"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "tg/checked.hpp"
#include "tg/error.hpp"

namespace tg::data {

const char* py_kind_name(PyObject::Kind k) {
  switch (k) {
  case PyObject::Kind::None:
    return "None";
  case PyObject::Kind::Bool:
    return "bool";
  case PyObject::Kind::Int:
    return "int";
  case PyObject::Kind::Float:
    return "float";
  case PyObject::Kind::Str:
    return "str";
  case PyObject::Kind::Bytes:
    return "bytes";
  case PyObject::Kind::Tuple:
    return "tuple";
  case PyObject::Kind::List:
    return "list";
  case PyObject::Kind::Dict:
    return "dict";
  case PyObject::Kind::Object:
    return "object";
  }
  return "?";
}

namespace {

class Machine {
public:
  Machine(std::span<const uint8_t> b, const std::string& origin, const PickleHooks& hooks)
      : b_(b), origin_(origin), hooks_(hooks) {
    make_ = [this](PyObject::Kind k) { return make(k); };
  }

  Pickle run() {
    while (true) {
      if (pos_ >= b_.size()) fail("the pickle ends before its STOP opcode (truncated)");
      op_at_ = pos_;
      op_ = b_[pos_++];
      if (step()) break;
    }
    if (stack_.size() != 1 || !marks_.empty())
      fail("STOP with " + std::to_string(stack_.size()) + " objects on the stack (expected 1)");
    out_.root = stack_.back();
    return std::move(out_);
  }

private:
  [[noreturn]] void fail(const std::string& why) const {
    char where[64];
    std::snprintf(where, sizeof where, "pickle opcode 0x%02x at byte %zu", op_, op_at_);
    throw_parse_error(origin_, where, "", why);
  }

  PyObject* make(PyObject::Kind k) {
    if (out_.arena.size() >= kPickleMaxObjects)
      fail("more than " + std::to_string(kPickleMaxObjects) + " objects (not a checkpoint)");
    out_.arena.push_back(std::make_unique<PyObject>());
    out_.arena.back()->kind = k;
    return out_.arena.back().get();
  }
  PyObject* make_int(int64_t v) {
    PyObject* o = make(PyObject::Kind::Int);
    o->i = v;
    return o;
  }
  PyObject* make_str(PyObject::Kind k, std::string s) {
    PyObject* o = make(k);
    o->s = std::move(s);
    return o;
  }

  const uint8_t* take(size_t n) {
    if (n > b_.size() - pos_)
      fail("its " + std::to_string(n) + "-byte argument runs past the end of the pickle");
    const uint8_t* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  uint64_t le(size_t n) {
    const uint8_t* p = take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
  }
  std::string bytes(uint64_t n) {
    if (n > b_.size() - pos_)
      fail("a string of " + std::to_string(n) + " bytes runs past the end of the pickle");
    return std::string(reinterpret_cast<const char*>(take(static_cast<size_t>(n))),
                       static_cast<size_t>(n));
  }
  std::string line() { // protocol 0 arguments end with '\n'
    const size_t start = pos_;
    while (pos_ < b_.size() && b_[pos_] != '\n') ++pos_;
    if (pos_ >= b_.size()) fail("its text argument has no end of line");
    std::string s(reinterpret_cast<const char*>(b_.data() + start), pos_ - start);
    ++pos_;
    return s;
  }
  // LONG1/LONG4: two's complement, little-endian, `n` bytes.
  int64_t long_bytes(uint64_t n) {
    if (n > 8) {
      // A longer encoding may still hold a small value padded with sign bytes: fold them.
      const uint8_t* p = take(static_cast<size_t>(n));
      const uint8_t sign = (p[n - 1] & 0x80) ? 0xFF : 0x00;
      for (uint64_t i = 8; i < n; ++i)
        if (p[i] != sign) fail("an integer of " + std::to_string(n) + " bytes (beyond 64 bits)");
      if (((p[7] & 0x80) ? 0xFF : 0x00) != sign) fail("an integer beyond 64 bits");
      uint64_t v = 0;
      for (size_t i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
      return static_cast<int64_t>(v);
    }
    if (n == 0) return 0;
    uint64_t v = le(static_cast<size_t>(n));
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n); // sign-extend
    return static_cast<int64_t>(v);
  }

  PyObject* pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      fail("it pops from an empty stack (the pickle is malformed)");
    PyObject* o = stack_.back();
    stack_.pop_back();
    return o;
  }
  PyObject* top() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      fail("it needs an object on the stack, and there is none");
    return stack_.back();
  }
  // The objects above the last MARK, which is removed.
  std::vector<PyObject*> pop_mark() {
    if (marks_.empty()) fail("it needs a MARK, and there is none");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PyObject*> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  void push(PyObject* o) { stack_.push_back(o); }
  PyObject* tuple(std::vector<PyObject*> items) {
    PyObject* t = make(PyObject::Kind::Tuple);
    t->items = std::move(items);
    return t;
  }
  void memo_put(uint64_t key) { memo_[key] = top(); }
  PyObject* memo_get(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail("memo key " + std::to_string(key) + " was never stored");
    return it->second;
  }
  PyObject* expect(PyObject* o, PyObject::Kind k, const char* what) {
    if (o->kind != k)
      fail(std::string(what) + " needs a " + py_kind_name(k) + ", got a " + py_kind_name(o->kind));
    return o;
  }
  void set_items(PyObject* d, const std::vector<PyObject*>& kv) {
    expect(d, PyObject::Kind::Dict, "SETITEMS");
    if (kv.size() % 2 != 0) fail("SETITEMS with an odd number of objects");
    for (size_t i = 0; i < kv.size(); i += 2) {
      // A later value for an equal key replaces the earlier one, as Python's dict does.
      bool replaced = false;
      if (kv[i]->kind == PyObject::Kind::Str)
        for (auto& [k, v] : d->dict)
          if (k->kind == PyObject::Kind::Str && k->s == kv[i]->s) {
            v = kv[i + 1];
            replaced = true;
            break;
          }
      if (!replaced) d->dict.emplace_back(kv[i], kv[i + 1]);
    }
  }
  PyObject* global(const std::string& module, const std::string& name) {
    if (!hooks_.global) fail("global " + module + "." + name + ": this pickle may name no globals");
    return hooks_.global(module, name, make_);
  }

  // Executes op_; true at STOP.
  bool step() {
    using K = PyObject::Kind;
    switch (op_) {
    case 0x80: // PROTO
      if (take(1)[0] > 5) fail("pickle protocol above 5");
      return false;
    case 0x95: // FRAME: a length hint only
      (void)le(8);
      return false;
    case '.': // STOP
      return true;
    case '(': // MARK
      marks_.push_back(stack_.size());
      return false;
    case '0': // POP
      (void)pop();
      return false;
    case '1': // POP_MARK
      (void)pop_mark();
      return false;
    case '2': // DUP
      push(top());
      return false;
    case 'N':
      push(make(K::None));
      return false;
    case 0x88:   // NEWTRUE
    case 0x89: { // NEWFALSE
      PyObject* o = make(K::Bool);
      o->i = op_ == 0x88;
      push(o);
      return false;
    }
    case 'J': // BININT
      push(make_int(static_cast<int32_t>(le(4))));
      return false;
    case 'K': // BININT1
      push(make_int(static_cast<int64_t>(le(1))));
      return false;
    case 'M': // BININT2
      push(make_int(static_cast<int64_t>(le(2))));
      return false;
    case 0x8a: // LONG1
      push(make_int(long_bytes(le(1))));
      return false;
    case 0x8b: { // LONG4
      const auto n = static_cast<int32_t>(le(4));
      if (n < 0) fail("LONG4 with a negative length");
      push(make_int(long_bytes(static_cast<uint64_t>(n))));
      return false;
    }
    case 'I': { // INT (protocol 0): decimal, or 00/01 for False/True
      const std::string s = line();
      if (s == "00" || s == "01") {
        PyObject* o = make(K::Bool);
        o->i = s == "01";
        push(o);
        return false;
      }
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0' || errno != 0) fail("INT argument '" + s + "' is no integer");
      push(make_int(v));
      return false;
    }
    case 'G': { // BINFLOAT: big-endian double
      const uint8_t* p = take(8);
      uint64_t bits = 0;
      for (int i = 0; i < 8; ++i) bits = bits << 8 | p[i];
      PyObject* o = make(K::Float);
      o->f = std::bit_cast<double>(bits);
      push(o);
      return false;
    }
    case 'X': // BINUNICODE
      push(make_str(K::Str, bytes(le(4))));
      return false;
    case 0x8c: // SHORT_BINUNICODE
      push(make_str(K::Str, bytes(le(1))));
      return false;
    case 0x8d: // BINUNICODE8
      push(make_str(K::Str, bytes(le(8))));
      return false;
    case 'T': // BINSTRING (Python 2 str)
      push(make_str(K::Str, bytes(le(4))));
      return false;
    case 'U': // SHORT_BINSTRING
      push(make_str(K::Str, bytes(le(1))));
      return false;
    case 'B': // BINBYTES
      push(make_str(K::Bytes, bytes(le(4))));
      return false;
    case 'C': // SHORT_BINBYTES
      push(make_str(K::Bytes, bytes(le(1))));
      return false;
    case 0x8e: // BINBYTES8
      push(make_str(K::Bytes, bytes(le(8))));
      return false;
    case ')': // EMPTY_TUPLE
      push(tuple({}));
      return false;
    case 't': // TUPLE
      push(tuple(pop_mark()));
      return false;
    case 0x85:   // TUPLE1
    case 0x86:   // TUPLE2
    case 0x87: { // TUPLE3
      const size_t n = op_ - 0x84u;
      std::vector<PyObject*> items(n);
      for (size_t i = n; i-- > 0;) items[i] = pop();
      push(tuple(std::move(items)));
      return false;
    }
    case ']': // EMPTY_LIST
      push(make(K::List));
      return false;
    case 'l': { // LIST
      PyObject* l = make(K::List);
      l->items = pop_mark();
      push(l);
      return false;
    }
    case 'a': { // APPEND
      PyObject* v = pop();
      expect(top(), K::List, "APPEND")->items.push_back(v);
      return false;
    }
    case 'e': { // APPENDS
      std::vector<PyObject*> vs = pop_mark();
      PyObject* l = expect(top(), K::List, "APPENDS");
      l->items.insert(l->items.end(), vs.begin(), vs.end());
      return false;
    }
    case '}': // EMPTY_DICT
      push(make(K::Dict));
      return false;
    case 'd': { // DICT
      std::vector<PyObject*> kv = pop_mark();
      PyObject* d = make(K::Dict);
      set_items(d, kv);
      push(d);
      return false;
    }
    case 's': { // SETITEM
      PyObject* v = pop();
      PyObject* k = pop();
      set_items(top(), {k, v});
      return false;
    }
    case 'u': { // SETITEMS
      std::vector<PyObject*> kv = pop_mark();
      set_items(top(), kv);
      return false;
    }
    case 'q': // BINPUT
      memo_put(le(1));
      return false;
    case 'r': // LONG_BINPUT
      memo_put(le(4));
      return false;
    case 0x94: // MEMOIZE
      memo_put(memo_.size());
      return false;
    case 'h': // BINGET
      push(memo_get(le(1)));
      return false;
    case 'j': // LONG_BINGET
      push(memo_get(le(4)));
      return false;
    case 'c': { // GLOBAL "module\nname\n"
      std::string module = line();
      std::string name = line();
      push(global(module, name));
      return false;
    }
    case 0x93: { // STACK_GLOBAL
      PyObject* name = expect(pop(), K::Str, "STACK_GLOBAL");
      PyObject* module = expect(pop(), K::Str, "STACK_GLOBAL");
      push(global(module->s, name->s));
      return false;
    }
    case 'R': { // REDUCE
      PyObject* args = expect(pop(), K::Tuple, "REDUCE");
      PyObject* callable = pop();
      if (!hooks_.reduce) fail("REDUCE: this pickle may call nothing");
      push(hooks_.reduce(callable, args, make_));
      return false;
    }
    case 'b': { // BUILD: an object's state (a dict's __dict__, say); data needs none of it
      (void)pop();
      (void)top();
      return false;
    }
    case 'Q': { // BINPERSID
      PyObject* pid = pop();
      if (!hooks_.persistent_load) fail("a persistent id, and this pickle may have none");
      push(hooks_.persistent_load(pid, make_));
      return false;
    }
    default:
      break;
    }
    if (op_ == 0x81 || op_ == 0x92 || op_ == 'i' || op_ == 'o' || op_ == 0x82 || op_ == 0x83 ||
        op_ == 0x84)
      fail("it constructs an object (NEWOBJ, INST, OBJ or EXT): not allowed in a checkpoint");
    fail("unknown or unsupported opcode (not a pickle, or a protocol this reader lacks)");
  }

  std::span<const uint8_t> b_;
  const std::string& origin_;
  const PickleHooks& hooks_;
  PickleHooks::Make make_;
  size_t pos_ = 0, op_at_ = 0;
  uint8_t op_ = 0;
  std::vector<PyObject*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PyObject*> memo_;
  Pickle out_;
};

} // namespace

Pickle unpickle(std::span<const uint8_t> bytes, const std::string& origin,
                const PickleHooks& hooks) {
  return Machine(bytes, origin, hooks).run();
}

} // namespace tg::data
