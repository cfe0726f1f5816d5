// The code version compiled into every binary (git describe at configure
// time, "-dirty" when the tree had changes) and the compiler string: both go
// into the provenance stored with every result (docs/provenance.md).
#ifndef QKOV_COMMON_VERSION_H_
#define QKOV_COMMON_VERSION_H_

#include <string>

namespace qkov {

const char* CodeVersion();
std::string CompilerVersion();

}  // namespace qkov

#endif  // QKOV_COMMON_VERSION_H_
