#include "common/version.h"

#include "absl/strings/str_cat.h"

namespace qkov {

const char* CodeVersion() { return QKOV_CODE_VERSION; }

std::string CompilerVersion() {
#if defined(__clang__)
  return absl::StrCat("clang ", __clang_major__, ".", __clang_minor__, ".",
                      __clang_patchlevel__);
#elif defined(__GNUC__)
  return absl::StrCat("gcc ", __GNUC__, ".", __GNUC_MINOR__, ".",
                      __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

}  // namespace qkov
