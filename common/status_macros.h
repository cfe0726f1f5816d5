// RETURN_IF_ERROR / ASSIGN_OR_RETURN: Debian's Abseil (20220623) ships no
// status macros, so we keep these two.
#ifndef QKOV_COMMON_STATUS_MACROS_H_
#define QKOV_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define QKOV_CONCAT_INNER_(a, b) a##b
#define QKOV_CONCAT_(a, b) QKOV_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                    \
  do {                                           \
    ::absl::Status qkov_status_ = (expr);        \
    if (!qkov_status_.ok()) return qkov_status_; \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(QKOV_CONCAT_(qkov_statusor_, __LINE__), lhs, expr)

#define ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                           \
  if (!statusor.ok()) return statusor.status();     \
  lhs = std::move(statusor).value()

#endif  // QKOV_COMMON_STATUS_MACROS_H_
