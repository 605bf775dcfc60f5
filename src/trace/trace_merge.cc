#include "trace/trace_merge.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <filesystem>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>
#include <nlohmann/json.hpp>

#include "trace/kineto_reader.h"
#include "util/compressed_file.h"
#include "util/error.h"

namespace sextant {
namespace {

namespace od = simdjson::ondemand;

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// A JSON string literal; invalid UTF-8 (file names, kernel names) becomes U+FFFD.
std::string JsonString(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct FileState {
  size_t index = 0;
  int64_t rank = 0;
  int64_t shift_ns = 0;
  size_t cut_short_at = 0;              // the reader's TraceData::cut_short_at
  std::map<std::string, int64_t> pids;  // raw pid token -> merged pid
  std::map<std::pair<int64_t, std::string>, int64_t> tids;
  std::map<std::string, std::string> process_names;   // raw pid token -> name
  std::map<std::string, std::string> process_labels;  // raw pid token -> labels ("GPU 0")
  std::map<std::pair<std::string, std::string>, std::string> thread_names;
};

class Merger {
 public:
  // The output appears only once every event is written (OutputFile writes to a temporary).
  Merger(const std::string& output, const std::vector<std::string>& inputs)
      : out_(output, inputs) {}

  // First pass over a file: `trace report`'s reader checks it, so merge refuses and warns
  // exactly as report does, and gives its rank and time base. The text is read again when
  // copying so that only one input is in memory at a time.
  void AddFile(const std::string& path, size_t index) {
    const TraceData trace = ReadKinetoTrace(path);
    for (const std::string& warning : trace.warnings) {
      // Most reader warnings name no file; some are already located in it.
      const bool located =
          warning.starts_with(path + ":") || warning.starts_with(path + " at byte");
      summary_.warnings.push_back(located ? warning : path + ": " + warning);
    }
    FileState state;
    state.index = index;
    state.rank = trace.rank >= 0 ? trace.rank : static_cast<int64_t>(index);
    state.cut_short_at = trace.cut_short_at;
    // What one run's rank files have in common, checked against the files before this one.
    std::error_code ec;
    const std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
    for (size_t i = 0; i < paths_.size(); ++i) {
      if (!ec && canonical == canonicals_[i]) {
        summary_.warnings.push_back(
            fmt::format("{} is given twice: its events appear twice", path));
      } else if (trace.rank >= 0 && files_[i].rank == trace.rank) {
        summary_.warnings.push_back(fmt::format(
            "{} and {} both say they are rank {} (distributedInfo)", paths_[i], path, trace.rank));
      }
    }
    if (!trace.device_name.empty() && !devices_.empty() &&
        std::find(devices_.begin(), devices_.end(), trace.device_name) == devices_.end()) {
      summary_.warnings.push_back(
          fmt::format("{} was recorded on '{}', {} on '{}': ranks of one run share a GPU model",
                      path, trace.device_name, device_files_.front(), devices_.front()));
    }
    if (!trace.device_name.empty()) {
      devices_.push_back(trace.device_name);
      device_files_.push_back(path);
    }
    canonicals_.push_back(ec ? std::string() : canonical);
    const int64_t base = trace.base_time_ns;
    bases_.push_back(base);
    // When the trace's clock starts, whether its times are relative to a base or absolute.
    if (const int64_t start = FirstEventClockNs(trace); start != INT64_MIN) {
      starts_.push_back(start);
    }
    state.shift_ns = base;  // made relative to the earliest base once all are known
    files_.push_back(std::move(state));
    paths_.push_back(path);
  }

  MergeSummary Finish() {
    int64_t min_base = bases_.empty() ? 0 : *std::min_element(bases_.begin(), bases_.end());
    if (starts_.size() > 1) {
      const auto [first, last] = std::minmax_element(starts_.begin(), starts_.end());
      if (*last - *first > kOneRunStartSpreadNs) {
        summary_.warnings.push_back(fmt::format(
            "the traces' first events are {:.1f} hours apart: not ranks of one run? Each is "
            "placed by its own clock, so their timelines do not line up",
            static_cast<double>(*last - *first) / 3.6e12));  // ns per hour
      }
    }
    // Processes in rank order (then file order), whatever order the files were given in.
    std::vector<size_t> order(files_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return files_[a].rank < files_[b].rank; });
    for (size_t position = 0; position < order.size(); ++position) {
      files_[order[position]].index = position;
    }
    for (auto& f : files_) f.shift_ns = f.shift_ns ? f.shift_ns - min_base : 0;
    Write("{\"traceEvents\":[\n");
    for (size_t i = 0; i < files_.size(); ++i) {
      // The reader has already reported a truncation of this file (AddFile).
      InputText input = InputText::Load(paths_[i]);
      if (const size_t cut = files_[i].cut_short_at; cut > 0 && cut <= input.text().size()) {
        // Cut short: the events up to the last complete one, as the reader analysed them,
        // closed by hand (simdjson indexes the whole text first and would refuse it).
        const std::string_view text = input.text();
        const size_t first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
        std::string closed(text.substr(0, cut));
        closed += first != std::string_view::npos && text[first] == '[' ? "]" : "]}";
        input = InputText::FromString(closed);
      }
      CopyEvents(paths_[i], input.text(), files_[i]);
    }
    for (const auto& f : files_) WriteMetadata(f);
    Write("\n]");
    // The events are shifted onto the earliest input's clock: that base, so that a merged
    // file merges again (or lines up with another rank) on the same clock.
    if (min_base != 0) Write(fmt::format(",\"baseTimeNanoseconds\":{}", min_base));
    if (!device_properties_.empty()) Write(",\"deviceProperties\":" + device_properties_);
    Write(
        ",\"displayTimeUnit\":\"ms\",\"otherData\":{\"merged_by\":\"sextant trace "
        "merge\",\"inputs\":[");
    for (size_t i = 0; i < paths_.size(); ++i) Write((i ? "," : "") + JsonString(paths_[i]));
    Write("]}}\n");
    Flush();
    out_.Close();
    summary_.files = files_.size();
    return summary_;
  }

 private:
  void Write(std::string_view s) {
    buffer_ += s;
    if (buffer_.size() > (1 << 20)) Flush();
  }
  void Flush() {
    out_.Write(buffer_);
    buffer_.clear();
  }
  void BeginEvent() {
    Write(first_event_ ? "" : ",\n");
    first_event_ = false;
    summary_.events_written++;
  }

  int64_t Pid(FileState& f, const std::string& raw) {
    auto [it, inserted] = f.pids.try_emplace(
        raw, static_cast<int64_t>(f.index + 1) * 100000 + static_cast<int64_t>(f.pids.size()));
    if (inserted) summary_.processes++;
    return it->second;
  }
  int64_t Tid(FileState& f, int64_t pid, const std::string& raw) {
    auto [it, inserted] = f.tids.try_emplace({pid, raw}, next_tid_);
    if (inserted) {
      ++next_tid_;
      summary_.threads++;
    }
    return it->second;
  }

  static std::string_view KeyOf(od::field& field) {
    const char* start = field.key().raw();
    const char* end = start;
    while (*end != '"') {
      if (*end == '\\') ++end;
      ++end;
    }
    return {start, static_cast<size_t>(end - start)};
  }

  static bool RawValue(od::value& v, std::string_view* raw) {
    od::json_type type;
    if (v.type().get(type)) return false;
    if (type == od::json_type::object) {
      od::object o;
      return !v.get_object().get(o) && !o.raw_json().get(*raw);
    }
    if (type == od::json_type::array) {
      od::array a;
      return !v.get_array().get(a) && !a.raw_json().get(*raw);
    }
    *raw = v.raw_json_token();
    return true;
  }

  void CopyEvents(const std::string& path, std::string_view text, FileState& f) {
    od::parser parser;
    od::document doc;
    auto padded = simdjson::padded_string_view(text.data(), text.size(),
                                               text.size() + InputText::kInputPadding);
    bool iterating = false;  // current_location() is only defined once iteration has begun
    auto fail = [&](simdjson::error_code code) {
      const char* where = nullptr;
      int64_t offset = !iterating || doc.current_location().get(where) ? -1 : where - text.data();
      return UserError(FormatLocated({path, -1, -1, offset}, "",
                                     std::string("JSON error: ") + simdjson::error_message(code)));
    };
    if (auto code = parser.iterate(padded).get(doc)) throw fail(code);
    iterating = true;
    od::json_type type;
    if (auto code = doc.type().get(type)) throw fail(code);
    // Copies every event of `events`; a file cut short keeps the events before the cut.
    // Returns false when the rest of the document cannot be read.
    std::vector<std::pair<std::string_view, std::string_view>> fields;
    auto copy_events = [&](od::array& events) {
      try {
        for (auto element : events) {
          od::object obj;
          if (auto code = element.get_object().get(obj)) throw fail(code);
          fields.clear();
          for (auto field_result : obj) {
            od::field field;
            if (auto code = std::move(field_result).get(field)) throw fail(code);
            std::string_view key = KeyOf(field);
            od::value v = field.value();
            std::string_view raw;
            if (!RawValue(v, &raw)) throw fail(simdjson::TAPE_ERROR);
            fields.emplace_back(key, TrimRight(raw));
          }
          EmitEvent(f, fields);
        }
      } catch (const UserError& e) {
        if (f.pids.empty()) throw;
        summary_.warnings.push_back(std::string(e.what()) + "; events before it were merged");
        return false;
      }
      return true;
    };
    bool found = false;
    if (type == od::json_type::array) {
      od::array events;
      if (auto code = doc.get_array().get(events)) throw fail(code);
      found = true;
      copy_events(events);
    } else {
      od::object top;
      if (auto code = doc.get_object().get(top)) throw fail(code);
      for (auto field_result : top) {
        od::field field;
        if (auto code = std::move(field_result).get(field)) {
          if (found) break;  // past the events: the rest is metadata
          throw fail(code);
        }
        const std::string_view key = KeyOf(field);
        if (key == "deviceProperties" && device_properties_.empty()) {
          // Kept from the first file that has them (the ranks of one run share a GPU model;
          // a mismatch is warned about), so a report of the merged file names its GPU.
          od::value v = field.value();
          std::string_view raw;
          if (RawValue(v, &raw)) device_properties_ = std::string(TrimRight(raw));
        } else if (key == "traceEvents") {
          od::array events;
          if (auto code = field.value().get_array().get(events)) throw fail(code);
          found = true;
          if (!copy_events(events)) break;
        }
      }
    }
    if (!found)
      ThrowUserError(SourceLocation{path}, "traceEvents",
                     "not a Kineto trace: no traceEvents array");
  }

  void EmitEvent(FileState& f,
                 const std::vector<std::pair<std::string_view, std::string_view>>& fields) {
    std::string_view ph, name, pid_raw = "0", tid_raw = "0", args;
    for (const auto& [key, raw] : fields) {
      if (key == "ph")
        ph = raw;
      else if (key == "name")
        name = raw;
      else if (key == "pid")
        pid_raw = raw;
      else if (key == "tid")
        tid_raw = raw;
      else if (key == "args")
        args = raw;
    }
    if (ph == "\"M\"" && (name == "\"process_name\"" || name == "\"thread_name\"" ||
                          name == "\"process_sort_index\"" || name == "\"thread_sort_index\"" ||
                          name == "\"process_labels\"")) {
      // Replaced by our own labels at the end; remember the original names.
      std::string label = ArgsField(args, "name");
      if (name == "\"process_name\"") f.process_names[NumericId(pid_raw)] = label;
      if (name == "\"process_labels\"") {
        f.process_labels[NumericId(pid_raw)] = ArgsField(args, "labels");
      }
      if (name == "\"thread_name\"")
        f.thread_names[{NumericId(pid_raw), NumericId(tid_raw)}] = label;
      return;
    }
    int64_t pid = Pid(f, NumericId(pid_raw));
    int64_t tid = Tid(f, pid, NumericId(tid_raw));
    BeginEvent();
    std::string line = "{";
    bool first = true;
    for (const auto& [key, raw] : fields) {
      line += first ? "\"" : ",\"";
      first = false;
      line += key;
      line += "\":";
      if (key == "pid") {
        line += std::to_string(pid);
      } else if (key == "tid") {
        line += std::to_string(tid);
      } else if ((key == "ts") && f.shift_ns != 0) {
        int64_t ns = 0;
        if (ParseMicrosecondsToNs(raw, &ns)) {
          ns += f.shift_ns;
          line += fmt::format("{}{}.{:03d}", ns < 0 ? "-" : "", std::llabs(ns) / 1000,
                              std::llabs(ns) % 1000);
        } else {
          line += raw;
        }
      } else if (key == "id") {
        int64_t id = 0;
        auto [ptr, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), id);
        if (ec == std::errc() && ptr == raw.data() + raw.size() && id >= 0 &&
            id < (int64_t{1} << 40)) {
          line += std::to_string((static_cast<int64_t>(f.index + 1) << 40) | id);
        } else {
          line += raw;
        }
      } else {
        line += raw;
      }
    }
    line += "}";
    Write(line);
  }

  // A pid or tid as one thread is named: the 2021 schema writes some as strings ("1890023232")
  // and the same ids elsewhere as numbers, which Perfetto's importer reads as one id.
  static std::string NumericId(std::string_view raw) {
    if (raw.size() > 2 && raw.front() == '"' && raw.back() == '"') {
      const std::string_view inner = raw.substr(1, raw.size() - 2);
      const bool digits = std::all_of(inner.begin() + (inner.front() == '-' ? 1 : 0), inner.end(),
                                      [](char c) { return c >= '0' && c <= '9'; }) &&
                          inner != "-";
      if (digits) return std::string(inner);
    }
    return std::string(raw);
  }

  // The string value of `key` in an args object's raw text ("" if absent or not a string).
  static std::string ArgsField(std::string_view args, std::string_view key) {
    size_t at = args.find(fmt::format("\"{}\"", key));
    if (at == std::string_view::npos) return "";
    size_t open = args.find('"', args.find(':', at) + 1);
    if (open == std::string_view::npos) return "";
    std::string out;
    for (size_t i = open + 1; i < args.size() && args[i] != '"'; ++i) {
      if (args[i] == '\\' && i + 1 < args.size()) ++i;
      out += args[i];
    }
    return out;
  }

  static std::string Unquote(const std::string& raw) {
    if (raw.size() >= 2 && raw.front() == '"') return raw.substr(1, raw.size() - 2);
    return raw;
  }

  void WriteMetadata(const FileState& f) {
    // Files of one rank (a graph capture trace and its replay, two runs' rank 0) are told
    // apart by their file names.
    const bool shared_rank =
        std::count_if(files_.begin(), files_.end(),
                      [&](const FileState& other) { return other.rank == f.rank; }) > 1;
    const std::string rank_label =
        shared_rank ? fmt::format("rank {} ({})", f.rank,
                                  std::filesystem::path(paths_[f.index]).filename().string())
                    : fmt::format("rank {}", f.rank);
    for (const auto& [raw, pid] : f.pids) {
      // Kineto labels its GPU processes ("GPU 0") and names them after the program.
      auto labelled = f.process_labels.find(raw);
      auto named = f.process_names.find(raw);
      const std::string labels =
          labelled != f.process_labels.end() ? labelled->second : std::string();
      const std::string process = named != f.process_names.end() ? named->second : std::string();
      const std::string pid_text = Unquote(raw).empty() ? raw : Unquote(raw);
      // "python3 (GPU 0, pid 0)", "GPU 0 (pid 0)", "python3 (pid 7)" or "pid 7".
      const std::string inside = labels.empty() ? "pid " + pid_text : labels + ", pid " + pid_text;
      std::string original = !process.empty()  ? process + " (" + inside + ")"
                             : !labels.empty() ? labels + " (pid " + pid_text + ")"
                                               : "pid " + pid_text;
      BeginEvent();
      Write(
          fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{"
                      "\"name\":{}}}}}",
                      pid, JsonString(fmt::format("{}: {}", rank_label, original))));
      BeginEvent();
      Write(
          fmt::format("{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"tid\":0,"
                      "\"args\":{{\"sort_index\":{}}}}}",
                      pid, pid));
    }
    for (const auto& [key, tid] : f.tids) {
      std::string pid_raw;
      for (const auto& [raw, pid] : f.pids) {
        if (pid == key.first) pid_raw = raw;
      }
      auto named = f.thread_names.find({pid_raw, key.second});
      std::string label = named != f.thread_names.end() && !named->second.empty()
                              ? named->second
                              : "thread " + Unquote(key.second);
      BeginEvent();
      Write(
          fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{"
                      "\"name\":{}}}}}",
                      key.first, tid, JsonString(label)));
    }
  }

  OutputFile out_;
  std::string buffer_;
  bool first_event_ = true;
  int64_t next_tid_ = 1;
  MergeSummary summary_;
  std::vector<FileState> files_;
  std::vector<std::string> paths_;
  std::vector<int64_t> bases_;
  std::string device_properties_;                    // the first input's deviceProperties, raw JSON
  std::vector<int64_t> starts_;                      // per file with events: its first event's time
  std::vector<std::string> canonicals_;              // per file: its canonical path ("" if unknown)
  std::vector<std::string> devices_, device_files_;  // the GPUs the files name, and where
};

}  // namespace

MergeSummary MergeTraces(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) ThrowUserError("trace merge: no input traces");
  Merger merger(output, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) merger.AddFile(inputs[i], i);
  return merger.Finish();
}

}  // namespace sextant
