#include "trace/distributed_info.h"

#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "util/compressed_file.h"
#include "util/error.h"

namespace sextant {
namespace {

// The end of the JSON object that starts at `open` ('{'), or npos when `text` ends first.
size_t ObjectEnd(std::string_view text, size_t open) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<DistributedInfo> FindDistributedInfo(std::string_view head) {
  const size_t key = head.find("\"distributedInfo\"");
  const size_t events = head.find("\"traceEvents\"");
  if (key == std::string_view::npos || (events != std::string_view::npos && events < key)) {
    return std::nullopt;
  }
  const size_t open = head.find_first_not_of(" \t\r\n:", key + 17);
  if (open == std::string_view::npos || head[open] != '{') return std::nullopt;
  const size_t end = ObjectEnd(head, open);
  if (end == std::string_view::npos) return std::nullopt;
  const nlohmann::json info =
      nlohmann::json::parse(head.substr(open, end - open), nullptr, /*allow_exceptions=*/false);
  if (!info.is_object() || !info.contains("rank") || !info["rank"].is_number_integer()) {
    return std::nullopt;
  }
  DistributedInfo out;
  out.rank = info["rank"].get<int64_t>();
  if (info.contains("world_size") && info["world_size"].is_number_integer()) {
    out.world_size = info["world_size"].get<int64_t>();
  }
  return out;
}

std::optional<DistributedInfo> PeekDistributedInfo(const std::string& path, size_t max_bytes) {
  std::string head;
  try {
    std::unique_ptr<TextReader> reader = TextReader::Open(path);
    constexpr size_t kPiece = 64 << 10;
    while (head.size() < max_bytes) {
      const size_t before = head.size();
      head.resize(before + kPiece);
      head.resize(before + reader->Read(head.data() + before, kPiece));
      if (head.size() == before) break;
      // Stop as soon as the answer is known: the object has ended, or the events began first.
      const size_t events = head.find("\"traceEvents\"");
      const size_t key = head.find("\"distributedInfo\"");
      if (key == std::string::npos && events != std::string::npos) return std::nullopt;
      if (key != std::string::npos && FindDistributedInfo(head)) break;
    }
  } catch (const UserError&) {
    return std::nullopt;  // the view of the file says why it cannot be read
  }
  return FindDistributedInfo(head);
}

bool AreRanksOfOneRun(const std::vector<std::string>& files) {
  if (files.size() < 2) return false;
  std::set<int64_t> ranks;
  int64_t world_size = -1;
  for (const std::string& file : files) {
    const std::optional<DistributedInfo> info = PeekDistributedInfo(file);
    if (!info || info->world_size < 2 || !ranks.insert(info->rank).second) return false;
    if (world_size >= 0 && info->world_size != world_size) return false;
    world_size = info->world_size;
  }
  return true;
}

}  // namespace sextant
