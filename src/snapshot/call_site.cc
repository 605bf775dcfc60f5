#include "snapshot/call_site.h"

#include <string_view>

#include <fmt/format.h>

namespace sextant {
namespace {

// Substrings MemoryViz.js (frameFilter) uses to hide frames, by function name and file name.
constexpr std::string_view kHiddenNames[] = {
    "unwind::unwind",    "CapturedTraceback::gather",
    "gather_with_cpp",   "_start",
    "__libc_start_main", "PyEval_",
    "PyObject_",         "PyFunction_",
};
constexpr std::string_view kHiddenFiles[] = {
    "core/boxing",
    "/Register",
    "/Redispatch",
    "pythonrun.c",
    "Modules/main.c",
    "Objects/call.c",
    "Objects/methodobject.c",
    "pycore_ceval.h",
    "ceval.c",
    "cpython/abstract.h",
};

bool IsPython(const StackFrame& f) {
  std::string_view name = f.filename;
  return name.size() > 3 && name.substr(name.size() - 3) == ".py";
}
// "void at::f<a, b>(int)" -> "at::f<a, b>": no return type, no argument list.
std::string_view QualifiedName(std::string_view name) {
  int depth = 0;
  size_t start = 0;
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '(' && name.substr(i, kAnonymous.size()) == kAnonymous) {
      i += kAnonymous.size() - 1;  // part of the name, space included
      continue;
    }
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (depth == 0 && c == ' ') start = i + 1;
    if (depth == 0 && c == '(') return i > start ? name.substr(start, i - start) : name;
  }
  return name.substr(start).empty() ? name : name.substr(start);
}

// Allocator, ATen and standard-library frames say how memory was allocated, not why.
bool IsPlumbing(const StackFrame& f) {
  std::string_view name = QualifiedName(f.name);
  for (std::string_view prefix : {"c10::", "at::", "std::", "torch::autograd::VariableType::"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}
// Code torch.compile generated: Inductor writes it to its cache directory
// (/tmp/torchinductor_<user>/ by default, torch/_inductor/runtime/cache_dir_utils.py) as
// <2 chars>/c<hash>.py. A site there names no user code; the user's frame is further out.
bool IsInductorGenerated(const StackFrame& f) {
  if (f.filename.find("torchinductor_") != std::string::npos) return true;
  const std::string_view path = f.filename;
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash < 3 || path[slash - 3] != '/') return false;
  const std::string_view name = path.substr(slash + 1);
  return name.size() == 55 && name.front() == 'c' && name.ends_with(".py");
}

bool IsInsideTorch(const StackFrame& f) {
  return f.filename.find("/torch/") != std::string::npos || f.filename.rfind("torch/", 0) == 0 ||
         IsInductorGenerated(f);
}

}  // namespace

bool IsViewerHiddenFrame(const StackFrame& frame) {
  for (std::string_view s : kHiddenNames) {
    if (frame.name.find(s) != std::string::npos) return true;
  }
  for (std::string_view s : kHiddenFiles) {
    if (frame.filename.find(s) != std::string::npos) return true;
  }
  return false;
}

std::vector<FrameId> VisibleFrames(const MemorySnapshot& snapshot, StackId stack, size_t limit) {
  std::vector<FrameId> out;
  for (FrameId id : snapshot.Stack(stack)) {
    if (out.size() >= limit) break;
    if (!IsViewerHiddenFrame(snapshot.frames[id])) out.push_back(id);
  }
  return out;
}

std::vector<FrameId> SiteFrames(const MemorySnapshot& snapshot, StackId stack, size_t limit) {
  const FrameId site = CallSiteFrame(snapshot, stack);
  std::vector<FrameId> out;
  bool reached = false;
  for (FrameId id : snapshot.Stack(stack)) {
    if (out.size() >= limit) break;
    reached = reached || id == site;
    if (reached && !IsViewerHiddenFrame(snapshot.frames[id])) out.push_back(id);
  }
  return out;
}

FrameId CallSiteFrame(const MemorySnapshot& snapshot, StackId stack) {
  FrameId first_visible = -1, first_python = -1, first_native = -1;
  for (FrameId id : snapshot.Stack(stack)) {
    const StackFrame& f = snapshot.frames[id];
    if (IsViewerHiddenFrame(f)) continue;
    if (first_visible < 0) first_visible = id;
    if (!IsPython(f)) {
      if (first_native < 0 && !IsPlumbing(f)) first_native = id;
      continue;
    }
    if (first_python < 0) first_python = id;
    if (!IsInsideTorch(f)) return id;
  }
  // Stacks without Python come from threads such as the autograd engine's; there the first
  // frame past the allocator (e.g. IndexBackward0::apply) names the work.
  if (first_python >= 0) return first_python;
  return first_native >= 0 ? first_native : first_visible;
}

std::string FrameLabel(const StackFrame& frame) {
  // C++ names carry full signatures; return type and arguments add nothing to a label.
  std::string_view name = QualifiedName(frame.name);
  std::string_view file = frame.filename;
  size_t slash = file.rfind('/');
  if (slash != std::string_view::npos && slash > 0) {
    size_t prev = file.rfind('/', slash - 1);
    if (prev != std::string_view::npos) file.remove_prefix(prev + 1);
  }
  if (file.empty() || file == "??") return std::string(name);
  if (frame.line > 0) return fmt::format("{} ({}:{})", name, file, frame.line);
  return fmt::format("{} ({})", name, file);
}

std::string CallSiteLabel(const MemorySnapshot& snapshot, StackId stack) {
  FrameId id = CallSiteFrame(snapshot, stack);
  if (id < 0) return "<no stack recorded>";
  return FrameLabel(snapshot.frames[id]);
}

}  // namespace sextant
