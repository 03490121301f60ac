#include "simt/symbols.hpp"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.hpp"

// A TLS variable whose address and symbol value together locate this thread's
// TLS block: in an executable a TLS symbol's value is its offset in the block,
// so the block begins at &anchor - value(anchor).
extern "C" {
thread_local char warpnet_simt_tls_anchor;
}

namespace warpnet::simt {
namespace {

struct Function {
  uintptr_t begin, size;  // link-time address
  std::string mangled;
  int file = -1;  // the object file of a local (internal-linkage) symbol, else -1
};

// A variable of the image (STT_OBJECT): a __device__ variable, a table.
struct Variable {
  uintptr_t begin, size;  // link-time address
  std::string mangled;
};

struct Symbols {
  uintptr_t load_bias = 0;
  size_t tls_bytes = 0;
  uintptr_t anchor_value = 0;
  bool have_anchor = false;
  std::vector<std::pair<uintptr_t, uintptr_t>> image;  // runtime [begin, end) of each loaded segment
  std::vector<Function> functions;  // sorted by begin
  std::vector<Variable> variables;  // sorted by begin
  // Mangled name -> TLS local static, and -> TLS offset of a local's guard, each
  // with its object file as in Function: a kernel in an anonymous namespace
  // included by several files has one copy of its statics per file, all under
  // one name, and only its own file's copy is its shared memory.
  struct Local {
    std::string mangled;
    SharedVariable var;
    int file;
  };
  struct Guard {
    std::string mangled;
    size_t offset;
    int file;
  };
  std::vector<Local> locals;
  std::vector<Guard> guards;
};

// Whether a local static of file `file` can belong to function f.
bool same_file(const Function& f, int file) { return f.file < 0 || file < 0 || f.file == file; }

std::string demangle(const std::string& mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !text) return mangled;
  std::string out(text);
  std::free(text);
  return out;
}

// "void sgemm<16>(float const*, int)" -> "sgemm<16>": drop the parameter list,
// the return type and the anonymous namespace that test wrappers add.
std::string short_name(std::string name) {
  const std::string anon = "(anonymous namespace)::";
  for (size_t at; (at = name.find(anon)) != std::string::npos;) name.erase(at, anon.size());
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (depth == 0 && c == ' ') start = i + 1;
    if (depth == 0 && c == '(') return name.substr(start, i - start);
  }
  return name.substr(start);
}

void read_program_headers(Symbols& s) {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& syms = *static_cast<Symbols*>(data);
        syms.load_bias = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_TLS) syms.tls_bytes = ph.p_memsz;
          if (ph.p_type == PT_LOAD) syms.image.emplace_back(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        return 1;  // the first object is the executable itself
      },
      &s);
}

void read_symbol_table(Symbols& s) {
  const int fd = open("/proc/self/exe", O_RDONLY);
  if (fd < 0) return;
  struct stat st {};
  fstat(fd, &st);
  void* map = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return;
  const auto* file = static_cast<const char*>(map);
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(file);
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(file + ehdr->e_shoff);
  for (int i = 0; i < ehdr->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_SYMTAB) continue;
    const char* strings = file + sections[sections[i].sh_link].sh_offset;
    const auto* sym = reinterpret_cast<const Elf64_Sym*>(file + sections[i].sh_offset);
    const size_t count = sections[i].sh_size / sizeof(Elf64_Sym);
    int objects = 0, object = -1;  // local symbols follow an STT_FILE symbol naming their object file
    for (size_t k = 0; k < count; ++k) {
      const int type = ELF64_ST_TYPE(sym[k].st_info);
      const char* name = strings + sym[k].st_name;
      if (type == STT_FILE) object = objects++;
      const int group = ELF64_ST_BIND(sym[k].st_info) == STB_LOCAL ? object : -1;
      if (type == STT_FUNC && sym[k].st_value != 0) {
        s.functions.push_back({sym[k].st_value, sym[k].st_size, name, group});
      } else if (type == STT_OBJECT && sym[k].st_value != 0 && sym[k].st_size != 0) {
        s.variables.push_back({sym[k].st_value, sym[k].st_size, name});
      } else if (type == STT_TLS) {
        if (std::strcmp(name, "warpnet_simt_tls_anchor") == 0) {
          s.anchor_value = sym[k].st_value;
          s.have_anchor = true;
        } else if (std::strncmp(name, "_ZZ", 3) == 0) {
          // A function-local thread_local: how __shared__ expands under the emulator.
          const std::string full = demangle(name);
          const size_t scope = full.rfind("::");
          SharedVariable var{scope == std::string::npos ? full : full.substr(scope + 2), sym[k].st_value,
                              sym[k].st_size};
          s.locals.push_back({name, var, group});
        } else if (std::strncmp(name, "_ZGVZ", 5) == 0) {
          // The guard of a function-local thread_local with dynamic initialization
          // (a __shared__ array of a class type): _ZGV + the variable's name minus _Z.
          s.guards.push_back({name, sym[k].st_value, group});
        }
      }
    }
  }
  munmap(map, size_t(st.st_size));
  std::sort(s.functions.begin(), s.functions.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
  std::sort(s.variables.begin(), s.variables.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
}

const Symbols& symbols() {
  static const Symbols s = [] {
    Symbols out;
    read_program_headers(out);
    read_symbol_table(out);
    return out;
  }();
  return s;
}

const Function* function_at(uintptr_t runtime_address) {
  const Symbols& s = symbols();
  const uintptr_t address = runtime_address - s.load_bias;
  auto it = std::upper_bound(s.functions.begin(), s.functions.end(), address,
                             [](uintptr_t a, const Function& f) { return a < f.begin; });
  if (it == s.functions.begin()) return nullptr;
  --it;
  return address < it->begin + std::max<uintptr_t>(it->size, 1) ? &*it : nullptr;
}

// One frame of addr2line's output, "file:line", cleaned: no discriminator,
// empty when unknown, the repository-relative path where it has one.
std::string clean_frame(std::string line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  if (const size_t paren = line.find(" (discriminator"); paren != std::string::npos) line.resize(paren);
  if (line.empty() || line[0] == '?' || line.find(":?") != std::string::npos || line.ends_with(":0")) return "";
  for (const char* root : {"/kernels/", "/src/simt/"})
    if (const size_t at = line.find(root); at != std::string::npos) return line.substr(at + 1);
  return line;
}

// The emulator's PTX wrappers and kernels/common's helpers are inlined into
// the kernels that call them: their lines say how, not where.
bool is_helper(const std::string& frame) {
  return frame.starts_with("src/simt/") || frame.starts_with("kernels/common/");
}

// The source line of an instruction: the innermost frame of the inline
// chain (addr2line -i) that is not a helper — the kernel's own line, where
// a learner looks — with the helper's line after it
// ("kernels/matmul/08_double_buffered.cu:126, in kernels/common/float4_rows.hpp:33"). addr2line is only run to word an error message
// or a trace, never on a hot path.
std::string source_line(uintptr_t link_address) {
  static std::mutex mutex;
  static std::map<uintptr_t, std::string> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(link_address); it != cache.end()) return it->second;
  std::vector<std::string> frames;  // innermost first
  char command[128];
  std::snprintf(command, sizeof command, "addr2line -i -e /proc/%d/exe 0x%lx 2>/dev/null", int(getpid()),
                (unsigned long)link_address);
  if (FILE* pipe = popen(command, "r")) {
    char buffer[1024];
    while (std::fgets(buffer, sizeof buffer, pipe)) frames.push_back(clean_frame(buffer));
    pclose(pipe);
  }
  std::string line = frames.empty() ? "" : frames.front();
  if (!line.empty() && is_helper(line))
    for (size_t i = 1; i < frames.size(); ++i)
      if (!frames[i].empty() && !is_helper(frames[i])) {
        line = cat(frames[i], ", in ", frames.front());
        break;
      }
  return cache[link_address] = line;
}

}  // namespace

std::string function_name(const void* address) {
  if (const Function* f = function_at(reinterpret_cast<uintptr_t>(address))) return short_name(demangle(f->mangled));
  return cat("kernel@", address);
}

std::vector<SharedVariable> kernel_shared_variables(const void* kernel) {
  const Function* f = function_at(reinterpret_cast<uintptr_t>(kernel));
  if (!f) return {};
  // The local statics of function _Z<encoding> are named _ZZ<encoding>E<name>;
  // those of an extern "C" function f are _ZZ1fE<name>.
  const std::string prefix = f->mangled.starts_with("_Z") ? "_ZZ" + f->mangled.substr(2) + "E"
                                                           : cat("_ZZ", f->mangled.size(), f->mangled, "E");
  std::vector<SharedVariable> out;
  for (const auto& local : symbols().locals)
    if (local.mangled.starts_with(prefix) && same_file(*f, local.file)) out.push_back(local.var);
  return out;
}

std::vector<size_t> kernel_guard_variables(const void* kernel) {
  const Function* f = function_at(reinterpret_cast<uintptr_t>(kernel));
  if (!f) return {};
  const std::string prefix = f->mangled.starts_with("_Z") ? "_ZGVZ" + f->mangled.substr(2) + "E"
                                                           : cat("_ZGVZ", f->mangled.size(), f->mangled, "E");
  std::vector<size_t> out;
  for (const auto& guard : symbols().guards)
    if (guard.mangled.starts_with(prefix) && same_file(*f, guard.file)) out.push_back(guard.offset);
  return out;
}

TlsBlock this_thread_tls() {
  const Symbols& s = symbols();
  if (!s.have_anchor) return {nullptr, 0};  // stripped executable: TLS addresses cannot be told apart
  return {&warpnet_simt_tls_anchor - s.anchor_value, s.tls_bytes};
}

bool in_program_image(uintptr_t address) {
  for (const auto& [begin, end] : symbols().image)
    if (address >= begin && address < end) return true;
  return false;
}

std::string describe_variable(uintptr_t address) {
  const Symbols& s = symbols();
  const uintptr_t link = address - s.load_bias;
  auto it = std::upper_bound(s.variables.begin(), s.variables.end(), link,
                             [](uintptr_t a, const Variable& v) { return a < v.begin; });
  if (it != s.variables.begin() && link < std::prev(it)->begin + std::prev(it)->size) {
    const Variable& v = *std::prev(it);
    return cat("byte ", link - v.begin, " of `", short_name(demangle(v.mangled)), "` (a ", v.size,
               "-byte __device__ variable)");
  }
  return "a __device__ variable";
}

std::string describe_code(const void* pc) {
  if (!pc) return "an unknown instruction";
  const uintptr_t runtime = reinterpret_cast<uintptr_t>(pc);
  // A return address points after the call; one byte back is inside it.
  const uintptr_t link = runtime - symbols().load_bias - 1;
  const Function* f = function_at(runtime - 1);
  const std::string function = f ? short_name(demangle(f->mangled)) : "";
  if (const std::string line = source_line(link); !line.empty())
    return function.empty() ? line : cat(line, " (", function, ")");
  if (f) return cat(function, "+0x", std::hex, link - f->begin);
  return cat("code@", pc);
}

}  // namespace warpnet::simt
