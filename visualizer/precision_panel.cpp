#include "visualizer/precision_panel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include <unistd.h>  // gethostname: the live table's label

#include "core/memory.hpp"

namespace warpnet::viz {

namespace {

namespace precision = device::precision;
using nlohmann::json;

double number(const json& row, const char* key) {
  const auto it = row.find(key);
  return it != row.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// One object of a record's "precision" array (precision::to_json's fields; null figures are NaN).
precision::Row row_of(const json& j) {
  precision::Row r;
  r.precision = j.value("precision", std::string("?"));
  r.scaling = j.value("scaling", std::string());
  r.backend = j.value("backend", std::string("?"));
  r.kernel = j.value("kernel", std::string("?"));
  r.M = j.value("M", int64_t(0)), r.N = j.value("N", int64_t(0)), r.K = j.value("K", int64_t(0));
  r.ms = number(j, "ms"), r.tflops = number(j, "tflops");
  r.rel_frobenius = number(j, "rel_frobenius"), r.max_ulps = number(j, "max_ulps");
  r.input_bytes = j.value("input_bytes", int64_t(0));
  r.note = j.value("note", std::string());
  r.ok = j.value("ok", true);
  return r;
}

std::string figure(double v, const char* format) {
  if (!std::isfinite(v)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

// A bar `fraction` of the column's width, in `c`, with `text` beside it.
void bar(float fraction, layout::Rgb c, const std::string& text) {
  const float w = std::max(20.0f, ImGui::GetContentRegionAvail().x - 70);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  if (fraction > 0)
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + w * std::min(1.0f, fraction), p.y + 14),
                                              colour(c));
  ImGui::Dummy(ImVec2(w, 14));
  ImGui::SameLine();
  ImGui::TextUnformatted(text.c_str());
}

}  // namespace

std::vector<PrecisionTable> load_precision_records(const std::string& folder, const std::string& named) {
  std::vector<PrecisionTable> out;
  for (const BenchRecord& r : load_records(folder)) {
    // A precision record by its name (`bench precision`'s), or the one named,
    // that does not parse is shown as such, not dropped.
    const bool unreadable = !r.error.empty() && (r.file.starts_with("precision") || r.file == named);
    if (unreadable) {
      PrecisionTable t;
      t.source = r.file;
      t.error = cat("cannot read this record: ", r.error);
      out.push_back(std::move(t));
    }
    if (!r.error.empty() || !r.json.contains("precision") || !r.json["precision"].is_array()) continue;
    PrecisionTable t;
    t.source = r.file;
    t.label = (r.machine.empty() ? std::string("machine not recorded") : r.machine) + ", " +
              (r.date.empty() ? std::string("date not recorded") : r.date);
    t.gpu = r.gpu, t.has_gpu = r.has_gpu;
    try {  // a field of another type than precision::to_json writes: this record shows the error
      for (const json& row : r.json["precision"]) t.rows.push_back(row_of(row));
    } catch (const std::exception& e) {
      t.rows.clear();
      t.error = "cannot read this record: " + std::string(e.what());
    }
    out.push_back(std::move(t));
  }
  return out;
}

PrecisionTable run_live(int64_t cpu_size, int64_t emu_size) {
  PrecisionTable t;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  t.source = "live run";
  char host[256] = "this machine";
  gethostname(host, sizeof host - 1);
  t.label = std::string(host) + ", " + date;
  t.gpu = "no GPU part: a live run here uses the CPU and the emulator only (emulator times are not a GPU's)";
  precision::Options o;
  o.cpu_size = {cpu_size, cpu_size, cpu_size};
  o.emu_size = {emu_size, emu_size, emu_size};
  o.cuda = false;
  o.runs = 3;
  o.budget_s = 0.2;
  const auto start = std::chrono::steady_clock::now();
  try {
    t.rows = precision::run(o);
  } catch (const std::exception& e) {
    t.error = e.what();
  }
  std::printf("warpnet-viz: live precision run (CPU %lld^3, emulator %lld^3): %zu rows in %.2f s\n",
              (long long)cpu_size, (long long)emu_size, t.rows.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return t;
}

PrecisionPanel::PrecisionPanel(PrecisionOptions options) : options_(std::move(options)) {
  tables_ = load_precision_records(options_.results, options_.record);
  // The newest record first (file names end in the date), unless one is named.
  selected_ = tables_.empty() ? 0 : tables_.size() - 1;
  bool named_found = false;
  for (size_t i = 0; i < tables_.size(); ++i)
    if (tables_[i].source == options_.record) selected_ = i, named_found = true;
  // A record named that holds no precision table would open the panel on
  // another one, without a word.
  if (!options_.record.empty() && !named_found) {
    failure_ = options_.record + ": not a precision record (`warpnet bench precision` writes them)";
    std::fprintf(stderr, "warpnet-viz: --precision-record %s\n", failure_.c_str());
  }
  if (options_.live) {
    tables_.push_back(run_live(options_.live_cpu, options_.live_emu));
    selected_ = tables_.size() - 1;
  }
  // What the panel opens on, also on stdout: a headless run's log says what its picture shows.
  if (failure_.empty() && !tables_.empty() && !tables_[selected_].error.empty()) {
    std::printf("warpnet-viz: precision panel shows %s: %s\n", tables_[selected_].source.c_str(),
                tables_[selected_].error.c_str());
    failure_ = tables_[selected_].source + ": " + tables_[selected_].error;
  }
}

void PrecisionPanel::Draw() {
  ImGui::Text("Precision records in %s", options_.results.c_str());
  ImGui::SameLine();
  help_marker("One matmul, its inputs stored in each format, fp32 accumulation, against the float64 product of the "
              "fp32 originals (device/precision_matmul.hpp). Relative error: ||C - Cref||_F / ||Cref||_F. Max ulps: "
              "the worst element's error in units of the format's epsilon times sum_k |A||B| (about 1: as good as "
              "the format allows). Records come from `warpnet bench precision --json`; a live run measures here.");
  ImGui::SetNextItemWidth(90);
  int cpu = int(options_.live_cpu), emu = int(options_.live_emu);
  if (ImGui::InputInt("CPU size", &cpu, 0)) options_.live_cpu = std::clamp(cpu, 16, 2048);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  if (ImGui::InputInt("emulator size", &emu, 0)) options_.live_emu = std::clamp(emu, 16, 256);
  ImGui::SameLine();
  if (ImGui::Button("Run live (CPU + emulator)")) {
    tables_.push_back(run_live(options_.live_cpu, options_.live_emu));
    selected_ = tables_.size() - 1;
  }
  if (tables_.empty()) {
    warning_text("No precision records (bench/results/*precision*.json): `warpnet bench precision --json FILE` "
                 "writes one, or run it live above.");
    return;
  }
  ImGui::BeginChild("tables", ImVec2(260, 0), true);
  for (size_t i = 0; i < tables_.size(); ++i) {
    const PrecisionTable& t = tables_[i];
    ImGui::PushID(int(i));
    if (ImGui::Selectable(t.source.c_str(), i == selected_)) selected_ = i;
    ImGui::PopID();
    ImGui::TextDisabled("  %s", t.has_gpu ? "GPU" : "no GPU part");
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("table", ImVec2(0, 0), true);
  draw_table(tables_[selected_]);
  ImGui::EndChild();
}

void PrecisionPanel::draw_table(const PrecisionTable& t) {
  ImGui::Text("%s: %s", t.source.c_str(), t.label.c_str());
  if (t.has_gpu) ImGui::Text("GPU: %s", t.gpu.c_str());
  else warning_text(t.gpu);
  if (!t.error.empty()) warning_text(t.error);
  if (t.rows.empty()) return;

  // Error bars on a log scale from 1e-9 to 1; time bars on a log scale over the table's times.
  double fastest = std::numeric_limits<double>::infinity(), slowest = 0;
  for (const auto& r : t.rows)
    if (std::isfinite(r.ms) && r.ms > 0) fastest = std::min(fastest, r.ms), slowest = std::max(slowest, r.ms);
  const double low = std::log10(fastest) - 0.3, span = std::max(0.5, std::log10(slowest) - low);
  ImGui::TextUnformatted("Bars: relative error (log scale, 1e-9 .. 1) and time (log scale over this table)");
  if (!ImGui::BeginTable("rows", 9,
                         ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                             ImGuiTableFlags_SizingFixedFit))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* name : {"precision", "where", "kernel", "M x N x K", "A+B bytes", "max ulps", "TFLOP/s"})
    ImGui::TableSetupColumn(name);
  ImGui::TableSetupColumn("relative error", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("ms", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const auto& r : t.rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.precision.c_str());
    if (!r.scaling.empty() && r.scaling != "none" && ImGui::IsItemHovered()) ImGui::SetTooltip("scaling: %s", r.scaling.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.backend.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.kernel.c_str());
    if (!r.note.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.note.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%lldx%lldx%lld", (long long)r.M, (long long)r.N, (long long)r.K);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(format_bytes(r.input_bytes).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(figure(r.max_ulps, "%.3f").c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(figure(r.tflops, "%.3g").c_str());
    ImGui::TableNextColumn();
    if (!r.ok) {
      warning_text("failed: " + r.note);
    } else {
      const double e = r.rel_frobenius;
      const float f = std::isfinite(e) && e > 0 ? float((std::log10(e) + 9) / 9) : 0;
      bar(std::max(0.01f, f), layout::kPrecisionError, figure(e, "%.2e"));
    }
    ImGui::TableNextColumn();
    if (std::isfinite(r.ms) && r.ms > 0)
      bar(float((std::log10(r.ms) - low) / span), layout::kPrecisionTime, figure(r.ms, "%.3f"));
  }
  ImGui::EndTable();
}

}  // namespace warpnet::viz
