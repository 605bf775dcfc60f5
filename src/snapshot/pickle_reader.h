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
// recursion), and the limits below bound the work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "snapshot/pickle_value.h"

namespace sextant {

struct PickleLimits {
  int64_t max_input_bytes = int64_t{1} << 34;  // 16 GiB
  int64_t max_values = int64_t{1} << 31;       // values pushed in total
};

// Parses `data` into a document. `source_name` names the input in error messages.
// Throws UserError("<source> at byte N: '<OPCODE>': reason") on anything it refuses.
PickleDocument ReadPickle(std::string_view data, const std::string& source_name,
                          const PickleLimits& limits = {});

// Name of opcode byte `op` as in Python's pickletools ("BINGET"), or "" when it is none.
const char* PickleOpcodeName(uint8_t op);

}  // namespace sextant
