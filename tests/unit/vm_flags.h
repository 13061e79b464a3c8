// Test helper: the kernel's flags for the mapping that holds an address, as
// /proc/self/smaps gives them ("VmFlags: rd wr mr mw me ac hg ..."; "hg": advised as huge
// pages), or "" when no mapping holds it.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace graphfuse::testing {

inline std::string vm_flags_at(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

inline bool advised_huge(const void* p) { return vm_flags_at(p).find(" hg") != std::string::npos; }

}  // namespace graphfuse::testing
