#include "visualizer/speedup_panel.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace warpnet::viz {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string text_of(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_float()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", j.get<double>());
    return b;
  }
  return j.dump();
}

// A record is read without trusting its types (a hand-edited or foreign
// JSON file must not stop the panel): j[key] when j is an object holding it,
// else null; its text, or `otherwise` when absent; its items when an array.
const json& field(const json& j, const char* key) {
  static const json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}
std::string text_field(const json& j, const char* key, const char* otherwise) {
  const json& f = field(j, key);
  return f.is_null() ? otherwise : text_of(f);
}
const json& items(const json& j, const char* key) {
  static const json empty = json::array();
  const json& f = field(j, key);
  return f.is_array() ? f : empty;
}

// "13.5" from a number, "-" when absent.
std::string number(const json& row, const char* key, const char* format) {
  if (!field(row, key).is_number()) return "-";
  char b[32];
  std::snprintf(b, sizeof b, format, row[key].get<double>());
  return b;
}

// The record's scalar figures as "path = value" rows (arrays of more than 8
// items summarised), for records the panel has no table for. Nesting past
// kDeepest levels is summarised too: no record warpnet writes goes past 6,
// and a file of 50,000 nested brackets overflowed the stack.
constexpr int kDeepest = 32;
void flatten(const json& j, const std::string& path, std::vector<std::pair<std::string, std::string>>& out,
             int depth = 0) {
  if ((j.is_object() || j.is_array()) && depth == kDeepest) {
    out.emplace_back(path, "(nested too deep to show)");
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, path.empty() ? k : path + "." + k, out, depth + 1);
  } else if (j.is_array()) {
    if (j.size() > 8) {
      out.emplace_back(path, "[" + std::to_string(j.size()) + " items]");
      return;
    }
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], path + "[" + std::to_string(i) + "]", out, depth + 1);
  } else {
    out.emplace_back(path, text_of(j));
  }
}

// A `warpnet bench train` entry's rates and their ratio, both measured in
// the record's one run on one machine.
std::string training_headline(const json& op) {
  const json &cpu = field(op, "cpu"), &gpu = field(op, "gpu");
  return "train " + text_field(op, "model", "?") + ", batch " + text_field(op, "batch_size", "?") + ": CPU " +
         number(cpu, "images_per_second", "%.0f") + " images/s (" + text_field(cpu, "threads", "?") +
         " threads), GPU " + number(gpu, "images_per_second", "%.0f") + " images/s, GPU/CPU " +
         number(op, "gpu_speedup_over_cpu", "%.1f") + "x";
}

bool is_training(const json& op) { return field(op, "op") == "train"; }

void label(BenchRecord& r) {
  const json& j = r.json;
  // Every field through field()/text_field(): one of an unexpected type (a
  // null benchmark, a numeric date) shows as text, not a lost record.
  r.benchmark = text_field(j, "benchmark", "(no \"benchmark\" field)");
  // `warpnet bench` writes machine_record() at the top: cpu, host, date.
  const json& machine = field(j, "machine");
  if (field(j, "date").is_string()) r.date = text_field(j, "date", "");
  else if (!field(machine, "date").is_null()) r.date = text_field(machine, "date", "");
  if (!field(j, "cpu_model").is_null()) r.machine = text_field(j, "cpu_model", "");
  else if (field(j, "cpu").is_string()) r.machine = text_field(j, "cpu", "");
  else if (!field(machine, "cpu").is_null()) r.machine = text_field(machine, "cpu", "");
  if (!field(j, "hostname").is_null()) r.machine += " on " + text_field(j, "hostname", "");
  else if (!field(j, "host").is_null()) r.machine += " on " + text_field(j, "host", "");
  const json& g = field(j, "gpu");
  if (!g.is_object()) {
    r.gpu = "no GPU part: this record has CPU or emulator figures only";
  } else if (field(g, "usable") != true) {
    r.gpu = "no GPU part: " + text_field(g, "why_not", "the GPU was not usable");
  } else {
    r.has_gpu = true;
    r.gpu = text_field(g, "name", "GPU") + " (sm_" + text_field(g, "compute_capability", "?") + ", driver " +
            text_field(g, "driver", "?") + ")";
  }
}

}  // namespace

std::vector<BenchRecord> load_records(const std::string& folder) {
  std::vector<BenchRecord> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    // (A pipe or device named *.json would block the read for ever.)
    if (entry.path().extension() != ".json" || !entry.is_regular_file(ec)) continue;
    BenchRecord r;
    r.file = entry.path().filename().string();
    try {
      std::ifstream in(entry.path());
      r.json = json::parse(in);
      label(r);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const BenchRecord& a, const BenchRecord& b) { return a.file < b.file; });
  return out;
}

SpeedupPanel::SpeedupPanel(SpeedupOptions options) : options_(std::move(options)) {
  records_ = load_records(options_.results);
  // The newest GPU record by its own date (file names do not order the runs), the later name on a tie.
  for (size_t i = 0; i < records_.size(); ++i)
    if (records_[i].has_gpu && (!records_[selected_].has_gpu || records_[i].date >= records_[selected_].date))
      selected_ = i;
  for (size_t i = 0; i < records_.size(); ++i)
    if (records_[i].file == options_.record) selected_ = i;
  // What the panel opens on, also on stdout: a headless run's log says what its picture shows.
  if (records_.empty()) return;
  const BenchRecord& shown = records_[std::min(selected_, records_.size() - 1)];
  std::printf("warpnet-viz: speed-up panel shows %s\n", shown.file.c_str());
  if (!shown.error.empty()) {
    failure_ = shown.file + ": cannot read this record: " + shown.error;
    std::fprintf(stderr, "warpnet-viz: %s\n", failure_.c_str());
  }
  if (shown.json.contains("ops") && shown.json["ops"].is_array())
    for (const json& op : shown.json["ops"])
      if (is_training(op)) std::printf("warpnet-viz:   %s\n", training_headline(op).c_str());
}

void SpeedupPanel::Draw() {
  ImGui::Text("Records in %s", options_.results.c_str());
  ImGui::SameLine();
  help_marker("Each file is one run of a benchmark (warpnet bench --json, scripts/gpu-check.sh, the CPU and "
              "emulator scripts). Figures hold for the machine and date they came from; nothing is measured "
              "here. Kernel times need a GPU: a record without a GPU part says so.");
  if (ImGui::Button("Reload")) records_ = load_records(options_.results), selected_ = 0;
  if (records_.empty()) {
    warning_text("No records found (bench/results/*.json). `warpnet bench --json FILE` on a GPU machine writes one.");
    return;
  }
  ImGui::BeginChild("records", ImVec2(330, 0), true);
  for (size_t i = 0; i < records_.size(); ++i) {
    const BenchRecord& r = records_[i];
    if (ImGui::Selectable(r.file.c_str(), i == selected_)) selected_ = i;
    ImGui::TextDisabled("  %s", r.error.empty() ? (r.has_gpu ? "GPU" : "no GPU part") : "unreadable");
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("record", ImVec2(0, 0), true);
  draw_record(records_[std::min(selected_, records_.size() - 1)]);
  ImGui::EndChild();
}

void SpeedupPanel::draw_record(const BenchRecord& r) {
  ImGui::Text("%s", r.file.c_str());
  if (!r.error.empty()) {
    warning_text("cannot read this record: " + r.error);
    return;
  }
  ImGui::Text("benchmark: %s", r.benchmark.c_str());
  ImGui::Text("date: %s", r.date.empty() ? "(not recorded)" : r.date.c_str());
  ImGui::Text("machine: %s", r.machine.empty() ? "(not recorded)" : r.machine.c_str());
  if (r.has_gpu) ImGui::Text("GPU: %s", r.gpu.c_str());
  else warning_text(r.gpu);
  ImGui::Separator();

  const json& j = r.json;
  if (j.contains("ops") && j["ops"].is_array()) {
    for (const json& op : j["ops"]) {
      if (field(op, "op").is_null() || !field(op, "sizes").is_array()) {  // `bench train` rows and the like: as written
        if (is_training(op)) ImGui::TextUnformatted(training_headline(op).c_str());
        std::vector<std::pair<std::string, std::string>> rows;
        flatten(op, "", rows);
        for (const auto& [k, v] : rows) ImGui::BulletText("%s = %s", k.c_str(), v.c_str());
        continue;
      }
      std::string sizes;
      const json& names = items(op, "size_names");
      for (size_t i = 0; i < op["sizes"].size(); ++i)
        sizes += (i ? " " : "") + (i < names.size() ? text_of(names[i]) : "?") + "=" + text_of(op["sizes"][i]);
      const std::string name = text_of(op["op"]);
      ImGui::Text("%s  %s", name.c_str(), sizes.c_str());
      const json& gpu = field(op, "gpu");
      if (field(gpu, "kernels").is_array()) {
        if (ImGui::BeginTable(("k" + sizes + name).c_str(), 8,
                              ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
          for (const char* h : {"version", "input", "status", "median ms", "TFLOP/s", "% of vendor", "% of peak", "x CPU"})
            ImGui::TableSetupColumn(h);
          ImGui::TableHeadersRow();
          for (const json& k : gpu["kernels"]) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(text_field(k, "kernel", "?").c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(text_field(k, "input_format", "").c_str());
            ImGui::TableNextColumn();
            const std::string status = text_field(k, "status", "?");
            if (status == "ok") {
              ImGui::TextUnformatted(status.c_str());
            } else {  // why, in the record's words, on hover
              ImGui::TextColored(ImVec4(0.94f, 0.4f, 0.3f, 1), "%s", status.c_str());
              const std::string why = text_field(k, "error", "");
              if (!why.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", why.c_str());
            }
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(number(field(k, "timing"), "median_ms", "%.3f").c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(number(k, "tflops", "%.2f").c_str());
            ImGui::TableNextColumn();
            // A bar: 100 % is the vendor library's time.
            if (field(k, "percent_of_vendor").is_number()) {
              const float pct = k["percent_of_vendor"].get<float>();
              const ImVec2 p = ImGui::GetCursorScreenPos();
              ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + std::min(pct, 150.0f), p.y + 14),
                                                        colour(layout::kSector));
              ImGui::Dummy(ImVec2(150, 14));
              ImGui::SameLine(4);
              ImGui::Text("%.1f", pct);
            } else {
              ImGui::TextUnformatted("-");
            }
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(number(k, "percent_of_peak", "%.1f").c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(number(k, "speedup_over_cpu", "%.1f").c_str());
          }
          ImGui::EndTable();
        }
      } else {
        warning_text("GPU part skipped: " + text_field(gpu, "skipped", "no GPU rows in this record"));
      }
      const json& cpu = field(op, "cpu");
      if (field(cpu, "rows").is_array())
        for (const json& row : cpu["rows"])
          ImGui::BulletText("CPU %s: median %s ms, %s threads", text_field(row, "library", "?").c_str(),
                            number(field(row, "timing"), "median_ms", "%.3f").c_str(),
                            text_field(cpu, "threads", "?").c_str());
      else if (!field(cpu, "skipped").is_null())
        ImGui::BulletText("CPU part skipped: %s", text_of(cpu["skipped"]).c_str());
      ImGui::Spacing();
    }
    return;
  }
  // Any other record: its figures, as written.
  ImGui::TextDisabled("Not a `warpnet bench` record: its figures as recorded.");
  std::vector<std::pair<std::string, std::string>> rows;
  flatten(j, "", rows);
  if (ImGui::BeginTable("figures", 2, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY)) {
    ImGui::TableSetupColumn("field");
    ImGui::TableSetupColumn("value");
    ImGui::TableHeadersRow();
    for (const auto& [k, v] : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(k.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(v.c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace warpnet::viz
