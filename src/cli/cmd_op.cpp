// warpnet op: run one CPU op on .npy inputs and write its output and, given
// the output's gradient, the inputs' gradients — for checking warpnet against
// NumPy or PyTorch one op at a time.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "core/npy.hpp"
#include "cpu/ops.hpp"

namespace warpnet::cli {

namespace {

struct OpArgs {
  std::string name;
  std::string x, w, b, labels;
  std::string out, grad_out, grad_x, grad_w, grad_b;
  int stride = 1, pad = 0, dilation = 1, kernel = 2;
  bool trans_a = false, trans_b = false;
};

// "y.npy" → "y.grad_x.npy": where a gradient goes when no path is given.
std::string beside(const std::string& out, const std::string& what) {
  std::string stem = out.ends_with(".npy") ? out.substr(0, out.size() - 4) : out;
  return stem + "." + what + ".npy";
}

Tensor need(const std::string& path, const char* flag, const std::string& op) {
  WN_CHECK(!path.empty(), "op ", op, ": ", flag, " is required");
  return read_npy(path);
}

// softmax-ce's labels as int32 class indices: stored as int32 or int64 (as
// PyTorch writes them); a float file or an int64 past int32 is refused, not
// cut (the op checks each against the class count).
Tensor class_labels(const std::string& path, const std::string& op) {
  Tensor labels = need(path, "--labels", op);
  WN_CHECK(labels.dtype() == DType::i32 || labels.dtype() == DType::i64, path, ": labels are ", labels.describe(),
           "; op ", op, " takes int32 or int64 class indices");
  for (int64_t i = 0; i < labels.numel(); ++i) {
    const double v = labels.item(i);
    WN_CHECK(v >= 0 && v <= std::numeric_limits<int32_t>::max(), path, ": label ", int64_t(v), " at row ", i,
             " is not a class index", v == -100 ? " (PyTorch's ignore_index: every row counts here)" : "");
  }
  return labels.to(DType::i32);
}

// The outputs of one run, written at the end, each with the option naming it.
struct Output {
  std::string option, path;
  Tensor tensor;
};
struct Results {
  std::vector<Output> files;
  void add(const char* option, const std::string& path, const Tensor& t) { files.push_back({option, path, t}); }
};

// Two outputs on one file: the second write replaced the first (`--out y.npy
// --grad-x y.npy` kept only the gradient), so the run is refused before either.
// An output on an input's file (`--grad-x x.npy`) would replace the data it
// was computed from: a slip, refused.
void refuse_shared_outputs(const std::vector<Output>& files, const OpArgs& a) {
  const std::pair<const char*, const std::string*> inputs[] = {
      {"--x", &a.x}, {"--w", &a.w}, {"--b", &a.b}, {"--labels", &a.labels}, {"--grad-out", &a.grad_out}};
  for (size_t i = 0; i < files.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      WN_CHECK(!names_same_file(files[i].path, files[j].path), "op: ", files[j].option, " and ", files[i].option,
               " name the same file, ", files[i].path, "; name one file each");
    for (const auto& [option, path] : inputs)
      WN_CHECK(path->empty() || !names_same_file(files[i].path, *path), "op: ", files[i].option, " names ", option, "'s file, ",
               *path, ": the output would replace its input; name another file");
  }
}

using OpFn = std::function<void(const OpArgs&, Results&)>;

// An op: the options it reads beyond --x, --out, --grad-out and --grad-x
// (another one given is said to do nothing rather than dropped in silence),
// and how it runs.
struct Op {
  std::vector<std::string> options;
  OpFn run;
};

// Runs an elementwise activation: forward from x, backward from x (or y).
Op activation(std::function<Tensor(const Tensor&)> forward,
              std::function<Tensor(const Tensor& x, const Tensor& y, const Tensor& dy)> backward) {
  return {{}, [forward, backward](const OpArgs& a, Results& r) {
            Tensor x = need(a.x, "--x", a.name);
            Tensor y = forward(x);
            r.add("--out", a.out, y);
            if (!a.grad_out.empty()) r.add("--grad-x", a.grad_x, backward(x, y, read_npy(a.grad_out)));
          }};
}

const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> table{
      {"matmul",
       {{"--w", "--trans-a", "--trans-b", "--grad-w"}, [](const OpArgs& a, Results& r) {
         Tensor x = need(a.x, "--x", a.name), w = need(a.w, "--w", a.name);
         r.add("--out", a.out, cpu::matmul(x, w, a.trans_a, a.trans_b));
         if (a.grad_out.empty()) return;
         cpu::MatmulGrads g = cpu::matmul_backward(x, w, read_npy(a.grad_out), a.trans_a, a.trans_b);
         r.add("--grad-x", a.grad_x, g.da);
         r.add("--grad-w", a.grad_w, g.db);
       }}},
      {"conv2d",
       {{"--w", "--b", "--stride", "--pad", "--dilation", "--grad-w", "--grad-b"}, [](const OpArgs& a, Results& r) {
         Tensor x = need(a.x, "--x", a.name), w = need(a.w, "--w", a.name);
         Tensor b = a.b.empty() ? Tensor() : read_npy(a.b);
         const cpu::Conv2dParams p{a.stride, a.pad, a.dilation};
         r.add("--out", a.out, cpu::conv2d(x, w, b, p));
         if (a.grad_out.empty()) return;
         cpu::Conv2dGrads g = cpu::conv2d_backward(x, w, read_npy(a.grad_out), p, b.defined());
         r.add("--grad-x", a.grad_x, g.dx);
         r.add("--grad-w", a.grad_w, g.dw);
         if (b.defined()) r.add("--grad-b", a.grad_b, g.db);
       }}},
      {"maxpool2d",
       {{"--kernel", "--stride", "--pad"}, [](const OpArgs& a, Results& r) {
         Tensor x = need(a.x, "--x", a.name);
         cpu::MaxPoolResult y = cpu::max_pool2d(x, {a.kernel, a.stride, a.pad});
         r.add("--out", a.out, y.y);
         if (!a.grad_out.empty()) r.add("--grad-x", a.grad_x, cpu::max_pool2d_backward(read_npy(a.grad_out), y.argmax, x.shape()));
       }}},
      {"avgpool2d",
       {{"--kernel", "--stride", "--pad"}, [](const OpArgs& a, Results& r) {
         Tensor x = need(a.x, "--x", a.name);
         const cpu::Pool2dParams p{a.kernel, a.stride, a.pad};
         r.add("--out", a.out, cpu::avg_pool2d(x, p));
         if (!a.grad_out.empty()) r.add("--grad-x", a.grad_x, cpu::avg_pool2d_backward(read_npy(a.grad_out), x.shape(), p));
       }}},
      {"relu", activation([](const Tensor& x) { return cpu::relu(x); },
                          [](const Tensor& x, const Tensor&, const Tensor& dy) { return cpu::relu_backward(x, dy); })},
      {"gelu", activation([](const Tensor& x) { return cpu::gelu(x); },
                          [](const Tensor& x, const Tensor&, const Tensor& dy) { return cpu::gelu_backward(x, dy); })},
      {"sigmoid",
       activation([](const Tensor& x) { return cpu::sigmoid(x); },
                  [](const Tensor&, const Tensor& y, const Tensor& dy) { return cpu::sigmoid_backward(y, dy); })},
      {"tanh", activation([](const Tensor& x) { return cpu::tanh(x); },
                          [](const Tensor&, const Tensor& y, const Tensor& dy) { return cpu::tanh_backward(y, dy); })},
      {"softmax-ce",
       {{"--labels"}, [](const OpArgs& a, Results& r) {
         Tensor logits = need(a.x, "--x", a.name);
         // The loss is a mean over the rows: of none it is 0/0 (PyTorch's NaN), not a number to write.
         WN_CHECK(logits.rank() != 2 || logits.dim(0) > 0, a.x, ": logits are ", logits.shape(),
                  ": no rows, so no mean loss");
         const Tensor labels = class_labels(a.labels, a.name);
         cpu::SoftmaxCrossEntropy s = cpu::softmax_cross_entropy(logits, labels);
         r.add("--out", a.out, Tensor::full({}, s.loss, logits.dtype()));
         if (a.grad_out.empty()) return;
         const Tensor grad_loss = read_npy(a.grad_out);
         WN_CHECK(grad_loss.numel() == 1, a.grad_out, ": the gradient of softmax-ce's loss, a scalar, is one number; "
                  "got ", grad_loss.describe());
         const double dloss = grad_loss.item(0);
         r.add("--grad-x", a.grad_x, cpu::softmax_cross_entropy_backward(s.probs, labels, dloss));
       }}},
  };
  return table;
}

}  // namespace

void add_op_command(CLI::App& app) {
  auto a = std::make_shared<OpArgs>();
  std::vector<std::string> names;
  for (const auto& [name, op] : ops()) names.push_back(name);
  CLI::App* cmd = app.add_subcommand("op", "Run one CPU op on .npy inputs; write its output and gradients");
  cmd->footer(
      "As PyTorch's ops, with two choices to know when comparing: gelu is the tanh form (PyTorch's "
      "gelu(x, approximate='tanh'), not its default x*Phi(x)), and avgpool2d counts padding (count_include_pad=True). "
      "Denormals are kept here; training flushes them to zero (src/cpu/parallel.cpp).");
  // The registry's names for the same ops (train --kernels, trace, info --kernels) are taken too.
  const std::map<std::string, std::string> registry_names{
      {"max_pool2d", "maxpool2d"}, {"avg_pool2d", "avgpool2d"}, {"softmax_cross_entropy", "softmax-ce"}};
  cmd->add_option("name", a->name, "The op")
      ->required()
      ->transform(CLI::Transformer(registry_names))
      ->check(CLI::IsMember(names));
  cmd->add_option("--x", a->x, "Input (matmul: A; conv2d: (N,C,H,W); softmax-ce: logits (N,C))")
      ->check(CLI::ExistingFile);
  cmd->add_option("--w", a->w, "Second operand (matmul: B; conv2d: weights (K,C,R,S))")->check(CLI::ExistingFile);
  cmd->add_option("--b", a->b, "conv2d bias (K)")->check(CLI::ExistingFile);
  cmd->add_option("--labels", a->labels, "softmax-ce labels (N), int32 or int64 class indices (every row counts: no ignore_index)")->check(CLI::ExistingFile);
  cmd->add_option("--out", a->out, "Where to write the output")->required()->check(kOutputPath);
  cmd->add_option("--grad-out", a->grad_out, "Gradient of the output; when given, input gradients are written")
      ->check(CLI::ExistingFile);
  cmd->add_option("--grad-x", a->grad_x, "Where dL/dx goes (default: <out>.grad_x.npy)")->check(kOutputPath);
  cmd->add_option("--grad-w", a->grad_w, "Where dL/dw goes (default: <out>.grad_w.npy)")->check(kOutputPath);
  cmd->add_option("--grad-b", a->grad_b, "Where dL/db goes (default: <out>.grad_b.npy)")->check(kOutputPath);
  cmd->add_option("--stride", a->stride, "conv2d/pooling stride (conv2d: 1; pooling: --kernel, as PyTorch's)")
      ->check(whole_in_range(1, kIntMax));
  cmd->add_option("--pad", a->pad, "padding: zeros for conv2d and avgpool2d (counted in its average, as PyTorch's default); maxpool2d leaves padded cells out of its windows")->check(whole_in_range(0, kIntMax))->capture_default_str();
  cmd->add_option("--dilation", a->dilation, "conv2d dilation")->check(whole_in_range(1, kIntMax))->capture_default_str();
  cmd->add_option("--kernel", a->kernel, "pooling window")->check(whole_in_range(1, kIntMax))->capture_default_str();
  cmd->add_flag("--trans-a", a->trans_a, "matmul: use Aᵀ");
  cmd->add_flag("--trans-b", a->trans_b, "matmul: use Bᵀ");
  cmd->callback([a, cmd] {
    const std::vector<std::string>& reads = ops().at(a->name).options;
    std::set<std::string> told;  // an option other ops read, given to this one
    for (const auto& [name, op] : ops())
      for (const std::string& option : op.options)
        if (cmd->count(option) > 0 && std::ranges::find(reads, option) == reads.end() && told.insert(option).second)
          std::fprintf(stderr, "warpnet op %s: %s ignored: %s does not take it\n", a->name.c_str(), option.c_str(),
                       a->name.c_str());
    if (a->name == "conv2d" && a->b.empty() && !a->grad_out.empty() && cmd->count("--grad-b") > 0)
      std::fprintf(stderr, "warpnet op conv2d: --grad-b ignored: there is no bias (--b) to take a gradient of\n");
    if (a->grad_out.empty())
      for (const std::string gradient : {"--grad-x", "--grad-w", "--grad-b"})
        if (cmd->count(gradient) > 0 && !told.count(gradient))
          std::fprintf(stderr, "warpnet op %s: %s ignored: gradients are written only with --grad-out\n",
                       a->name.c_str(), gradient.c_str());
    OpArgs args = *a;
    // Pooling windows side by side unless a stride is given (PyTorch's default).
    if (cmd->count("--stride") == 0 && (args.name == "maxpool2d" || args.name == "avgpool2d"))
      args.stride = args.kernel;
    if (args.grad_x.empty()) args.grad_x = beside(args.out, "grad_x");
    if (args.grad_w.empty()) args.grad_w = beside(args.out, "grad_w");
    if (args.grad_b.empty()) args.grad_b = beside(args.out, "grad_b");
    // Every output path checked before the op runs (--out; the gradients'
    // once the op says which it writes) and before the first is written:
    // a bad one fails the command with nothing computed in vain or half written.
    prepare_output_file(args.out, "op --out", kNpyFile);
    Results results;
    try {
      ops().at(args.name).run(args, results);
    } catch (const Error& e) {  // the op names its operands (x, w); say which files they came from
      std::string inputs;
      for (const auto& [option, path] : {std::pair{"--x", args.x}, {"--w", args.w}, {"--b", args.b},
                                         {"--labels", args.labels}, {"--grad-out", args.grad_out}})
        if (!path.empty()) inputs += cat(inputs.empty() ? "" : ", ", option, " ", path);
      fail("op ", args.name, " (", inputs, "): ", e.what());
    }
    refuse_shared_outputs(results.files, args);
    for (const Output& file : results.files) prepare_output_file(file.path, "op " + file.option, kNpyFile);
    for (const Output& file : results.files) {
      write_npy(file.path, file.tensor);
      std::printf("wrote %s: %s\n", file.path.c_str(), file.tensor.describe().c_str());
    }
  });
}

}  // namespace warpnet::cli
