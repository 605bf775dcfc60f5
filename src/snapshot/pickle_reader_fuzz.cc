// libFuzzer target: the pickle reader must turn any byte string into a document or a
// UserError, never crash, hang or exhaust memory. It runs with the default limits: the reader's
// own bounds (memory linear in the input, memo references shared) must protect it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "snapshot/pickle_reader.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    sextant::PickleDocument doc =
        sextant::ReadPickle(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)doc.Repr(doc.root, 16);  // bounded even for cyclic documents
  } catch (const sextant::UserError&) {
  }
  return 0;
}
