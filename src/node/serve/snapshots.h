// Snapshots of genvm-node serve's whole state file (contracts, storage, balances, receipts, the
// queue), for Studio's sim_createSnapshot / sim_restoreSnapshot / sim_deleteAllSnapshots, and
// sim_clearDbTables. SQLite-specific, on their own connection to the state file.
//
// A snapshot is a consistent copy of the file (VACUUM INTO, the last commit) written beside it
// as STATE.snapshots/ID.db, synced and renamed into place before its row in the table
// serve_snapshots says it is ready; so a crash leaves no half snapshot that could be restored.
// Ids come from AUTOINCREMENT: never reused, also after delete_all. Restoring replaces every
// table's rows (and the AUTOINCREMENT counters) with the snapshot's in one write transaction,
// except the list of snapshots itself. The caller keeps the node's worker out meanwhile.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace genvm::node::serve {

// The new snapshot's id; `snapshot_limit` when `max` snapshots exist already.
Result<std::int64_t> create_snapshot(const std::string& state_path, int busy_ms, int max);
// false when no snapshot `id` exists.
Result<bool> restore_snapshot(const std::string& state_path, int busy_ms, std::int64_t id);
// How many snapshots were deleted.
Result<std::int64_t> delete_all_snapshots(const std::string& state_path, int busy_ms);
// Empties the queue's table (queue_only) or every table of the file but the snapshots' list,
// and resets their AUTOINCREMENT counters, in one write transaction.
Status clear_state(const std::string& state_path, int busy_ms, bool queue_only);

}  // namespace genvm::node::serve
