#include "snapshot/pickle_reader.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "util/error.h"

namespace sextant {
namespace {

// Opcode bytes, named as in Python's Lib/pickletools.py.
enum Op : uint8_t {
  MARK = '(',
  STOP = '.',
  POP = '0',
  POP_MARK = '1',
  DUP = '2',
  FLOAT = 'F',
  INT = 'I',
  BININT = 'J',
  BININT1 = 'K',
  LONG = 'L',
  BININT2 = 'M',
  NONE = 'N',
  PERSID = 'P',
  BINPERSID = 'Q',
  REDUCE = 'R',
  STRING = 'S',
  BINSTRING = 'T',
  SHORT_BINSTRING = 'U',
  UNICODE = 'V',
  BINUNICODE = 'X',
  APPEND = 'a',
  BUILD = 'b',
  GLOBAL = 'c',
  DICT = 'd',
  EMPTY_DICT = '}',
  APPENDS = 'e',
  GET = 'g',
  BINGET = 'h',
  INST = 'i',
  LONG_BINGET = 'j',
  LIST = 'l',
  EMPTY_LIST = ']',
  OBJ = 'o',
  PUT = 'p',
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  SETITEM = 's',
  TUPLE = 't',
  EMPTY_TUPLE = ')',
  SETITEMS = 'u',
  BINFLOAT = 'G',
  PROTO = 0x80,
  NEWOBJ = 0x81,
  EXT1 = 0x82,
  EXT2 = 0x83,
  EXT4 = 0x84,
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
  LONG4 = 0x8b,
  BINBYTES = 'B',
  SHORT_BINBYTES = 'C',
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  BINBYTES8 = 0x8e,
  EMPTY_SET = 0x8f,
  ADDITEMS = 0x90,
  FROZENSET = 0x91,
  NEWOBJ_EX = 0x92,
  STACK_GLOBAL = 0x93,
  MEMOIZE = 0x94,
  FRAME = 0x95,
  BYTEARRAY8 = 0x96,
  NEXT_BUFFER = 0x97,
  READONLY_BUFFER = 0x98,
};

// CPython refuses to convert decimal strings longer than this
// (sys.int_info.default_max_str_digits); the same bound keeps hostile text integers from costing
// quadratic time here.
constexpr size_t kMaxDecimalDigits = 4300;
constexpr int kHighestProtocol = 5;

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Machine {
 public:
  Machine(std::string_view data, const std::string& source, const PickleLimits& limits)
      : data_(data), source_(source), limits_(limits) {}

  PickleDocument Run() {
    if (static_cast<int64_t>(data_.size()) > limits_.max_input_bytes) {
      Fail(0, "",
           fmt::format("input of {} bytes exceeds the limit of {} bytes", data_.size(),
                       limits_.max_input_bytes));
    }
    while (true) {
      if (pos_ >= data_.size()) Fail(pos_, "", "truncated pickle: no STOP opcode before the end");
      op_offset_ = pos_;
      op_ = static_cast<uint8_t>(data_[pos_++]);
      if (Step()) break;
    }
    Charge(doc_.IndexDicts());
    doc_.values = pushed_;
    doc_.bytes = bytes_;
    return std::move(doc_);
  }

 private:
  [[noreturn]] void Fail(size_t offset, std::string_view key, std::string_view reason) const {
    ThrowUserError(SourceLocation{source_, -1, -1, static_cast<int64_t>(offset)}, key, reason);
  }
  [[noreturn]] void Fail(std::string_view reason) const {
    Fail(op_offset_, PickleOpcodeName(op_), reason);
  }

  // --- raw input ---
  std::string_view Take(uint64_t n) {
    if (n > data_.size() - pos_) {
      Fail(fmt::format("truncated: needs {} bytes, {} remain", n, data_.size() - pos_));
    }
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  uint64_t ReadUnsigned(int bytes) {
    std::string_view b = Take(bytes);
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[i]);
    return v;
  }
  std::string_view ReadLine() {
    size_t end = data_.find('\n', pos_);
    if (end == std::string_view::npos) Fail("truncated: text argument has no newline");
    std::string_view line = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return line;
  }

  // --- budget ---
  void Charge(int64_t bytes) {
    bytes_ += bytes;
    if (bytes_ > limits_.max_bytes) {
      Fail(fmt::format("more than {} bytes of values: refusing to continue", limits_.max_bytes));
    }
  }
  static constexpr int64_t kItemBytes = sizeof(PickleValue);

  // --- stack ---
  size_t Base() const { return marks_.empty() ? 0 : marks_.back(); }
  void Push(PickleValue v) {
    if (++pushed_ > limits_.max_values) {
      Fail(fmt::format("more than {} values: refusing to continue", limits_.max_values));
    }
    if (stack_.size() == stack_peak_) {  // the stack's own memory, at its high-water mark
      Charge(kItemBytes);
      ++stack_peak_;
    }
    stack_.push_back(v);
  }
  PickleValue Pop() {
    if (stack_.size() <= Base()) Fail("stack underflow");
    PickleValue v = stack_.back();
    stack_.pop_back();
    return v;
  }
  PickleValue& Top() {
    if (stack_.size() <= Base()) Fail("stack underflow");
    return stack_.back();
  }
  // Removes the values above the most recent MARK and the mark itself; returns the start index.
  size_t PopMark() {
    if (marks_.empty()) Fail("no MARK on the stack");
    size_t start = marks_.back();
    marks_.pop_back();
    return start;
  }

  // Arena entries are charged when made, container items when stored, the stack at its
  // high-water mark.
  PickleValue NewString(std::string s, PickleKind kind = PickleKind::kString) {
    Charge(static_cast<int64_t>(sizeof(std::string) + s.size()));
    doc_.strings.push_back(std::move(s));
    return PickleValue::Ref(kind, static_cast<uint32_t>(doc_.strings.size() - 1));
  }
  PickleValue NewContainer(PickleKind kind, std::vector<PickleValue> items = {}) {
    Charge(static_cast<int64_t>(sizeof(PickleContainer)) +
           kItemBytes * static_cast<int64_t>(items.size()));
    doc_.containers.push_back(PickleContainer{kind, std::move(items), {}});
    return PickleValue::Ref(kind, static_cast<uint32_t>(doc_.containers.size() - 1));
  }
  PickleValue ContainerFromMark(PickleKind kind) {
    size_t start = PopMark();
    std::vector<PickleValue> items(stack_.begin() + start, stack_.end());
    stack_.resize(start);
    return NewContainer(kind, std::move(items));
  }
  std::vector<PickleValue>& MutableTarget(PickleValue target, PickleKind want) {
    if (target.kind != want) {
      Fail(fmt::format("target is a {}, not a {}", PickleKindName(target.kind),
                       PickleKindName(want)));
    }
    return doc_.containers[target.index].items;
  }
  // Moves the values above the most recent MARK into the container just below it.
  void ExtendFromMark(PickleKind want, bool pairs) {
    size_t start = PopMark();
    if (start == 0 || start - 1 < Base()) Fail("stack underflow: nothing below the MARK");
    if (pairs && (stack_.size() - start) % 2 != 0) Fail("odd number of items for a dict");
    PickleValue target = stack_[start - 1];
    auto& items = MutableTarget(target, want);
    Charge(kItemBytes * static_cast<int64_t>(stack_.size() - start));
    items.insert(items.end(), stack_.begin() + start, stack_.end());
    stack_.resize(start);
  }

  // --- memo ---
  void MemoPut(uint64_t index) {
    PickleValue v = Top();
    if (index > data_.size()) {
      Fail(fmt::format("memo index {} is larger than the input could need", index));
    }
    if (index >= memo_.size()) {
      Charge(static_cast<int64_t>((index + 1 - memo_.size()) * (sizeof(PickleValue) + 1)));
      memo_.resize(index + 1);
      memo_set_.resize(index + 1, 0);
    }
    if (!memo_set_[index]) ++memo_count_;
    memo_set_[index] = 1;
    memo_[index] = v;
  }
  void MemoGet(uint64_t index) {
    if (index >= memo_.size() || !memo_set_[index]) {
      Fail(fmt::format("memo key {} was never stored", index));
    }
    Push(memo_[index]);
  }

  // --- text arguments (protocol 0) ---
  uint64_t ParseMemoIndex(std::string_view line) {
    uint64_t v = 0;
    if (line.empty()) Fail("empty memo index");
    for (char c : line) {
      if (c < '0' || c > '9' || v > (uint64_t{1} << 40)) {
        Fail(fmt::format("bad memo index '{}'", line.substr(0, 40)));
      }
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    return v;
  }
  PickleValue ParseDecimal(std::string_view text) {
    std::string_view digits = text;
    bool negative = false;
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || digits.size() > kMaxDecimalDigits) {
      Fail(fmt::format("bad integer '{}'", text.substr(0, 40)));
    }
    // Magnitude as little-endian base-256 digits.
    std::vector<uint8_t> mag{0};
    for (char c : digits) {
      if (c < '0' || c > '9') Fail(fmt::format("bad integer '{}'", text.substr(0, 40)));
      unsigned carry = static_cast<unsigned>(c - '0');
      for (auto& byte : mag) {
        unsigned x = byte * 10u + carry;
        byte = static_cast<uint8_t>(x & 0xFF);
        carry = x >> 8;
      }
      if (carry) mag.push_back(static_cast<uint8_t>(carry));
    }
    mag.push_back(0);  // room for the sign bit
    if (negative) {    // two's complement: invert and add one
      unsigned carry = 1;
      for (auto& byte : mag) {
        unsigned x = static_cast<uint8_t>(~byte) + carry;
        byte = static_cast<uint8_t>(x & 0xFF);
        carry = x >> 8;
      }
    }
    return FromTwosComplement(
        std::string_view(reinterpret_cast<const char*>(mag.data()), mag.size()));
  }
  // Little-endian two's complement, as LONG1/LONG4 carry it.
  PickleValue FromTwosComplement(std::string_view bytes) {
    // Drop redundant sign-extension bytes so that values that fit become plain ints.
    size_t n = bytes.size();
    while (n > 1) {
      uint8_t last = static_cast<uint8_t>(bytes[n - 1]);
      uint8_t prev_sign = static_cast<uint8_t>(bytes[n - 2]) & 0x80;
      if ((last == 0x00 && !prev_sign) || (last == 0xFF && prev_sign)) {
        --n;
      } else {
        break;
      }
    }
    if (n == 0) return PickleValue::Int(0);
    if (n <= 8) {
      uint64_t v = 0;
      for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
      if (n < 8 && (static_cast<uint8_t>(bytes[n - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * n);
      return PickleValue::Int(static_cast<int64_t>(v));
    }
    return NewString(std::string(bytes.substr(0, n)), PickleKind::kBigInt);
  }
  std::string DecodeQuoted(std::string_view line) {
    if (line.size() < 2 || (line.front() != '\'' && line.front() != '"') ||
        line.back() != line.front()) {
      Fail("STRING argument is not a quoted string");
    }
    std::string_view body = line.substr(1, line.size() - 2);
    std::string out;
    out.reserve(body.size());
    for (size_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (++i >= body.size()) Fail("STRING ends with a lone backslash");
      char e = body[i];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'v': out.push_back('\v'); break;
        case '\\':
        case '\'':
        case '"': out.push_back(e); break;
        case '\n': break;
        case 'x': {
          if (i + 2 >= body.size()) Fail("truncated \\x escape");
          int v = 0;
          for (int k = 1; k <= 2; ++k) {
            char h = body[i + k];
            int d = (h >= '0' && h <= '9')   ? h - '0'
                    : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                             : -1;
            if (d < 0) Fail("bad \\x escape");
            v = v * 16 + d;
          }
          out.push_back(static_cast<char>(v));
          i += 2;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int v = 0, k = 0;
            while (k < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7') {
              v = v * 8 + (body[i] - '0');
              ++i;
              ++k;
            }
            --i;
            out.push_back(static_cast<char>(v & 0xFF));
          } else {  // Python keeps unknown escapes verbatim.
            out.push_back('\\');
            out.push_back(e);
          }
      }
    }
    return out;
  }
  // raw-unicode-escape: \uXXXX and \UXXXXXXXX are escapes, every other byte is Latin-1.
  std::string DecodeRawUnicode(std::string_view line) {
    std::string out;
    out.reserve(line.size());
    for (size_t i = 0; i < line.size(); ++i) {
      uint8_t c = static_cast<uint8_t>(line[i]);
      if (c == '\\' && i + 1 < line.size() && (line[i + 1] == 'u' || line[i + 1] == 'U')) {
        int len = line[i + 1] == 'u' ? 4 : 8;
        if (i + 1 + static_cast<size_t>(len) >= line.size()) Fail("truncated \\u escape");
        uint32_t cp = 0;
        for (int k = 0; k < len; ++k) {
          char h = line[i + 2 + k];
          int d = (h >= '0' && h <= '9')   ? h - '0'
                  : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                  : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                           : -1;
          if (d < 0) Fail("bad \\u escape");
          cp = cp * 16 + static_cast<uint32_t>(d);
        }
        if (cp > 0x10FFFF) Fail("\\U escape beyond U+10FFFF");
        AppendUtf8(out, cp);
        i += 1 + len;
      } else {
        AppendUtf8(out, c);
      }
    }
    return out;
  }

  [[noreturn]] void Refuse() {
    Fail(
        "refused: this opcode imports or calls Python code (or needs out-of-band data); "
        "only plain data pickles are read");
  }

  // Executes one opcode; returns true at STOP.
  bool Step() {
    switch (op_) {
      case MARK: marks_.push_back(stack_.size()); break;
      case STOP:
        if (stack_.size() <= Base()) Fail("STOP with an empty stack");
        doc_.root = stack_.back();
        return true;
      case POP:
        if (stack_.size() > Base()) {
          stack_.pop_back();
        } else {
          PopMark();
        }
        break;
      case POP_MARK: stack_.resize(PopMark()); break;
      case DUP: Push(Top()); break;
      case PROTO: {
        uint64_t proto = ReadUnsigned(1);
        if (proto > kHighestProtocol) Fail(fmt::format("unsupported protocol {}", proto));
        break;
      }
      case FRAME: {
        uint64_t n = ReadUnsigned(8);
        if (n > data_.size() - pos_)
          Fail(fmt::format("file cut short: a frame of {} bytes runs past its end", n));
        break;
      }
      // --- scalars ---
      case NONE: Push(PickleValue::None()); break;
      case NEWTRUE: Push(PickleValue::Bool(true)); break;
      case NEWFALSE: Push(PickleValue::Bool(false)); break;
      case BININT: Push(PickleValue::Int(static_cast<int32_t>(ReadUnsigned(4)))); break;
      case BININT1: Push(PickleValue::Int(static_cast<int64_t>(ReadUnsigned(1)))); break;
      case BININT2: Push(PickleValue::Int(static_cast<int64_t>(ReadUnsigned(2)))); break;
      case LONG1: Push(FromTwosComplement(Take(ReadUnsigned(1)))); break;
      case LONG4: {
        int32_t n = static_cast<int32_t>(ReadUnsigned(4));
        if (n < 0) Fail("negative length");
        Push(FromTwosComplement(Take(static_cast<uint64_t>(n))));
        break;
      }
      case INT: {
        std::string_view line = ReadLine();
        if (line == "00") {
          Push(PickleValue::Bool(false));
        } else if (line == "01") {
          Push(PickleValue::Bool(true));
        } else {
          Push(ParseDecimal(line));
        }
        break;
      }
      case LONG: {
        std::string_view line = ReadLine();
        if (!line.empty() && line.back() == 'L') line.remove_suffix(1);
        Push(ParseDecimal(line));
        break;
      }
      case FLOAT: {
        std::string text(ReadLine());
        char* end = nullptr;
        double d = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) {
          Fail(fmt::format("bad float '{}'", text.substr(0, 40)));
        }
        Push(PickleValue::Float(d));
        break;
      }
      case BINFLOAT: {
        uint64_t bits = 0;
        for (char c : Take(8)) bits = (bits << 8) | static_cast<uint8_t>(c);  // big-endian
        Push(PickleValue::Float(std::bit_cast<double>(bits)));
        break;
      }
      // --- text and bytes ---
      case STRING: Push(NewString(DecodeQuoted(ReadLine()))); break;
      case BINSTRING: {
        int32_t n = static_cast<int32_t>(ReadUnsigned(4));
        if (n < 0) Fail("negative length");
        Push(NewString(std::string(Take(static_cast<uint64_t>(n)))));
        break;
      }
      case SHORT_BINSTRING: Push(NewString(std::string(Take(ReadUnsigned(1))))); break;
      case UNICODE: Push(NewString(DecodeRawUnicode(ReadLine()))); break;
      case SHORT_BINUNICODE: Push(NewString(std::string(Take(ReadUnsigned(1))))); break;
      case BINUNICODE: Push(NewString(std::string(Take(ReadUnsigned(4))))); break;
      case BINUNICODE8: Push(NewString(std::string(Take(ReadUnsigned(8))))); break;
      case SHORT_BINBYTES:
        Push(NewString(std::string(Take(ReadUnsigned(1))), PickleKind::kBytes));
        break;
      case BINBYTES: Push(NewString(std::string(Take(ReadUnsigned(4))), PickleKind::kBytes)); break;
      case BINBYTES8:
      case BYTEARRAY8:
        Push(NewString(std::string(Take(ReadUnsigned(8))), PickleKind::kBytes));
        break;
      // --- containers ---
      case EMPTY_LIST: Push(NewContainer(PickleKind::kList)); break;
      case EMPTY_TUPLE: Push(NewContainer(PickleKind::kTuple)); break;
      case EMPTY_DICT: Push(NewContainer(PickleKind::kDict)); break;
      case EMPTY_SET: Push(NewContainer(PickleKind::kSet)); break;
      case LIST: Push(ContainerFromMark(PickleKind::kList)); break;
      case TUPLE: Push(ContainerFromMark(PickleKind::kTuple)); break;
      case FROZENSET: Push(ContainerFromMark(PickleKind::kFrozenSet)); break;
      case DICT: {
        if (!marks_.empty() && (stack_.size() - marks_.back()) % 2 != 0) {
          Fail("odd number of items for a dict");
        }
        Push(ContainerFromMark(PickleKind::kDict));
        break;
      }
      case TUPLE1:
      case TUPLE2:
      case TUPLE3: {
        size_t n = static_cast<size_t>(op_ - TUPLE1 + 1);
        if (stack_.size() < Base() + n) Fail("stack underflow");
        std::vector<PickleValue> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        Push(NewContainer(PickleKind::kTuple, std::move(items)));
        break;
      }
      case APPEND: {
        PickleValue v = Pop();
        auto& items = MutableTarget(Top(), PickleKind::kList);
        Charge(kItemBytes);
        items.push_back(v);
        break;
      }
      case APPENDS: ExtendFromMark(PickleKind::kList, false); break;
      case SETITEM: {
        PickleValue value = Pop();
        PickleValue key = Pop();
        auto& items = MutableTarget(Top(), PickleKind::kDict);
        Charge(2 * kItemBytes);
        items.push_back(key);
        items.push_back(value);
        break;
      }
      case SETITEMS: ExtendFromMark(PickleKind::kDict, true); break;
      case ADDITEMS: ExtendFromMark(PickleKind::kSet, false); break;
      // --- memo ---
      case MEMOIZE: MemoPut(memo_count_); break;
      case PUT: MemoPut(ParseMemoIndex(ReadLine())); break;
      case BINPUT: MemoPut(ReadUnsigned(1)); break;
      case LONG_BINPUT: MemoPut(ReadUnsigned(4)); break;
      case GET: MemoGet(ParseMemoIndex(ReadLine())); break;
      case BINGET: MemoGet(ReadUnsigned(1)); break;
      case LONG_BINGET: MemoGet(ReadUnsigned(4)); break;
      // --- everything that would run code ---
      case GLOBAL:
      case STACK_GLOBAL:
      case REDUCE:
      case BUILD:
      case INST:
      case OBJ:
      case NEWOBJ:
      case NEWOBJ_EX:
      case PERSID:
      case BINPERSID:
      case EXT1:
      case EXT2:
      case EXT4:
      case NEXT_BUFFER:
      case READONLY_BUFFER: Refuse();
      default: Fail(op_offset_, "", fmt::format("unknown opcode 0x{:02x}", op_));
    }
    return false;
  }

  std::string_view data_;
  const std::string& source_;
  PickleLimits limits_;
  size_t pos_ = 0;
  size_t op_offset_ = 0;
  uint8_t op_ = 0;
  int64_t pushed_ = 0;
  int64_t bytes_ = 0;
  size_t stack_peak_ = 0;
  std::vector<PickleValue> stack_;
  std::vector<size_t> marks_;
  std::vector<PickleValue> memo_;
  std::vector<uint8_t> memo_set_;
  uint64_t memo_count_ = 0;
  PickleDocument doc_;
};

}  // namespace

PickleDocument ReadPickle(std::string_view data, const std::string& source_name,
                          const PickleLimits& limits) {
  return Machine(data, source_name, limits).Run();
}

const char* PickleOpcodeName(uint8_t op) {
  switch (op) {
    case MARK: return "MARK";
    case STOP: return "STOP";
    case POP: return "POP";
    case POP_MARK: return "POP_MARK";
    case DUP: return "DUP";
    case FLOAT: return "FLOAT";
    case INT: return "INT";
    case BININT: return "BININT";
    case BININT1: return "BININT1";
    case LONG: return "LONG";
    case BININT2: return "BININT2";
    case NONE: return "NONE";
    case PERSID: return "PERSID";
    case BINPERSID: return "BINPERSID";
    case REDUCE: return "REDUCE";
    case STRING: return "STRING";
    case BINSTRING: return "BINSTRING";
    case SHORT_BINSTRING: return "SHORT_BINSTRING";
    case UNICODE: return "UNICODE";
    case BINUNICODE: return "BINUNICODE";
    case APPEND: return "APPEND";
    case BUILD: return "BUILD";
    case GLOBAL: return "GLOBAL";
    case DICT: return "DICT";
    case EMPTY_DICT: return "EMPTY_DICT";
    case APPENDS: return "APPENDS";
    case GET: return "GET";
    case BINGET: return "BINGET";
    case INST: return "INST";
    case LONG_BINGET: return "LONG_BINGET";
    case LIST: return "LIST";
    case EMPTY_LIST: return "EMPTY_LIST";
    case OBJ: return "OBJ";
    case PUT: return "PUT";
    case BINPUT: return "BINPUT";
    case LONG_BINPUT: return "LONG_BINPUT";
    case SETITEM: return "SETITEM";
    case TUPLE: return "TUPLE";
    case EMPTY_TUPLE: return "EMPTY_TUPLE";
    case SETITEMS: return "SETITEMS";
    case BINFLOAT: return "BINFLOAT";
    case PROTO: return "PROTO";
    case NEWOBJ: return "NEWOBJ";
    case EXT1: return "EXT1";
    case EXT2: return "EXT2";
    case EXT4: return "EXT4";
    case TUPLE1: return "TUPLE1";
    case TUPLE2: return "TUPLE2";
    case TUPLE3: return "TUPLE3";
    case NEWTRUE: return "NEWTRUE";
    case NEWFALSE: return "NEWFALSE";
    case LONG1: return "LONG1";
    case LONG4: return "LONG4";
    case BINBYTES: return "BINBYTES";
    case SHORT_BINBYTES: return "SHORT_BINBYTES";
    case SHORT_BINUNICODE: return "SHORT_BINUNICODE";
    case BINUNICODE8: return "BINUNICODE8";
    case BINBYTES8: return "BINBYTES8";
    case EMPTY_SET: return "EMPTY_SET";
    case ADDITEMS: return "ADDITEMS";
    case FROZENSET: return "FROZENSET";
    case NEWOBJ_EX: return "NEWOBJ_EX";
    case STACK_GLOBAL: return "STACK_GLOBAL";
    case MEMOIZE: return "MEMOIZE";
    case FRAME: return "FRAME";
    case BYTEARRAY8: return "BYTEARRAY8";
    case NEXT_BUFFER: return "NEXT_BUFFER";
    case READONLY_BUFFER: return "READONLY_BUFFER";
    default: return "";
  }
}

}  // namespace sextant
