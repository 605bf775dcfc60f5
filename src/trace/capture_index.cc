#include "trace/capture_index.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

// An index lists a handful of files; a few MB is already far beyond any real one.
constexpr int64_t kMaxIndexBytes = int64_t{16} << 20;

bool IsTraceFileName(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".json.zst");
}

std::vector<std::string> FilesOfIndex(const std::filesystem::path& index) {
  const std::string path = index.string();
  std::vector<std::string> out;
  const std::filesystem::path folder = index.parent_path();
  size_t entry = 0;
  for (const std::string& file : ParseCaptureIndex(ReadFile(path, kMaxIndexBytes), path)) {
    const std::filesystem::path listed = folder / file;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(listed, ec)) {
      ThrowUserError(SourceLocation{path}, fmt::format("[{}].file", entry),
                     fmt::format("{} is not a file next to the index", file));
    }
    out.push_back(listed.string());
    ++entry;
  }
  return out;
}

}  // namespace

bool IsCaptureFolder(const std::string& folder) {
  std::error_code ec;
  const std::filesystem::path p(folder);
  if (!std::filesystem::is_directory(p, ec)) return false;
  std::filesystem::path name = p.filename();
  if (name.empty()) name = p.parent_path().filename();  // "capture_traces/"
  return name == "capture_traces" || std::filesystem::is_regular_file(p / kCaptureIndexName, ec);
}

std::vector<std::string> ParseCaptureIndex(std::string_view text, const std::string& source) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    ThrowUserError(SourceLocation{source}, "", "not JSON (expected a list of capture traces)");
  }
  if (!json.is_array()) {
    ThrowUserError(SourceLocation{source}, "",
                   "expected a JSON list of capture traces ([{\"file\": ...}, ...])");
  }
  std::vector<std::string> files;
  for (size_t i = 0; i < json.size(); ++i) {
    const nlohmann::json& e = json[i];
    const std::string key = fmt::format("[{}].file", i);
    if (!e.is_object()) {
      ThrowUserError(SourceLocation{source}, fmt::format("[{}]", i),
                     fmt::format("expected {{\"file\": ...}}, got {}", e.type_name()));
    }
    if (!e.contains("file")) {
      ThrowUserError(SourceLocation{source}, key, "each entry needs a \"file\" name");
    }
    if (!e["file"].is_string() || e["file"].get_ref<const std::string&>().empty()) {
      ThrowUserError(SourceLocation{source}, key, "must be a non-empty string");
    }
    const std::string& file = e["file"].get_ref<const std::string&>();
    // A capture trace sits next to its index (TraceLens's splitter writes them together).
    if (file.find_first_of("/\\") != std::string::npos || file == "." || file == "..") {
      ThrowUserError(SourceLocation{source}, key,
                     fmt::format("{} is not a file name next to the index", file));
    }
    if (std::find(files.begin(), files.end(), file) != files.end()) {
      ThrowUserError(SourceLocation{source}, key, fmt::format("{} is listed twice", file));
    }
    files.push_back(file);
  }
  if (files.empty()) ThrowUserError(SourceLocation{source}, "", "lists no capture trace");
  return files;
}

std::vector<std::string> CaptureTraceFiles(const std::string& path) {
  const std::filesystem::path p(path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    const std::filesystem::path index = p / kCaptureIndexName;
    if (std::filesystem::is_regular_file(index, ec)) return FilesOfIndex(index);
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(p, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file(ec) && !name.starts_with(".") && IsTraceFileName(name)) {
        found.push_back(entry.path().string());
      }
    }
    if (found.empty()) {
      ThrowUserError(SourceLocation{path}, "",
                     fmt::format("a folder with neither {} nor capture traces (.json, .json.gz, "
                                 ".json.zst) directly inside",
                                 kCaptureIndexName));
    }
    std::sort(found.begin(), found.end());
    return found;
  }
  if (p.filename() == kCaptureIndexName) return FilesOfIndex(p);
  return {path};
}

}  // namespace sextant
