//! The store's tables and their version (`PRAGMA user_version`).

use crate::StoreError;
use rusqlite::Connection;

/// Bumped when a table changes; a store of a newer version is refused, not rewritten.
pub const VERSION: i64 = 1;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS device_raw (
    t_ms INTEGER NOT NULL, gpu INTEGER NOT NULL,
    mem_used INTEGER, mem_total INTEGER, util REAL, temp REAL, power REAL,
    PRIMARY KEY (gpu, t_ms)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS device_1s (
    t_ms INTEGER NOT NULL, gpu INTEGER NOT NULL,
    mem_used INTEGER, mem_total INTEGER, util REAL, temp REAL, power REAL,
    PRIMARY KEY (gpu, t_ms)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS device_1m (
    t_ms INTEGER NOT NULL, gpu INTEGER NOT NULL,
    mem_used INTEGER, mem_total INTEGER, util REAL, temp REAL, power REAL,
    PRIMARY KEY (gpu, t_ms)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS process_raw (
    t_ms INTEGER NOT NULL, gpu INTEGER NOT NULL, pid INTEGER NOT NULL, used INTEGER NOT NULL,
    PRIMARY KEY (gpu, pid, t_ms)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS process_1s (
    t_ms INTEGER NOT NULL, gpu INTEGER NOT NULL, pid INTEGER NOT NULL, used INTEGER NOT NULL,
    PRIMARY KEY (gpu, pid, t_ms)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS process_1m (
    t_ms INTEGER NOT NULL, gpu INTEGER NOT NULL, pid INTEGER NOT NULL, used INTEGER NOT NULL,
    PRIMARY KEY (gpu, pid, t_ms)) WITHOUT ROWID;
-- Retention deletes by time (`prune`, every minute): without these it scans each tier whole,
-- 1.4 M rows of device_1s on eight GPUs, so a month-old store pruned ever slower.
CREATE INDEX IF NOT EXISTS device_raw_t ON device_raw (t_ms);
CREATE INDEX IF NOT EXISTS device_1s_t ON device_1s (t_ms);
CREATE INDEX IF NOT EXISTS device_1m_t ON device_1m (t_ms);
CREATE INDEX IF NOT EXISTS process_raw_t ON process_raw (t_ms);
CREATE INDEX IF NOT EXISTS process_1s_t ON process_1s (t_ms);
CREATE INDEX IF NOT EXISTS process_1m_t ON process_1m (t_ms);
CREATE TABLE IF NOT EXISTS processes (
    gpu INTEGER NOT NULL, pid INTEGER NOT NULL, first_ms INTEGER NOT NULL, last_ms INTEGER NOT NULL,
    user TEXT, command TEXT, container TEXT,
    PRIMARY KEY (gpu, pid));
CREATE TABLE IF NOT EXISTS events (
    t_ms INTEGER NOT NULL, gpu INTEGER NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_t ON events (t_ms);
";

pub fn migrate(conn: &Connection, path: &str) -> Result<(), StoreError> {
    check_version(conn, path)?;
    conn.execute_batch(TABLES)?;
    conn.pragma_update(None, "user_version", VERSION)?;
    Ok(())
}

pub fn check_version(conn: &Connection, path: &str) -> Result<(), StoreError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > VERSION {
        return Err(StoreError::TooNew {
            path: path.to_owned(),
            found,
            known: VERSION,
        });
    }
    Ok(())
}
