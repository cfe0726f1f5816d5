#include "worker/training/checkpoint_bounds.h"

#include <c10/core/ScalarType.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text.h"

namespace qkov::training {
namespace {

absl::Status Refuse(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("checkpoint: ", what));
}

// Little-endian fields, as zip and pickle store them. Callers check bounds.
uint64_t Le(absl::string_view b, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

// ---------------------------------------------------------------------------
// The zip layer.

struct Entry {
  std::string name;
  int method = 0;
  uint32_t crc = 0;  // as the central directory declares it
  uint64_t compressed = 0;
  uint64_t size = 0;  // uncompressed
  uint64_t data_at = 0;
  std::string source;  // a TorchScript source entry's text (IsSource)
};

// The largest TorchScript source a checkpoint may hold: LibTorch's writer
// declares a module's attributes in a few hundred bytes.
constexpr uint64_t kMaxSourceBytes = 1 << 20;

// TorchScript source, which LibTorch compiles as it loads the archive.
bool IsSource(const std::string& name) {
  return name.find("/code/") != std::string::npos &&
         absl::EndsWith(name, ".py");
}

absl::Status CheckCrc(const Entry& e, uint32_t crc) {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  // The fuzz build (CMakeLists.txt, QKOV_FUZZ): mutations break CRC-32s.
  return absl::OkStatus();
#endif
  if (crc == e.crc) return absl::OkStatus();
  return Refuse(absl::StrFormat(
      "zip entry '%s' declares CRC-32 %08x but its bytes give %08x (damaged)",
      e.name, e.crc, crc));
}

constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kEnd64LocatorSignature = 0x07064b50;
constexpr uint32_t kEnd64Signature = 0x06064b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr size_t kEndSize = 22;
constexpr size_t kCentralSize = 46;
constexpr size_t kLocalSize = 30;

struct Directory {
  uint64_t at = 0;
  uint64_t size = 0;
  uint64_t entries = 0;
};

absl::Status FindDirectory(absl::string_view b, Directory* d) {
  if (b.size() < kEndSize) {
    return Refuse(absl::StrCat("archive of ", b.size(),
                               " bytes is shorter than a zip end record"));
  }
  // The end record is the last 22 bytes plus a comment of up to 65535.
  size_t end = b.size() - kEndSize;
  const size_t lowest = end > 65535 ? end - 65535 : 0;
  while (Le(b, end, 4) != kEndSignature) {
    if (end == lowest) return Refuse("archive has no zip end record");
    --end;
  }
  d->entries = Le(b, end + 10, 2);
  d->size = Le(b, end + 12, 4);
  d->at = Le(b, end + 16, 4);
  if (end >= 20 && Le(b, end - 20, 4) == kEnd64LocatorSignature) {
    const uint64_t at64 = Le(b, end - 20 + 8, 8);
    if (at64 > b.size() || b.size() - at64 < 56 ||
        Le(b, at64, 4) != kEnd64Signature) {
      return Refuse(absl::StrCat("zip64 end record at ", at64,
                                 " lies outside the archive of ", b.size(),
                                 " bytes"));
    }
    d->entries = Le(b, at64 + 32, 8);
    d->size = Le(b, at64 + 40, 8);
    d->at = Le(b, at64 + 48, 8);
  }
  if (d->at > b.size() || d->size > b.size() - d->at) {
    return Refuse(
        absl::StrCat("zip central directory of ", d->size, " bytes at ", d->at,
                     " lies outside the archive of ", b.size(), " bytes"));
  }
  if (d->entries > d->size / kCentralSize) {
    return Refuse(absl::StrCat("zip central directory of ", d->size,
                               " bytes cannot hold the ", d->entries,
                               " entries it declares"));
  }
  return absl::OkStatus();
}

// Replaces the 32-bit fields that say 0xffffffff by the zip64 extra field's.
absl::Status ReadZip64Extra(absl::string_view extra, Entry* e,
                            uint64_t* local_at) {
  uint64_t* fields[] = {&e->size, &e->compressed, local_at};
  size_t p = 0;
  while (p + 4 <= extra.size()) {
    const uint64_t id = Le(extra, p, 2);
    const uint64_t length = Le(extra, p + 2, 2);
    if (length > extra.size() - p - 4) break;
    if (id == 0x0001) {
      size_t q = p + 4;
      for (uint64_t* f : fields) {
        if (*f != 0xffffffffu) continue;
        if (q + 8 > p + 4 + length) {
          return Refuse(absl::StrCat("zip entry '", e->name,
                                     "' has a short zip64 field"));
        }
        *f = Le(extra, q, 8);
        q += 8;
      }
    }
    p += 4 + length;
  }
  return absl::OkStatus();
}

// Inflates a deflated entry into a fixed buffer to learn its true size and
// CRC-32 (a source entry's text is kept in e->source).
absl::Status Inflate(absl::string_view data, Entry* e) {
  const bool keep = IsSource(e->name);
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
    return absl::InternalError("zlib inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::vector<unsigned char> out(1 << 16);
  uint64_t produced = 0;
  uLong crc = crc32(0L, Z_NULL, 0);
  int rc = Z_OK;
  while (rc == Z_OK && produced <= e->size) {
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&z, Z_NO_FLUSH);
    const uInt n = static_cast<uInt>(out.size() - z.avail_out);
    produced += n;
    crc = crc32(crc, out.data(), n);
    if (keep && produced <= kMaxSourceBytes)
      e->source.append(reinterpret_cast<const char*>(out.data()), n);
    if (rc == Z_BUF_ERROR && z.avail_out != 0) break;  // input ran out
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != e->size) {
    return Refuse(absl::StrCat(
        "zip entry '", e->name, "' declares ", e->size,
        " bytes but inflates to ",
        rc == Z_STREAM_END ? absl::StrCat(produced)
                           : absl::StrCat("a damaged stream after ", produced),
        rc == Z_STREAM_END ? "" : " bytes"));
  }
  return CheckCrc(*e, static_cast<uint32_t>(crc));
}

absl::Status ReadEntry(absl::string_view b, const Directory& d, uint64_t* p,
                       Entry* e) {
  const uint64_t end = d.at + d.size;
  if (end - *p < kCentralSize || Le(b, *p, 4) != kCentralSignature) {
    return Refuse(
        absl::StrCat("zip central directory entry at ", *p, " is damaged"));
  }
  e->method = static_cast<int>(Le(b, *p + 10, 2));
  e->crc = static_cast<uint32_t>(Le(b, *p + 16, 4));
  e->compressed = Le(b, *p + 20, 4);
  e->size = Le(b, *p + 24, 4);
  const uint64_t name_length = Le(b, *p + 28, 2);
  const uint64_t extra_length = Le(b, *p + 30, 2);
  const uint64_t comment_length = Le(b, *p + 32, 2);
  uint64_t local_at = Le(b, *p + 42, 4);
  if (end - *p - kCentralSize < name_length + extra_length + comment_length) {
    return Refuse(absl::StrCat("zip central directory entry at ", *p,
                               " runs past the directory"));
  }
  e->name = std::string(b.substr(*p + kCentralSize, name_length));
  if (absl::Status s = ReadZip64Extra(
          b.substr(*p + kCentralSize + name_length, extra_length), e,
          &local_at);
      !s.ok()) {
    return s;
  }
  *p += kCentralSize + name_length + extra_length + comment_length;

  if (local_at > b.size() || b.size() - local_at < kLocalSize ||
      Le(b, local_at, 4) != kLocalSignature) {
    return Refuse(absl::StrCat("zip entry '", e->name, "': local header at ",
                               local_at, " is not inside the archive of ",
                               b.size(), " bytes"));
  }
  e->data_at =
      local_at + kLocalSize + Le(b, local_at + 26, 2) + Le(b, local_at + 28, 2);
  if (e->data_at > b.size() || e->compressed > b.size() - e->data_at) {
    return Refuse(absl::StrCat("zip entry '", e->name, "' declares ",
                               e->compressed, " bytes at ", e->data_at,
                               ", past the archive's ", b.size()));
  }
  if (IsSource(e->name) && e->size > kMaxSourceBytes) {
    return Refuse(absl::StrCat("zip entry '", e->name, "' declares ", e->size,
                               " bytes of TorchScript source, past ",
                               kMaxSourceBytes));
  }
  if (e->method == 0) {
    if (e->size != e->compressed) {
      return Refuse(absl::StrCat("zip entry '", e->name, "' is stored (",
                                 e->compressed, " bytes) but declares ",
                                 e->size, " bytes"));
    }
    const absl::string_view data = b.substr(e->data_at, e->size);
    if (IsSource(e->name)) e->source = std::string(data);
    return CheckCrc(
        *e, static_cast<uint32_t>(crc32_z(
                crc32(0L, Z_NULL, 0),
                reinterpret_cast<const Bytef*>(data.data()), data.size())));
  }
  if (e->method == 8) return Inflate(b.substr(e->data_at, e->compressed), e);
  return Refuse(absl::StrCat("zip entry '", e->name, "' uses method ",
                             e->method,
                             "; torch archives are stored or "
                             "deflated"));
}

// ---------------------------------------------------------------------------
// The TorchScript layer. LibTorch compiles the archive's code/ entries as it
// loads it; its writer (torch::serialize::OutputArchive, Module::save) puts
// there only class declarations of this shape:
//
//   class Module(Module):
//     __parameters__ = ["weight", "bias", ]
//     __buffers__ = []
//     __annotations__ = []
//     __annotations__["param/w_q"] = Tensor
//     step : int
//     model : __torch__.___torch_mangle_0.Module
//
// Anything else (another statement, a constant, an expression) is refused
// before LibTorch's compiler sees it: that compiler crashes on some
// malformed declarations (a SEGV in ScriptTypeParser::parseClassConstant
// on a class constant).

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  }
  return true;
}

// A string literal without quotes or escapes in it: "...".
bool IsPlainString(absl::string_view s) {
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') return false;
  for (char c : s.substr(1, s.size() - 2)) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
      return false;
  }
  return true;
}

// Tensor, int, float, str, bool, a module (__torch__.Module or
// __torch__.___torch_mangle_N.Module), or Tuple/List/Optional/Dict of those,
// nested at most `depth` deep.
bool IsType(absl::string_view t, int depth = 4) {
  for (absl::string_view base : {"Tensor", "int", "float", "str", "bool"}) {
    if (t == base) return true;
  }
  if (t == "__torch__.Module") return true;
  if (absl::ConsumePrefix(&t, "__torch__.___torch_mangle_")) {
    if (!absl::ConsumeSuffix(&t, ".Module") || t.empty()) return false;
    for (char c : t) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
  }
  if (depth == 0) return false;
  for (absl::string_view generic : {"Tuple[", "List[", "Optional[", "Dict["}) {
    absl::string_view inner = t;
    if (!absl::ConsumePrefix(&inner, generic) ||
        !absl::ConsumeSuffix(&inner, "]")) {
      continue;
    }
    // Split at the top level's ", ".
    int open = 0;
    size_t from = 0;
    for (size_t i = 0; i <= inner.size(); ++i) {
      if (i == inner.size() || (open == 0 && inner.substr(i, 2) == ", ")) {
        if (!IsType(inner.substr(from, i - from), depth - 1)) return false;
        from = i + 2;
        ++i;
      } else if (inner[i] == '[') {
        ++open;
      } else if (inner[i] == ']') {
        if (--open < 0) return false;
      }
    }
    return open == 0;
  }
  return false;
}

// `= [` plain strings, each followed by ", " `]`.
bool IsNameList(absl::string_view s) {
  if (!absl::ConsumePrefix(&s, "[") || !absl::ConsumeSuffix(&s, "]"))
    return false;
  while (!s.empty()) {
    const size_t end = s.find("\", ");
    if (end == absl::string_view::npos || !IsPlainString(s.substr(0, end + 1)))
      return false;
    s.remove_prefix(end + 3);
  }
  return true;
}

absl::Status CheckModuleSource(const Entry& e) {
  int line_number = 0;
  bool in_class = false;
  for (absl::string_view line : absl::StrSplit(e.source, '\n')) {
    ++line_number;
    bool ok = false;
    absl::string_view rest = line;
    if (line.empty()) {
      ok = true;
    } else if (line == "class Module(Module):") {
      ok = in_class = true;
    } else if (in_class && absl::ConsumePrefix(&rest, "  ")) {
      absl::string_view value = rest;
      if (absl::ConsumePrefix(&value, "__parameters__ = ") ||
          absl::ConsumePrefix(&value, "__buffers__ = ")) {
        ok = IsNameList(value);
      } else if (rest == "__annotations__ = []") {
        ok = true;
      } else if (absl::ConsumePrefix(&value, "__annotations__[")) {
        const size_t close = value.find("] = ");
        ok = close != absl::string_view::npos &&
             IsPlainString(value.substr(0, close)) &&
             IsType(value.substr(close + 4));
      } else {
        const size_t colon = rest.find(" : ");
        ok = colon != absl::string_view::npos &&
             IsIdentifier(rest.substr(0, colon)) &&
             IsType(rest.substr(colon + 3));
      }
    }
    if (!ok) {
      return Refuse(
          absl::StrCat("TorchScript source '", e.name, "' line ", line_number,
                       " is not a module declaration LibTorch writes: '",
                       TerminalSafe(std::string(line.substr(0, 80))), "'"));
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// The pickle layer: the opcodes LibTorch 1.13's Unpickler reads, walked with
// a stack of what each pushes as far as the checks need it.

struct Value;
using ValuePtr = std::shared_ptr<const Value>;
struct Value {
  enum Kind { kOther, kInt, kString, kGlobal, kTuple } kind = kOther;
  int64_t i = 0;
  std::string s;  // a string, or a global's "module class"
  std::vector<ValuePtr> items;
};

ValuePtr Other() {
  static const ValuePtr other = std::make_shared<Value>();
  return other;
}
ValuePtr Int(int64_t i) {
  auto v = std::make_shared<Value>();
  v->kind = Value::kInt;
  v->i = i;
  return v;
}
ValuePtr Str(Value::Kind kind, std::string s) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  v->s = std::move(s);
  return v;
}

class PickleWalk {
 public:
  PickleWalk(const std::string& name, absl::string_view data,
             const std::map<std::string, Entry>* entries,
             std::string storage_prefix)
      : name_(name),
        data_(data),
        entries_(entries),
        storage_prefix_(std::move(storage_prefix)) {}

  absl::Status Run() {
    while (true) {
      if (at_ >= data_.size()) return Bad("ends without STOP");
      const size_t op_at = at_;
      const uint8_t op = static_cast<uint8_t>(data_[at_++]);
      if (op == '.') return absl::OkStatus();  // STOP
      if (absl::Status s = Step(op, op_at); !s.ok()) return s;
    }
  }

 private:
  absl::Status Bad(const std::string& what) const {
    return Refuse(absl::StrCat("pickle '", name_, "' ", what));
  }
  absl::Status Need(size_t n) const {
    if (data_.size() - at_ < n) {
      return Bad(absl::StrCat("declares ", n, " bytes at ", at_, " with ",
                              data_.size() - at_, " left"));
    }
    return absl::OkStatus();
  }
  absl::Status Fixed(int width, uint64_t* v) {
    if (absl::Status s = Need(width); !s.ok()) return s;
    *v = Le(data_, at_, width);
    at_ += width;
    return absl::OkStatus();
  }
  absl::Status Line(std::string* out) {
    const size_t nl = data_.find('\n', at_);
    if (nl == absl::string_view::npos) return Bad("has an unended GLOBAL");
    *out = std::string(data_.substr(at_, nl - at_));
    at_ = nl + 1;
    return absl::OkStatus();
  }
  absl::Status Pop(size_t n, size_t op_at) {
    if (stack_.size() < n) {
      return Bad(absl::StrCat("pops ", n, " at ", op_at, " from a stack of ",
                              stack_.size()));
    }
    stack_.resize(stack_.size() - n);
    return absl::OkStatus();
  }
  // The values above the last MARK, which is removed.
  absl::Status ToMark(size_t op_at, std::vector<ValuePtr>* items) {
    if (marks_.empty() || marks_.back() > stack_.size())
      return Bad(absl::StrCat("has no MARK for the opcode at ", op_at));
    const size_t start = marks_.back();
    marks_.pop_back();
    if (items) items->assign(stack_.begin() + start, stack_.end());
    stack_.resize(start);
    return absl::OkStatus();
  }
  absl::Status Memo(uint64_t id, size_t op_at) {
    if (stack_.empty()) return Bad(absl::StrCat("memoizes nothing at ", op_at));
    if (id > memo_.size()) {
      return Bad(absl::StrCat("sets memo ", id, " at ", op_at, " with ",
                              memo_.size(), " set"));
    }
    if (id == memo_.size()) {
      memo_.push_back(stack_.back());
    } else {
      memo_[id] = stack_.back();
    }
    return absl::OkStatus();
  }
  absl::Status Get(uint64_t id, size_t op_at) {
    if (id >= memo_.size()) {
      return Bad(absl::StrCat("reads memo ", id, " at ", op_at, " with ",
                              memo_.size(), " set"));
    }
    stack_.push_back(memo_[id]);
    return absl::OkStatus();
  }

  absl::Status Storage(size_t op_at);
  absl::Status Step(uint8_t op, size_t op_at);
  // Step's opcodes that push a scalar read from the bytes after them
  // (integers, floats, strings, globals), and those that build a tuple.
  absl::Status PushScalar(uint8_t op, size_t op_at);
  absl::Status PushTuple(uint8_t op, size_t op_at);

  const std::string& name_;
  absl::string_view data_;
  const std::map<std::string, Entry>* entries_;
  const std::string storage_prefix_;  // empty: no storages here
  size_t at_ = 0;
  std::vector<ValuePtr> stack_;
  std::vector<size_t> marks_;
  std::vector<ValuePtr> memo_;
};

// BINPERSID's argument: ("storage", type, key, device, numel), where type is
// the torch.<Type>Storage global or a ScalarType number.
absl::Status PickleWalk::Storage(size_t op_at) {
  const std::string shape =
      absl::StrCat("has a storage reference at ", op_at,
                   " that is not (\"storage\", type, key, device, count)");
  if (stack_.empty() || stack_.back()->kind != Value::kTuple) return Bad(shape);
  const ValuePtr t = stack_.back();
  stack_.pop_back();
  const std::vector<ValuePtr>& a = t->items;
  if (a.size() != 5 || a[0]->kind != Value::kString || a[0]->s != "storage" ||
      a[2]->kind != Value::kString || a[4]->kind != Value::kInt) {
    return Bad(shape);
  }
  if (storage_prefix_.empty())
    return Bad(absl::StrCat("holds a storage reference at ", op_at));
  int64_t item_size = 0;
  if (a[1]->kind == Value::kInt && a[1]->i >= 0 &&
      a[1]->i < static_cast<int64_t>(c10::ScalarType::NumOptions)) {
    item_size = static_cast<int64_t>(
        c10::elementSize(static_cast<c10::ScalarType>(a[1]->i)));
  } else if (a[1]->kind == Value::kGlobal) {
    for (int k = 0; k < static_cast<int>(c10::ScalarType::NumOptions); ++k) {
      const auto type = static_cast<c10::ScalarType>(k);
      if (a[1]->s == absl::StrCat("torch ", c10::toString(type), "Storage"))
        item_size = static_cast<int64_t>(c10::elementSize(type));
    }
  }
  if (item_size <= 0) return Bad(shape);
  const int64_t count = a[4]->i;
  const std::string key = storage_prefix_ + a[2]->s;
  auto found = entries_->find(key);
  const uint64_t have = found == entries_->end() ? 0 : found->second.size;
  if (count < 0 ||
      (count > 0 && (found == entries_->end() ||
                     static_cast<uint64_t>(count) >
                         have / static_cast<uint64_t>(item_size)))) {
    return Bad(absl::StrCat("declares ", count, " elements of ", item_size,
                            " bytes in '", key, "', which ",
                            found == entries_->end()
                                ? "is not in the archive"
                                : absl::StrCat("holds ", have, " bytes")));
  }
  stack_.push_back(Other());  // the tensor
  return absl::OkStatus();
}

absl::Status PickleWalk::PushScalar(uint8_t op, size_t op_at) {
  uint64_t v = 0;
  absl::Status s;
  switch (op) {
    case 'K':    // BININT1
    case 'M':    // BININT2
    case 'J': {  // BININT
      const int width = op == 'K' ? 1 : op == 'M' ? 2 : 4;
      if (s = Fixed(width, &v); !s.ok()) return s;
      stack_.push_back(
          Int(width == 4 ? static_cast<int32_t>(v) : static_cast<int64_t>(v)));
      return absl::OkStatus();
    }
    case 0x8a:  // LONG1: LibTorch reads only 8-byte ones
      if (s = Fixed(1, &v); !s.ok()) return s;
      if (v != 8)
        return Bad(absl::StrCat("has a LONG1 of ", v, " bytes at ", op_at));
      if (s = Fixed(8, &v); !s.ok()) return s;
      stack_.push_back(Int(static_cast<int64_t>(v)));
      return absl::OkStatus();
    case 'G':  // BINFLOAT
      if (s = Fixed(8, &v); !s.ok()) return s;
      stack_.push_back(Other());
      return absl::OkStatus();
    case 'X':  // BINUNICODE
      if (s = Fixed(4, &v); !s.ok()) return s;
      if (s = Need(v); !s.ok()) return s;
      stack_.push_back(Str(Value::kString, std::string(data_.substr(at_, v))));
      at_ += v;
      return absl::OkStatus();
    default: {  // 'c', GLOBAL
      std::string module, name;
      if (s = Line(&module); !s.ok()) return s;
      if (s = Line(&name); !s.ok()) return s;
      stack_.push_back(Str(Value::kGlobal, module + " " + name));
      return absl::OkStatus();
    }
  }
}

absl::Status PickleWalk::PushTuple(uint8_t op, size_t op_at) {
  auto tuple = std::make_shared<Value>();
  tuple->kind = Value::kTuple;
  if (op == 't') {  // TUPLE: the values above the MARK
    if (absl::Status s = ToMark(op_at, &tuple->items); !s.ok()) return s;
  } else {  // TUPLE1, TUPLE2, TUPLE3
    const size_t n = op - 0x84;
    if (stack_.size() < n) return Pop(n, op_at);
    tuple->items.assign(stack_.end() - n, stack_.end());
    stack_.resize(stack_.size() - n);
  }
  stack_.push_back(std::move(tuple));
  return absl::OkStatus();
}

absl::Status PickleWalk::Step(uint8_t op, size_t op_at) {
  uint64_t v = 0;
  absl::Status s;
  switch (op) {
    case 0x80:  // PROTO
      return Fixed(1, &v);
    case '(':  // MARK
      marks_.push_back(stack_.size());
      return absl::OkStatus();
    case ']':   // EMPTY_LIST
    case ')':   // EMPTY_TUPLE
    case '}':   // EMPTY_DICT
    case 'N':   // NONE
    case 0x88:  // NEWTRUE
    case 0x89:  // NEWFALSE
      stack_.push_back(Other());
      return absl::OkStatus();
    case 'K':
    case 'M':
    case 'J':
    case 0x8a:
    case 'G':
    case 'X':
    case 'c':
      return PushScalar(op, op_at);
    case 't':
    case 0x85:
    case 0x86:
    case 0x87:
      return PushTuple(op, op_at);
    case 'l':  // LIST
    case 'd':  // DICT
      if (s = ToMark(op_at, nullptr); !s.ok()) return s;
      stack_.push_back(Other());
      return absl::OkStatus();
    case 'e':  // APPENDS
    case 'u':  // SETITEMS: both add to the container below the MARK
      if (marks_.empty() || marks_.back() == 0)
        return Bad(absl::StrCat("has no container for the opcode at ", op_at));
      return ToMark(op_at, nullptr);
    case 's':  // SETITEM
      if (stack_.size() < 3) return Pop(3, op_at);
      return Pop(2, op_at);
    case 'q':  // BINPUT
    case 'r':  // LONG_BINPUT
      if (s = Fixed(op == 'q' ? 1 : 4, &v); !s.ok()) return s;
      return Memo(v, op_at);
    case 'h':  // BINGET
    case 'j':  // LONG_BINGET
      if (s = Fixed(op == 'h' ? 1 : 4, &v); !s.ok()) return s;
      return Get(v, op_at);
    case 0x81:  // NEWOBJ
      return Pop(1, op_at);
    case 'b':  // BUILD
    case 'R':  // REDUCE
      if (s = Pop(2, op_at); !s.ok()) return s;
      stack_.push_back(Other());
      return absl::OkStatus();
    case 'Q':  // BINPERSID
      return Storage(op_at);
    default:
      return Bad(absl::StrCat("has opcode ", static_cast<int>(op), " at ",
                              op_at, ", which LibTorch does not read"));
  }
}

}  // namespace

absl::Status CheckCheckpointBounds(absl::string_view bytes) {
  Directory d;
  if (absl::Status s = FindDirectory(bytes, &d); !s.ok()) return s;
  std::map<std::string, Entry> entries;
  uint64_t p = d.at;
  for (uint64_t i = 0; i < d.entries; ++i) {
    Entry e;
    if (absl::Status s = ReadEntry(bytes, d, &p, &e); !s.ok()) return s;
    const std::string name = e.name;
    if (!entries.emplace(name, std::move(e)).second)
      return Refuse(absl::StrCat("zip names '", name, "' twice"));
  }
  for (const auto& [name, e] : entries) {
    if (IsSource(name)) {
      if (absl::Status s = CheckModuleSource(e); !s.ok()) return s;
      continue;
    }
    std::string storage_prefix;
    if (absl::EndsWith(name, ".pkl")) {
      storage_prefix = name.substr(0, name.size() - 4) + "/";
    } else if (!absl::EndsWith(name, ".debug_pkl")) {
      continue;
    }
    // Pickles are stored (LibTorch writes them so); a deflated one would
    // need inflating here, and none is.
    if (e.method != 0)
      return Refuse(absl::StrCat("pickle '", name, "' is compressed"));
    PickleWalk walk(name, bytes.substr(e.data_at, e.size), &entries,
                    storage_prefix);
    if (absl::Status s = walk.Run(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace qkov::training
