#include "report/csv_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

std::string Quote(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

// The CSV of `table` in pieces of about 1 MiB, each handed to `write`: a table of millions of
// rows is written without being held as one string.
template <typename Write>
void RenderCsvPieces(const Table& table, Write write) {
  constexpr size_t kPiece = size_t{1} << 20;
  std::string out;
  const auto& columns = table.columns();
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ',';
    out += Quote(columns[c].key);
  }
  out += '\n';
  for (const auto& row : table.rows()) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) out += ',';
      out += Quote(FormatCellExact(row[c]));
    }
    out += '\n';
    if (out.size() >= kPiece) {
      write(std::string_view(out));
      out.clear();
    }
  }
  write(std::string_view(out));
}

}  // namespace

std::string RenderCsv(const Table& table) {
  std::string out;
  RenderCsvPieces(table, [&](std::string_view piece) { out += piece; });
  return out;
}

namespace {

// A directory made for this output that is removed, with what it holds, unless released.
class TemporaryDirectory {
 public:
  explicit TemporaryDirectory(const std::filesystem::path& beside, const std::string& name,
                              const std::string& shown) {
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0;; ++attempt) {
      path_ = beside / fmt::format(".{}.{}-{}.tmp", name, ::getpid(), counter.fetch_add(1));
      if (::mkdir(path_.c_str(), 0777) == 0) return;
      if (errno != EEXIST || attempt > 100) {
        ThrowUserError(SourceLocation{shown}, "",
                       fmt::format("cannot create a temporary directory in {}: {}",
                                   beside.empty() ? "." : beside.string(), std::strerror(errno)));
      }
    }
  }
  ~TemporaryDirectory() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void Release() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

bool HoldsCsv(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".csv") return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> WriteCsvFolders(const std::vector<CsvFolder>& folders,
                                         const std::string& dir,
                                         const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target(dir);
  while (!target.has_filename() && target.has_parent_path() && target != target.root_path())
    target = target.parent_path();  // "out/" is "out"
  // The directory itself is made, not a chain of them: a mistyped parent is refused, as --html
  // and --xlsx refuse a file in a missing directory.
  const fs::path parent = target.parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    ThrowUserError(SourceLocation{dir}, "",
                   fmt::format("its directory {} does not exist", parent.string()));
  }
  const bool exists = fs::exists(target, ec);
  if (exists && !fs::is_directory(target, ec)) {
    ThrowUserError(SourceLocation{dir}, "", "cannot create directory: it is a file");
  }
  // Every file's final path, checked before anything is written.
  std::vector<std::pair<fs::path, const Table*>> files;  // relative to `target`
  std::set<std::string> written;
  for (const CsvFolder& folder : folders) {
    for (const Table* table : folder.tables) {
      const fs::path relative = fs::path(folder.subdir) / (table->name() + ".csv");
      RefuseOverwritingInput((target / relative).string(), inputs);
      if (exists && fs::is_directory(target / relative, ec)) {
        ThrowUserError(SourceLocation{(target / relative).string()}, "", "is a directory");
      }
      files.push_back({relative, table});
      written.insert(relative.lexically_normal().string());
    }
  }
  // A temporary directory on the same file system as `target`, so that moving into place is a
  // rename: beside a new `target`, inside an existing one (its parent may not be writable).
  TemporaryDirectory temp(exists ? target : parent,
                          exists ? std::string("sextant-csv") : target.filename().string(), dir);
  for (const CsvFolder& folder : folders) {
    if (folder.subdir.empty()) continue;
    fs::create_directories(temp.path() / folder.subdir, ec);
    if (ec) ThrowUserError(SourceLocation{dir}, "", "cannot create directory: " + ec.message());
  }
  for (const auto& [relative, table] : files) {
    AtomicFile file((temp.path() / relative).string(), inputs);
    RenderCsvPieces(*table, [&](std::string_view piece) { file.Write(piece); });
    file.Commit();
  }
  if (!exists) {
    fs::rename(temp.path(), target, ec);
    if (ec) ThrowUserError(SourceLocation{dir}, "", "cannot create directory: " + ec.message());
    temp.Release();
    return {};
  }
  // Into an existing directory: its folders first (nothing is replaced if one cannot be made),
  // then one rename per file.
  for (const CsvFolder& folder : folders) {
    if (folder.subdir.empty()) continue;
    fs::create_directories(target / folder.subdir, ec);
    if (ec) {
      ThrowUserError(SourceLocation{(target / folder.subdir).string()}, "",
                     "cannot create directory: " + ec.message());
    }
  }
  for (const auto& [relative, table] : files) {
    fs::rename(temp.path() / relative, target / relative, ec);
    if (ec) {
      ThrowUserError(SourceLocation{(target / relative).string()}, "",
                     "cannot write: " + ec.message());
    }
  }
  std::set<std::string> subdirs;
  for (const CsvFolder& folder : folders) {
    subdirs.insert(folder.subdir.empty() ? "."
                                         : fs::path(folder.subdir).lexically_normal().string());
  }
  std::vector<std::string> others;
  auto scan = [&](const fs::path& folder, const std::string& prefix, bool folders_too) {
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.path() == temp.path()) continue;
      if (entry.path().extension() == ".csv" && !entry.is_directory(ec)) {
        if (written.count(prefix + name) == 0) others.push_back(prefix + name);
      } else if (folders_too && entry.is_directory(ec) && subdirs.count(name) == 0 &&
                 HoldsCsv(entry.path())) {
        others.push_back(prefix + name + "/");
      }
    }
  };
  for (const std::string& sub : subdirs) {
    if (sub == ".") {
      scan(target, "", true);
    } else {
      scan(target / sub, sub + "/", false);
    }
  }
  if (subdirs.count(".") == 0) scan(target, "", true);
  std::sort(others.begin(), others.end());
  return others;
}

std::vector<std::string> WriteCsvDirectory(const std::vector<const Table*>& tables,
                                           const std::string& dir,
                                           const std::vector<std::string>& inputs) {
  return WriteCsvFolders({CsvFolder{"", tables}}, dir, inputs);
}

std::string LeftoverCsvWarning(const std::string& dir, const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string list;
  for (size_t i = 0; i < names.size() && i < 8; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 8) list += fmt::format(", ... ({} in all)", names.size());
  const size_t folders = std::count_if(names.begin(), names.end(),
                                       [](const std::string& n) { return n.ends_with('/'); });
  const size_t files = names.size() - folders;
  std::string what;
  if (files > 0) what = fmt::format("{} CSV file{}", files, files == 1 ? "" : "s");
  if (folders > 0) {
    what += fmt::format("{}{} folder{} of CSV files", what.empty() ? "" : " and ", folders,
                        folders == 1 ? "" : "s");
  }
  return fmt::format(
      "{} also holds {} this output did not write ({}): they come from an earlier run, not "
      "from these inputs",
      dir, what, list);
}

}  // namespace sextant
