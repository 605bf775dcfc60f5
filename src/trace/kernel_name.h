// How a kernel's name is shown to a person on a console, where every character counts.
#pragma once

#include <string>
#include <string_view>

#include "report/table.h"

namespace sextant {

// A demangled kernel name without the parts that rarely tell two kernels apart: the "void "
// return type and the trailing parameter list "(float*, int, ...)" that follows the name and
// its template arguments. Names that are not C++ signatures ("Memcpy HtoD (Pageable ->
// Device)", Triton's "triton_poi_fused_add_0") come back unchanged. Machine outputs keep the
// full name.
std::string_view ShortKernelName(std::string_view name);

// A table's text cell as a person reads it, on the console and on an HTML page (whose cell keeps
// the full name on hover): the names of a column headed "kernel" by ShortKernelName, any other
// text as it is.
std::string PersonCellText(const Column& column, const std::string& text);

// The function a demangled C++ signature names, qualified and with its template arguments:
// without the return type, whatever it is ("void ", "int ", "__global__ void "), and without
// the parameter list. "void (anonymous namespace)::f<float, 16>(float*, int)" ->
// "(anonymous namespace)::f<float, 16>". A name that is not a signature (no parameter list
// after an identifier or template) comes back unchanged but for a leading "void ".
std::string_view KernelFunctionName(std::string_view name);

}  // namespace sextant
