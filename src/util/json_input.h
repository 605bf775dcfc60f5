// JSON that users hand over (calibration files, GEMM timings, pipeline dumps), parsed so that
// anything malformed — bad syntax, numbers beyond a double, nesting far deeper than the format
// has — is one UserError naming the file and the byte offset, never an escaped exception.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sextant {

// `max_nesting`: the deepest the format nests, with room to spare; deeper input is refused
// before the parser builds the tree. `what` names the format in that message ("a pipeline
// dump").
nlohmann::json ParseUntrustedJson(std::string_view text, const std::string& file, int max_nesting,
                                  std::string_view what);

// Offset of the first byte of `text` that does not start or continue a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, surrogates or code points above U+10FFFF), or npos.
// JSON must be UTF-8; parsers that validate the whole text up front (simdjson) say only that
// it is not, and this names where.
size_t FirstInvalidUtf8(std::string_view text);

// A key of object `j` not in `known` is a UserError naming `file` and `where` + key: in a file
// this program reads back, a misspelt key's value would otherwise be ignored.
void RefuseUnknownJsonKeys(const nlohmann::json& j, std::initializer_list<std::string_view> known,
                           const std::string& file, const std::string& where);

// `j[name]`, or a UserError naming `file` and `where` + name as missing.
const nlohmann::json& RequiredJsonMember(const nlohmann::json& j, const char* name,
                                         const std::string& file, const std::string& where);

}  // namespace sextant
