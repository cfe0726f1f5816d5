// Helpers shared by the libFuzzer targets in this folder (README.md there):
// a private scratch folder for readers that take a path, and the check that
// turns a broken property into a crash libFuzzer records.
#ifndef TESTS_FUZZ_FUZZ_SUPPORT_H_
#define TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace qkov::fuzz {

// A folder of this process's own under $TMPDIR (or /tmp), made once.
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                       "/qkov-fuzz-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    return tmpl;
  }();
  return dir;
}

// Writes `bytes` to ScratchDir()/name and returns the path.
inline std::string WriteScratch(const std::string& name,
                                absl::string_view bytes) {
  const std::string path = ScratchDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();
  return path;
}

// An input of several files: the parts between lines "--8<--" (at most
// `max_parts`; the last takes the rest). Seeds stay readable by hand.
inline std::vector<std::string> SplitInput(absl::string_view data,
                                           int max_parts) {
  static constexpr absl::string_view kCut = "\n--8<--\n";
  std::vector<std::string> parts;
  while (static_cast<int>(parts.size()) + 1 < max_parts) {
    const size_t at = data.find(kCut);
    if (at == absl::string_view::npos) break;
    parts.emplace_back(data.substr(0, at));
    data.remove_prefix(at + kCut.size());
  }
  parts.emplace_back(data);
  parts.resize(static_cast<size_t>(max_parts));
  return parts;
}

// The option byte at `i` of `data` (0 past its end).
inline int OptionByte(absl::string_view data, size_t i) {
  return i < data.size() ? static_cast<unsigned char>(data[i]) : 0;
}

// A broken property: prints what broke and aborts, so libFuzzer saves the
// input as a crash.
#define QKOV_FUZZ_CHECK(cond, what)                            \
  do {                                                         \
    if (!(cond)) {                                             \
      std::fprintf(stderr, "property broken: %s: %s\n", #cond, \
                   std::string(what).c_str());                 \
      std::abort();                                            \
    }                                                          \
  } while (0)

}  // namespace qkov::fuzz

#endif  // TESTS_FUZZ_FUZZ_SUPPORT_H_
