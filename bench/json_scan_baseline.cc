// The machine's own JSON speed, as a yardstick for `sextant trace report` (bench/trace_speed.sh):
// reads a Kineto trace and visits every field of every event with simdjson's On-Demand API —
// each key, and each number parsed — doing nothing else. Prints CPU seconds and MB/s per core.
// A report can run faster than this (it skips what it does not need) or slower (it also builds
// the tables), but the ratio of the two holds across machines far better than MB/s alone.
#include <simdjson.h>

#include <cstdio>
#include <ctime>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TRACE.json\n", argv[0]);
    return 2;
  }
  const std::clock_t start = std::clock();
  simdjson::padded_string text;
  if (simdjson::padded_string::load(argv[1]).get(text) != simdjson::SUCCESS) {
    std::fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::array events;
  if (parser.iterate(text).get(doc) != simdjson::SUCCESS ||
      doc["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
    std::fprintf(stderr, "%s: not a Kineto trace\n", argv[1]);
    return 1;
  }
  size_t fields = 0;
  double sum = 0;  // keeps the number parsing from being optimised away
  for (auto event : events) {
    simdjson::ondemand::object object;
    if (event.get_object().get(object) != simdjson::SUCCESS) continue;
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) continue;
      simdjson::ondemand::value value = field.value();
      simdjson::ondemand::json_type type;
      if (value.type().get(type) == simdjson::SUCCESS &&
          type == simdjson::ondemand::json_type::number) {
        double number = 0;
        if (value.get_double().get(number) == simdjson::SUCCESS) sum += number;
      }
      fields += key.size() > 0;
    }
  }
  const double cpu = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  std::printf("%zu fields (checksum %g): CPU %.3f s, %.0f MB/s per core\n", fields, sum, cpu,
              static_cast<double>(text.size()) / cpu / 1e6);
  return 0;
}
