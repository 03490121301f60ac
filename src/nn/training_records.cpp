#include "nn/training_records.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

namespace warpnet::nn {

namespace {

// The train entries of one parsed record, added to `out` whole or not at
// all: a field of the wrong type (nlohmann's type_error) means a record
// `warpnet bench` did not write, passed over.
void read_entries(const nlohmann::json& record, const std::string& file, RecordedTrainings& out) {
  RecordedTrainings found;
  try {
    const nlohmann::json gpu = record.value("gpu", nlohmann::json::object());
    for (const nlohmann::json& op : record["ops"]) {
      if (!op.is_object() || op.value("op", "") != "train" || !op.contains("cpu") || !op.contains("gpu")) continue;
      if (!op["cpu"].is_object() || !op["gpu"].is_object()) continue;
      RecordedTraining r;
      r.cpu_images_per_second = op["cpu"].value("images_per_second", 0.0);
      r.gpu_images_per_second = op["gpu"].value("images_per_second", 0.0);
      if (r.cpu_images_per_second <= 0 || r.gpu_images_per_second <= 0) {
        ++found.cpu_only;
        continue;
      }
      r.file = file;
      r.gpu = gpu.is_object() ? gpu.value("name", std::string("?")) : "?";
      r.date = record.value("date", std::string("?"));
      r.cpu = record.value("cpu", std::string("?"));
      r.model = op.value("model", std::string("?"));
      r.batch_size = op.value("batch_size", int64_t(0));
      r.cpu_threads = op["cpu"].value("threads", 0);
      r.speedup = op.at("gpu_speedup_over_cpu").get<double>();  // (missing: not bench's record, passed over)
      found.entries.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception&) {
    return;
  }
  out.entries.insert(out.entries.end(), found.entries.begin(), found.entries.end());
  out.cpu_only += found.cpu_only;
}

}  // namespace

RecordedTrainings recorded_trainings(const std::filesystem::path& results) {
  namespace fs = std::filesystem;
  RecordedTrainings out;
  std::error_code error;
  if (!fs::is_directory(results, error)) return out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(results, error))
    if (entry.path().extension() == ".json" && entry.is_regular_file(error))  // (a pipe would block the read)
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    const nlohmann::json record = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.contains("ops") && record["ops"].is_array())
      read_entries(record, file.filename().string(), out);
  }
  return out;
}

std::vector<RecordedTraining> newest_for_model(const RecordedTrainings& recorded, const std::string& model) {
  const RecordedTraining* newest = nullptr;
  for (const RecordedTraining& r : recorded.entries)
    if (r.model == model && (!newest || r.date > newest->date)) newest = &r;
  std::vector<RecordedTraining> out;
  if (!newest) return out;
  for (const RecordedTraining& r : recorded.entries)
    if (r.model == model && r.file == newest->file) out.push_back(r);
  return out;
}

}  // namespace warpnet::nn
