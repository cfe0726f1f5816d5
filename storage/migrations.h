// Numbered, forward-only schema migrations. Migration N takes the database
// from user_version N-1 to N in one transaction. A database newer than this
// binary is refused. The schema is documented in docs/schema.md.
#ifndef QKOV_STORAGE_MIGRATIONS_H_
#define QKOV_STORAGE_MIGRATIONS_H_

#include "absl/status/status.h"
#include "storage/database.h"

namespace qkov::storage {

// The schema version this binary writes.
int LatestSchemaVersion();

// Current PRAGMA user_version.
absl::StatusOr<int> SchemaVersion(Database* db);

// Applies every migration above the current version. FAILED_PRECONDITION if
// the file's version is newer than LatestSchemaVersion().
absl::Status Migrate(Database* db);

// Migrate, stopping at `target` (<= LatestSchemaVersion()): how tests build
// a database as an older binary left it.
absl::Status MigrateTo(Database* db, int target);

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_MIGRATIONS_H_
