// A pickle reader for data-only pickles (protocols 0-5) that never executes code.
//
// It implements Python's pickle virtual machine for the opcodes that build plain values
// (the set PyTorch's MemoryViz.js unpickler handles and more: text and binary ints, longs,
// floats, strings, bytes, lists, tuples, dicts, sets, frozensets, memo, frames). Opcodes that
// would import or call anything (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
// NEWOBJ_EX, PERSID, BINPERSID, EXT1/2/4) and out-of-band buffers are rejected with the byte
// offset and the opcode name, as is any byte that is not an opcode.
//
// Hostile input: every length is checked against the bytes that remain before anything is
// allocated, memo indices are bounded by the input size, the machine is iterative (no
// recursion), a memo GET pushes a reference to the stored value (never a copy, so memory
// stays linear in the input however often one entry is named), and the limits below bound
// the work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "snapshot/pickle_value.h"

namespace sextant {

struct PickleLimits {
  int64_t max_input_bytes = int64_t{1} << 34;  // 16 GiB
  // Values pushed in total, memo references included. Below 2^32 so arena indices fit.
  int64_t max_values = int64_t{1} << 31;
  // Bytes held by the document and the reader: string bytes, container items, the memo table
  // and dict indexes. A real snapshot needs a few times its file size.
  int64_t max_bytes = int64_t{1} << 36;  // 64 GiB
};

// Parses `data` into a document. `source_name` names the input in error messages.
// Throws UserError("<source> at byte N: '<OPCODE>': reason") on anything it refuses,
// including a limit reached (N is the offset of the opcode that crossed it).
PickleDocument ReadPickle(std::string_view data, const std::string& source_name,
                          const PickleLimits& limits = {});

// Name of opcode byte `op` as in Python's pickletools ("BINGET"), or "" when it is none.
const char* PickleOpcodeName(uint8_t op);

}  // namespace sextant
