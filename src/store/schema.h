#pragma once

#include "base/status.h"
#include "store/sqlite.h"

namespace stagegate::store {

/// The schema version this build writes. Stores are migrated forward on open; a store written by
/// a newer build is refused rather than misread.
int CurrentSchemaVersion();

/// Applies, each in its own transaction, every migration above the store's `PRAGMA user_version`
/// up to `target` (default: the current version). The version is read inside each transaction
/// (BEGIN IMMEDIATE), so processes opening one new store at once migrate it once: the others
/// wait for the write lock (the connection's busy timeout) and find the work done.
Status Migrate(Database& db, int target = -1);

/// Refuses a store written by a newer build (its schema version above CurrentSchemaVersion()).
Status CheckSupported(Database& db);

/// The store's `PRAGMA user_version`.
Result<int> SchemaVersion(Database& db);

}  // namespace stagegate::store
