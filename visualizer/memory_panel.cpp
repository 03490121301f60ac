#include "visualizer/memory_panel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "autograd/functions.hpp"
#include "autograd/precision.hpp"
#include "autograd/tape.hpp"
#include "datasets/synthetic.hpp"
#include "device/cuda/gpu.hpp"
#include "nn/models.hpp"
#include "nn/optim.hpp"

namespace warpnet::viz {

namespace {

constexpr int64_t kClasses = 10;

MemoryTracker& tracker() { return MemoryTracker::instance(); }

// The panel's precisions: the training precisions (autograd/precision.hpp:
// fp32 and the mixed ones, emulated on the CPU and counted at each format's
// width), then f64, the CPU ops' other compute format.
const std::vector<std::string>& panel_precisions() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = ag::precision_names();
    v.push_back("f64");
    return v;
  }();
  return names;
}

// Tag colours, in MemTag order: parameter, activation, gradient, optimizer, workspace, other.
constexpr layout::Rgb kTagColours[kMemTagCount] = {
    {70, 110, 180}, {64, 178, 82}, {230, 140, 40}, {150, 90, 190}, {220, 200, 60}, {120, 120, 120}};

}  // namespace

StepMemory measure_step(const MemoryOptions& o) {
  StepMemory r;
  r.options = o;
  const auto start = std::chrono::steady_clock::now();
  try {
    // Rows as they stand before the step: the step's bytes are counted from there.
    std::map<std::string, MemRow> before;
    for (const MemRow& row : tracker().layers()) before[row.layer] = row;
    std::array<int64_t, kMemTagCount> base{};
    for (int t = 0; t < kMemTagCount; ++t) base[size_t(t)] = tracker().tag(MemTag(t)).current;
    const int64_t total_base = tracker().total().current;
    tracker().reset_peaks();
    auto sample = [&](std::string label) {
      StepMemory::Phase p{std::move(label)};
      for (int t = 0; t < kMemTagCount; ++t) p.live[size_t(t)] = tracker().tag(MemTag(t)).current - base[size_t(t)];
      p.total = tracker().total().current - total_base;
      p.total_peak = tracker().total().peak - total_base;
      r.peak = std::max(r.peak, p.total_peak);
      r.timeline.push_back(std::move(p));
      tracker().reset_peaks();  // each phase's peak is its own; layer peaks are taken from the rows below
    };
    // Layer peaks would be lost by reset_peaks(): keep the most seen per row.
    std::map<std::string, std::array<int64_t, kMemTagCount>> layer_peak;
    auto note_layers = [&] {
      for (const MemRow& row : tracker().layers()) {
        const auto b = before.find(row.layer);
        auto& peak = layer_peak[row.layer];
        for (int t = 0; t < kMemTagCount; ++t) {
          const int64_t start_bytes = b == before.end() ? 0 : b->second.by_tag[size_t(t)].current;
          peak[size_t(t)] = std::max(peak[size_t(t)], row.by_tag[size_t(t)].peak - start_bytes);
        }
      }
    };
    {
      const auto& known = panel_precisions();
      if (std::find(known.begin(), known.end(), o.precision) == known.end())
        throw Error(cat("memory panel: precision '", o.precision, "': one of fp32, tf32, bf16, fp16, fp8, f64"));
      const DType dtype = o.precision == "f64" ? DType::f64 : DType::f32;
      // The mixed precisions round what the GEMMs multiply and what the
      // activations keep, and charge those tensors at the format's width,
      // as `warpnet train --precision` does (null: fp32 and f64).
      std::unique_ptr<ag::MixedPrecision> mixed;
      if (dtype == DType::f32) mixed = std::make_unique<ag::MixedPrecision>(ag::parse_precision(o.precision));
      ag::PrecisionScope precision_scope(mixed.get());
      auto model = nn::make_model(o.model, Shape{1, 28, 28}, kClasses, 1);
      // Parameters are made in f32; in f64 they are replaced by copies charged
      // to the same layer (lesson 06 part 5 does the same), before the
      // optimizer sizes its state from them.
      if (dtype != DType::f32)
        for (nn::Parameter* p : model->parameters()) {
          MemoryScope scope(MemTag::parameter, p->name.substr(0, p->name.rfind('.')));
          p->var.value() = p->var.value().to(dtype);
        }
      auto optimizer = nn::make_optimizer(o.optimizer, model->parameters(), 1e-3);
      data::Dataset images = data::make_squares(o.batch, int(kClasses), 28, 5);  // (batch,1,28,28)
      if (dtype != DType::f32) images.inputs = images.inputs.to(dtype);
      tracker().reset_peaks();  // the f32 parameters and batch, freed, are no part of the step
      note_layers();
      sample("start");
      ag::Var loss;
      {
        ag::Tape tape;
        ag::TapeScope recording(tape);
        ag::Var h(images.inputs);
        for (const auto& layer : model->layers()) {
          // Recorded before the layer's forward, so backward (newest first) runs it just after the layer's backward.
          tape.record([&, name = layer->name()] { note_layers(), sample("bwd " + name); });
          h = (*layer)(h);
          note_layers();
          sample("fwd " + layer->name());
        }
        tape.record([&] { note_layers(), sample("bwd loss"); });
        {
          MemoryScope scope(MemTag::activation, "loss");
          loss = ag::softmax_cross_entropy(h, images.labels);
        }
        note_layers();
        sample("fwd loss");
        h = ag::Var();  // from here on only the tape holds the activations
        optimizer->zero_grad();
        tape.backward(loss);
      }
      optimizer->step();
      note_layers();
      sample("optimizer step");
      // The model's layers in order, then the loss, then anything else (the batch, under "-").
      std::vector<std::string> order;
      for (const auto& layer : model->layers()) order.push_back(layer->name());
      order.push_back("loss");
      for (const MemRow& row : tracker().layers())
        if (std::find(order.begin(), order.end(), row.layer) == order.end()) order.push_back(row.layer);
      for (const std::string& name : order) {
        const auto& peak = layer_peak[name];
        if (std::any_of(peak.begin(), peak.end(), [](int64_t b) { return b > 0; })) r.layers.push_back({name, peak});
      }
    }
  } catch (const std::exception& e) {
    r.error = e.what();
    std::fprintf(stderr, "warpnet-viz: memory: %s\n", r.error.c_str());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

MemoryPanel::MemoryPanel(MemoryOptions options) : options_(std::move(options)) {
  const auto& names = nn::model_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == options_.model) model_index_ = int(i);
  step_ = measure_step(options_);
  const device::gpu::Info gpu = device::gpu::probe();
  char text[256];
  if (gpu.usable)
    std::snprintf(text, sizeof text, "GPU %s: %.1f GiB, %.1f GiB free (when the panel opened)", gpu.name.c_str(),
                  gpu.memory_gib, gpu.memory_free_gib);
  else
    std::snprintf(text, sizeof text, "no GPU: %s", gpu.why_not.c_str());
  gpu_memory_ = text;
}

void MemoryPanel::Draw() {
  const auto& names = nn::model_names();
  ImGui::SetNextItemWidth(140);
  if (ImGui::BeginCombo("model", names[size_t(model_index_)].c_str())) {
    for (size_t i = 0; i < names.size(); ++i)
      if (ImGui::Selectable(names[i].c_str(), int(i) == model_index_)) model_index_ = int(i);
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::InputInt("batch", &options_.batch);
  options_.batch = std::clamp(options_.batch, 1, 4096);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(100);
  const char* optimizers[] = {"sgd", "adam"};
  int opt = options_.optimizer == "sgd" ? 0 : 1;
  if (ImGui::Combo("optimizer", &opt, optimizers, 2)) options_.optimizer = optimizers[opt];
  ImGui::SameLine();
  ImGui::SetNextItemWidth(80);
  if (ImGui::BeginCombo("precision", options_.precision.c_str())) {
    for (const std::string& name : panel_precisions())
      if (ImGui::Selectable(name.c_str(), name == options_.precision)) options_.precision = name;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  if (ImGui::Button("Measure one step")) {
    options_.model = names[size_t(model_index_)];
    step_ = measure_step(options_);
  }
  ImGui::SameLine();
  help_marker("Runs one training step (forward, backward, optimizer update) of the model on a batch of synthetic "
              "28x28 images on the CPU, with the memory tracker watching every allocation's tag and layer. "
              "Lesson 06 explains each figure and checks it against its formula. Precision: fp32 or f64, the "
              "formats the CPU ops compute in, or a mixed precision of `warpnet train --precision` (tf32, bf16, "
              "fp16, fp8: emulated on the CPU, each rounded tensor counted at its format's width; lesson 07).");
  ImGui::TextUnformatted(gpu_memory_.c_str());
  if (!step_.error.empty()) {
    warning_text(step_.error);
    return;
  }
  const StepMemory& s = step_;
  ImGui::Text("%s, batch %d, %s, %s, CPU: peak %s alive at once during the step (measured in %.2f s)",
              s.options.model.c_str(), s.options.batch, s.options.optimizer.c_str(), s.options.precision.c_str(),
              format_bytes(s.peak).c_str(), s.seconds);
  // The key.
  for (int t = 0; t < kMemTagCount; ++t) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + 12, p.y + 14), colour(kTagColours[t]));
    ImGui::Dummy(ImVec2(14, 14));
    ImGui::SameLine();
    ImGui::TextUnformatted(std::string(name_of(MemTag(t))).c_str());
    ImGui::SameLine(0, 16);
  }
  ImGui::NewLine();

  // Per layer: the most bytes of each tag alive at once, as a table with stacked bars.
  ImGui::Separator();
  ImGui::TextUnformatted("Bytes by tag per layer (the most alive at once during the step)");
  int64_t widest = 1;
  for (const auto& l : s.layers) {
    int64_t sum = 0;
    for (int64_t b : l.peak) sum += b;
    widest = std::max(widest, sum);
  }
  const float table_height = std::min(ImGui::GetContentRegionAvail().y * 0.55f, (s.layers.size() + 2) * 21.0f);
  if (ImGui::BeginTable("layers", kMemTagCount + 2,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                            ImGuiTableFlags_SizingFixedFit,
                        ImVec2(0, table_height))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("layer");
    for (int t = 0; t < kMemTagCount; ++t) ImGui::TableSetupColumn(std::string(name_of(MemTag(t))).c_str());
    ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    for (const auto& l : s.layers) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(l.name.c_str());
      for (int t = 0; t < kMemTagCount; ++t) {
        ImGui::TableNextColumn();
        if (l.peak[size_t(t)]) ImGui::TextUnformatted(format_bytes(l.peak[size_t(t)]).c_str());
      }
      ImGui::TableNextColumn();
      const float w = ImGui::GetContentRegionAvail().x;
      ImVec2 p = ImGui::GetCursorScreenPos();
      for (int t = 0; t < kMemTagCount; ++t) {
        const float dx = w * float(l.peak[size_t(t)]) / float(widest);
        ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + dx, p.y + 13), colour(kTagColours[t]));
        p.x += dx;
      }
      ImGui::Dummy(ImVec2(w, 13));
    }
    ImGui::EndTable();
  }

  // The timeline: live bytes by tag after each phase, a stacked column each;
  // a tick marks the most alive during the phase.
  ImGui::Separator();
  ImGui::TextUnformatted("Allocation timeline of the step: live bytes after each phase (tick: the phase's peak)");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float height = std::max(60.0f, avail.y - 70), bottom_label = 60;
  const float col = std::max(6.0f, std::min(40.0f, avail.x / float(std::max<size_t>(1, s.timeline.size()))));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float scale = height / float(std::max<int64_t>(1, s.peak));
  for (size_t i = 0; i < s.timeline.size(); ++i) {
    const auto& p = s.timeline[i];
    float y = origin.y + height;
    const float x = origin.x + i * col;
    for (int t = 0; t < kMemTagCount; ++t) {
      const float dy = float(std::max<int64_t>(0, p.live[size_t(t)])) * scale;
      draw->AddRectFilled(ImVec2(x, y - dy), ImVec2(x + col - 2, y), colour(kTagColours[t]));
      y -= dy;
    }
    const float peak_y = origin.y + height - float(p.total_peak) * scale;
    if (i > 0) draw->AddLine(ImVec2(x, peak_y), ImVec2(x + col - 2, peak_y), IM_COL32(240, 240, 240, 255), 2);
    if (ImGui::IsMouseHoveringRect(ImVec2(x, origin.y), ImVec2(x + col, origin.y + height))) {
      ImGui::BeginTooltip();
      ImGui::Text("after %s: %s live, at most %s during it", p.label.c_str(), format_bytes(p.total).c_str(),
                  format_bytes(p.total_peak).c_str());
      for (int t = 0; t < kMemTagCount; ++t)
        if (p.live[size_t(t)])
          ImGui::Text("  %s %s", std::string(name_of(MemTag(t))).c_str(), format_bytes(p.live[size_t(t)]).c_str());
      ImGui::EndTooltip();
    }
    // Labels, every few columns when they would crowd.
    const size_t every = size_t(std::ceil(44.0f / col));
    if (i % every == 0) {
      ImGui::PushClipRect(ImVec2(x, origin.y + height), ImVec2(x + col * every, origin.y + height + bottom_label), true);
      const size_t space = p.label.find(' ');
      const std::string first = p.label.substr(0, space), rest = space == std::string::npos ? "" : p.label.substr(space + 1);
      draw->AddText(ImVec2(x, origin.y + height + 4), IM_COL32(190, 190, 190, 255), first.c_str());
      draw->AddText(ImVec2(x, origin.y + height + 18), IM_COL32(190, 190, 190, 255), rest.c_str());
      ImGui::PopClipRect();
    }
  }
  ImGui::Dummy(ImVec2(avail.x, height + bottom_label));
}

}  // namespace warpnet::viz
