#include "plugin_build_note.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace regiontrace::detail {
namespace {

constexpr const char* kNoteSection = ".note.regiontrace";
constexpr const char* kNoteName = "regiontrace";
constexpr std::uint64_t kMaxSectionBytes = 64u << 20;  // .dynstr of a large library fits

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

bool read_at(std::ifstream& in, std::uint64_t offset, void* out, std::size_t n) {
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in.gcount()) == n;
}

bool read_bytes(std::ifstream& in, const Section& s, std::string* out) {
  if (s.size > kMaxSectionBytes) return false;
  out->assign(s.size, '\0');
  return read_at(in, s.offset, out->data(), out->size());
}

std::vector<Section> sections_of(std::ifstream& in, const Elf64_Ehdr& eh, std::string* error) {
  std::vector<Section> out;
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum) {
    *error = "it has no section table";
    return out;
  }
  std::vector<Elf64_Shdr> headers(eh.e_shnum);
  if (!read_at(in, eh.e_shoff, headers.data(), headers.size() * sizeof(Elf64_Shdr))) {
    *error = "its section table is cut short";
    return out;
  }
  std::string names;
  const Elf64_Shdr& strtab = headers[eh.e_shstrndx];
  if (!read_bytes(in, {"", 0, strtab.sh_offset, strtab.sh_size}, &names)) {
    *error = "its section names cannot be read";
    return out;
  }
  for (const Elf64_Shdr& h : headers) {
    Section s;
    if (h.sh_name < names.size()) s.name = names.c_str() + h.sh_name;
    s.type = h.sh_type;
    s.offset = h.sh_offset;
    s.size = h.sh_type == SHT_NOBITS ? 0 : h.sh_size;
    out.push_back(std::move(s));
  }
  return out;
}

std::uint32_t read_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof(v));
  return v;
}

// The "regiontrace" note's text, from the notes of one section.
std::optional<std::string> note_text(const std::string& bytes) {
  std::size_t at = 0;
  auto aligned = [](std::size_t n) { return (n + 3) / 4 * 4; };
  while (at + 12 <= bytes.size()) {
    const std::uint32_t name_size = read_u32(bytes, at);
    const std::uint32_t desc_size = read_u32(bytes, at + 4);
    const std::size_t name_at = at + 12;
    const std::size_t desc_at = name_at + aligned(name_size);
    if (desc_at + desc_size > bytes.size() || name_at + name_size > bytes.size()) break;
    const std::string name(bytes.data() + name_at, name_size > 0 ? name_size - 1 : 0);
    if (name == kNoteName) {
      std::string text(bytes.data() + desc_at, desc_size);
      text.resize(std::strlen(text.c_str()));
      return text;
    }
    at = desc_at + aligned(desc_size);
  }
  return std::nullopt;
}

std::optional<BuildNote> parse_note(const std::string& text) {
  BuildNote n;
  bool has_abi = false;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    // "(-1)": a stringified macro.
    if (value.size() > 2 && value.front() == '(' && value.back() == ')') {
      value = value.substr(1, value.size() - 2);
    }
    try {
      if (key == "abi") {
        n.abi_version = static_cast<std::uint32_t>(std::stoul(value));
        has_abi = true;
      } else if (key == "sdk") {
        n.sdk_version = value;
      } else if (key == "compiler") {
        n.compiler = value;
      } else if (key == "stdlib") {
        n.stdlib = value;
      } else if (key == "stdlib_kind") {
        n.stdlib_kind = std::stoi(value);
      } else if (key == "cxx11_abi") {
        n.cxx11_abi = std::stoi(value);
      }
    } catch (const std::exception&) {
      return std::nullopt;  // not a note of ours after all
    }
  }
  if (!has_abi) return std::nullopt;
  n.text = "ABI " + std::to_string(n.abi_version) + ", SDK " + n.sdk_version + ", " + n.compiler +
           ", " + n.stdlib;
  if (n.cxx11_abi >= 0) n.text += ", _GLIBCXX_USE_CXX11_ABI=" + std::to_string(n.cxx11_abi);
  return n;
}

// Whether the dynamic symbol table defines `name`.
bool defines(const std::string& dynsym, const std::string& dynstr, const char* name) {
  for (std::size_t at = 0; at + sizeof(Elf64_Sym) <= dynsym.size(); at += sizeof(Elf64_Sym)) {
    Elf64_Sym sym;
    std::memcpy(&sym, dynsym.data() + at, sizeof(sym));
    if (sym.st_shndx == SHN_UNDEF || sym.st_name >= dynstr.size()) continue;
    if (std::strcmp(dynstr.c_str() + sym.st_name, name) == 0) return true;
  }
  return false;
}

}  // namespace

FileBuildFacts read_build_facts(const std::string& path) {
  FileBuildFacts out;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    out.error = "it cannot be opened for reading";
    return out;
  }
  Elf64_Ehdr eh{};
  if (!read_at(in, 0, &eh, sizeof(eh)) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    out.error = "it is not an ELF file";
    return out;
  }
  // A 32-bit or foreign-endian file cannot be loaded here either.
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_type != ET_DYN) {
    out.error = "it is not a 64-bit little-endian ELF shared object";
    return out;
  }
  const std::vector<Section> sections = sections_of(in, eh, &out.error);
  if (!out.error.empty()) return out;
  std::string dynsym;
  std::string dynstr;
  for (const Section& s : sections) {
    if (s.name == kNoteSection) {
      std::string bytes;
      if (read_bytes(in, s, &bytes)) {
        if (std::optional<std::string> text = note_text(bytes)) out.note = parse_note(*text);
      }
    } else if (s.type == SHT_DYNSYM) {
      read_bytes(in, s, &dynsym);
    } else if (s.name == ".dynstr") {
      read_bytes(in, s, &dynstr);
    }
  }
  out.exports_build_info = defines(dynsym, dynstr, "regiontrace_plugin_build_info");
  out.exports_abi_version = defines(dynsym, dynstr, "regiontrace_plugin_abi_version");
  return out;
}

}  // namespace regiontrace::detail
