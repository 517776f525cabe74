//! The history store: GPU samples in an embedded SQLite database.
//!
//! Three tiers, each with its own retention: raw samples as recorded (hours), 1-second
//! aggregates (days) and 1-minute aggregates (weeks). Aggregates are built as samples arrive,
//! so no background job is needed and a report over a long window reads few rows.
//!
//! Durability: the database is in WAL mode and the writer commits at least once a second,
//! so a crash or `kill -9` loses at most the last second. A database that fails SQLite's
//! `quick_check` is reported as corrupt, never silently recreated: it may be the only copy
//! of the history that explains an incident.

mod schema;

use gpu_doctor_model::history::device_point;
pub use gpu_doctor_model::history::{DevicePoint, History, ProcessSeries};
use gpu_doctor_model::{GpuEvent, GpuIndex, Pid, Sample};
use rusqlite::{Connection, OpenFlags, params};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("history store {path} is corrupt: {detail}")]
    Corrupt { path: String, detail: String },
    #[error("cannot open history store {path}: {detail}")]
    Open { path: String, detail: String },
    #[error(
        "history store {path} was written by a newer gpu-doctor (store schema {found}, this one knows {known})"
    )]
    TooNew {
        path: String,
        found: i64,
        known: i64,
    },
    #[error("history store: {0}")]
    Sql(#[from] rusqlite::Error),
}

impl StoreError {
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            StoreError::Corrupt { .. } => Some(
                "move the file aside (keep it: `sqlite3 FILE .recover` may save its rows) and start a new one with --store",
            ),
            StoreError::Open { .. } => Some(
                "check the directory exists and is writable, or choose another with --store PATH",
            ),
            StoreError::TooNew { .. } => Some("upgrade gpu-doctor, or use another --store"),
            StoreError::Sql(_) => None,
        }
    }
}

/// How long each tier is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub raw: Duration,
    pub per_second: Duration,
    pub per_minute: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            raw: Duration::from_secs(6 * 3600),
            per_second: Duration::from_secs(48 * 3600),
            per_minute: Duration::from_secs(90 * 86400),
        }
    }
}

/// A tier of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Raw,
    PerSecond,
    PerMinute,
}

impl Tier {
    fn table(self) -> &'static str {
        match self {
            Tier::Raw => "device_raw",
            Tier::PerSecond => "device_1s",
            Tier::PerMinute => "device_1m",
        }
    }
    fn process_table(self) -> &'static str {
        match self {
            Tier::Raw => "process_raw",
            Tier::PerSecond => "process_1s",
            Tier::PerMinute => "process_1m",
        }
    }
    fn bucket_ms(self) -> u64 {
        match self {
            Tier::Raw => 1,
            Tier::PerSecond => 1000,
            Tier::PerMinute => 60_000,
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Bucket {
    start_ms: u64,
    n: u32,
    mem_max: Option<u64>,
    total: Option<u64>,
    util_sum: f64,
    util_n: u32,
    temp_max: Option<f64>,
    power_sum: f64,
    power_n: u32,
}

/// The history store. Writes are batched into a transaction committed at least once a
/// second (see [`Store::ingest`]).
pub struct Store {
    conn: Connection,
    path: PathBuf,
    retention: Retention,
    last_commit: Instant,
    in_transaction: bool,
    /// Open aggregate buckets per (tier, gpu).
    buckets: BTreeMap<(u8, u32), Bucket>,
    process_buckets: BTreeMap<(u8, u32, u32), (u64, u64)>,
    last_prune_ms: u64,
}

impl Store {
    /// Opens (or creates) the store at `path`, checking its integrity.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Self::open_with(path, Retention::default(), false)
    }

    /// Opens an existing store for reading only.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        Self::open_with(path, Retention::default(), true)
    }

    pub fn open_with(
        path: &Path,
        retention: Retention,
        read_only: bool,
    ) -> Result<Store, StoreError> {
        let display = path.display().to_string();
        if !read_only && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: display.clone(),
                detail: e.to_string(),
            })?;
        }
        let flags = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        };
        let conn = Connection::open_with_flags(path, flags).map_err(|e| StoreError::Open {
            path: display.clone(),
            detail: e.to_string(),
        })?;
        let corrupt = |e: rusqlite::Error| StoreError::Corrupt {
            path: display.clone(),
            detail: e.to_string(),
        };
        conn.busy_timeout(Duration::from_secs(5))?;
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(corrupt)?;
        if check != "ok" {
            return Err(StoreError::Corrupt {
                path: display,
                detail: check,
            });
        }
        if read_only {
            schema::check_version(&conn, &display)?;
        } else {
            conn.pragma_update(None, "journal_mode", "WAL")
                .map_err(corrupt)?;
            // NORMAL in WAL mode: a commit is durable against a process crash (kill -9);
            // only an OS crash can lose the last commits.
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            schema::migrate(&conn, &display)?;
        }
        Ok(Store {
            conn,
            path: path.to_owned(),
            retention,
            last_commit: Instant::now(),
            in_transaction: false,
            buckets: BTreeMap::new(),
            process_buckets: BTreeMap::new(),
            last_prune_ms: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The default location: `$XDG_STATE_HOME/gpu-doctor/history.db`, else
    /// `~/.local/state/gpu-doctor/history.db`.
    pub fn default_path() -> PathBuf {
        let base = std::env::var_os("XDG_STATE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state"))
            })
            .unwrap_or_else(std::env::temp_dir);
        base.join("gpu-doctor").join("history.db")
    }

    fn begin(&mut self) -> Result<(), StoreError> {
        if !self.in_transaction {
            self.conn.execute_batch("BEGIN")?;
            self.in_transaction = true;
        }
        Ok(())
    }

    /// Commits what is pending.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        if self.in_transaction {
            // Open buckets are written too (and replaced when they close), so the aggregate
            // tiers are as durable as the raw one.
            for (&(tier, gpu), bucket) in &self.buckets {
                self.write_bucket(tier_from(tier), gpu, bucket)?;
            }
            for (&(tier, gpu, pid), &(start, max)) in &self.process_buckets {
                self.conn
                    .prepare_cached(&format!(
                        "INSERT OR REPLACE INTO {} (t_ms, gpu, pid, used) VALUES (?1, ?2, ?3, ?4)",
                        tier_from(tier).process_table()
                    ))?
                    .execute(params![to_i64(start), gpu, pid, to_i64(max)])?;
            }
            self.conn.execute_batch("COMMIT")?;
            self.in_transaction = false;
        }
        self.last_commit = Instant::now();
        Ok(())
    }

    /// Adds a sample: a raw row per device and process, and the aggregates of buckets that
    /// the sample closes. Commits when a second has passed since the last commit.
    pub fn ingest(&mut self, sample: &Sample) -> Result<(), StoreError> {
        self.begin()?;
        let t = sample.timestamp_ms;
        {
            let mut insert = self.conn.prepare_cached(
                "INSERT OR REPLACE INTO device_raw (t_ms, gpu, mem_used, mem_total, util, temp, power)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for d in &sample.devices {
                let point = device_point(t, d);
                insert.execute(params![
                    to_i64(t),
                    d.index.0,
                    point.memory_used_bytes.map(to_i64),
                    point.memory_total_bytes.map(to_i64),
                    point.utilization_gpu_percent,
                    point.temperature_celsius,
                    point.power_draw_watts,
                ])?;
            }
            let mut insert = self.conn.prepare_cached(
                "INSERT OR REPLACE INTO process_raw (t_ms, gpu, pid, used) VALUES (?1, ?2, ?3, ?4)",
            )?;
            let mut names = self.conn.prepare_cached(
                "INSERT INTO processes (gpu, pid, first_ms, last_ms, user, command, container)
                 VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6)
                 ON CONFLICT (gpu, pid) DO UPDATE SET last_ms = excluded.last_ms,
                   user = coalesce(excluded.user, user),
                   command = coalesce(excluded.command, command),
                   container = coalesce(excluded.container, container)",
            )?;
            for p in &sample.processes {
                if let Some(used) = p.used_memory_bytes.get() {
                    insert.execute(params![to_i64(t), p.gpu.0, p.pid.0, to_i64(used)])?;
                }
                names.execute(params![
                    p.gpu.0,
                    p.pid.0,
                    to_i64(t),
                    p.user,
                    p.command,
                    p.container
                ])?;
            }
        }
        for tier in [Tier::PerSecond, Tier::PerMinute] {
            for d in &sample.devices {
                self.add_device_bucket(tier, d.index.0, &device_point(t, d))?;
            }
            for p in &sample.processes {
                if let Some(used) = p.used_memory_bytes.get() {
                    self.add_process_to_bucket(tier, t, p.gpu.0, p.pid.0, used)?;
                }
            }
        }
        if t.saturating_sub(self.last_prune_ms) > 60_000 {
            self.prune(t)?;
            self.last_prune_ms = t;
        }
        if self.last_commit.elapsed() >= Duration::from_millis(900) {
            self.flush()?;
        }
        Ok(())
    }

    /// Stores an event (Xid, ECC, lost GPU, process start/exit).
    pub fn ingest_event(&mut self, event: &GpuEvent) -> Result<(), StoreError> {
        self.begin()?;
        let json = serde_json::to_string(&event.kind).unwrap_or_default();
        self.conn
            .prepare_cached("INSERT INTO events (t_ms, gpu, json) VALUES (?1, ?2, ?3)")?
            .execute(params![to_i64(event.timestamp_ms), event.gpu.0, json])?;
        Ok(())
    }

    fn add_device_bucket(
        &mut self,
        tier: Tier,
        gpu: u32,
        p: &DevicePoint,
    ) -> Result<(), StoreError> {
        let start = p.t_ms - p.t_ms % tier.bucket_ms();
        let key = (tier as u8, gpu);
        let bucket = self.buckets.entry(key).or_insert(Bucket {
            start_ms: start,
            ..Bucket::default()
        });
        if bucket.start_ms != start {
            let closed = std::mem::replace(
                bucket,
                Bucket {
                    start_ms: start,
                    ..Bucket::default()
                },
            );
            self.write_bucket(tier, gpu, &closed)?;
        }
        let bucket = self.buckets.entry(key).or_default();
        bucket.n += 1;
        bucket.mem_max = max_opt(bucket.mem_max, p.memory_used_bytes);
        bucket.total = p.memory_total_bytes.or(bucket.total);
        if let Some(u) = p.utilization_gpu_percent {
            bucket.util_sum += u;
            bucket.util_n += 1;
        }
        if let Some(t) = p.temperature_celsius {
            bucket.temp_max = Some(bucket.temp_max.map_or(t, |m: f64| m.max(t)));
        }
        if let Some(w) = p.power_draw_watts {
            bucket.power_sum += w;
            bucket.power_n += 1;
        }
        Ok(())
    }

    fn write_bucket(&self, tier: Tier, gpu: u32, b: &Bucket) -> Result<(), StoreError> {
        if b.n == 0 {
            return Ok(());
        }
        self.conn
            .prepare_cached(&format!(
                "INSERT OR REPLACE INTO {} (t_ms, gpu, mem_used, mem_total, util, temp, power)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                tier.table()
            ))?
            .execute(params![
                to_i64(b.start_ms),
                gpu,
                b.mem_max.map(to_i64),
                b.total.map(to_i64),
                (b.util_n > 0).then(|| b.util_sum / f64::from(b.util_n)),
                b.temp_max,
                (b.power_n > 0).then(|| b.power_sum / f64::from(b.power_n)),
            ])?;
        Ok(())
    }

    fn add_process_to_bucket(
        &mut self,
        tier: Tier,
        t: u64,
        gpu: u32,
        pid: u32,
        used: u64,
    ) -> Result<(), StoreError> {
        let start = t - t % tier.bucket_ms();
        let key = (tier as u8, gpu, pid);
        let entry = self.process_buckets.entry(key).or_insert((start, 0));
        if entry.0 != start {
            let (closed_start, max) = *entry;
            self.conn
                .prepare_cached(&format!(
                    "INSERT OR REPLACE INTO {} (t_ms, gpu, pid, used) VALUES (?1, ?2, ?3, ?4)",
                    tier.process_table()
                ))?
                .execute(params![to_i64(closed_start), gpu, pid, to_i64(max)])?;
            *entry = (start, 0);
        }
        entry.1 = entry.1.max(used);
        Ok(())
    }

    /// Deletes what is past each tier's retention.
    pub fn prune(&mut self, now_ms: u64) -> Result<(), StoreError> {
        self.begin()?;
        for (tier, keep) in [
            (Tier::Raw, self.retention.raw),
            (Tier::PerSecond, self.retention.per_second),
            (Tier::PerMinute, self.retention.per_minute),
        ] {
            let cutoff =
                to_i64(now_ms.saturating_sub(u64::try_from(keep.as_millis()).unwrap_or(u64::MAX)));
            self.conn.execute(
                &format!("DELETE FROM {} WHERE t_ms < ?1", tier.table()),
                params![cutoff],
            )?;
            self.conn.execute(
                &format!("DELETE FROM {} WHERE t_ms < ?1", tier.process_table()),
                params![cutoff],
            )?;
        }
        let cutoff = to_i64(now_ms.saturating_sub(
            u64::try_from(self.retention.per_minute.as_millis()).unwrap_or(u64::MAX),
        ));
        self.conn
            .execute("DELETE FROM events WHERE t_ms < ?1", params![cutoff])?;
        self.conn
            .execute("DELETE FROM processes WHERE last_ms < ?1", params![cutoff])?;
        Ok(())
    }
}

impl Store {
    /// The GPUs the store has seen in `[since_ms, until_ms]`.
    pub fn gpus(&self, since_ms: u64, until_ms: u64) -> Result<Vec<GpuIndex>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT gpu FROM device_1m WHERE t_ms BETWEEN ?1 AND ?2 ORDER BY gpu",
        )?;
        let rows = stmt.query_map(params![to_i64(since_ms), to_i64(until_ms)], |r| {
            r.get::<_, u32>(0)
        })?;
        Ok(rows
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(GpuIndex)
            .collect())
    }

    /// The newest timestamp in the store.
    pub fn latest_ms(&self) -> Result<Option<u64>, StoreError> {
        let t: Option<i64> = self.conn.query_row(
            "SELECT max(t_ms) FROM (SELECT max(t_ms) AS t_ms FROM device_raw UNION ALL SELECT max(t_ms) FROM device_1m)",
            [],
            |r| r.get(0),
        )?;
        Ok(t.and_then(|t| u64::try_from(t).ok()))
    }

    /// The finest tier that still holds the whole window and gives at most `max_points`.
    pub fn tier_for(&self, since_ms: u64, until_ms: u64, now_ms: u64, max_points: u64) -> Tier {
        let window = until_ms.saturating_sub(since_ms);
        let age = now_ms.saturating_sub(since_ms);
        let holds = |keep: Duration| u128::from(age) <= keep.as_millis();
        if holds(self.retention.raw) && window / 100 <= max_points {
            // Raw is typically 10 Hz or slower.
            Tier::Raw
        } else if holds(self.retention.per_second) && window / 1000 <= max_points {
            Tier::PerSecond
        } else {
            Tier::PerMinute
        }
    }

    /// One GPU's points in a tier.
    pub fn device_series(
        &self,
        tier: Tier,
        gpu: GpuIndex,
        since_ms: u64,
        until_ms: u64,
    ) -> Result<Vec<DevicePoint>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT t_ms, mem_used, mem_total, util, temp, power FROM {}
             WHERE gpu = ?1 AND t_ms BETWEEN ?2 AND ?3 ORDER BY t_ms",
            tier.table()
        ))?;
        let rows = stmt.query_map(params![gpu.0, to_i64(since_ms), to_i64(until_ms)], |r| {
            Ok(DevicePoint {
                t_ms: u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                memory_used_bytes: r
                    .get::<_, Option<i64>>(1)?
                    .and_then(|v| u64::try_from(v).ok()),
                memory_total_bytes: r
                    .get::<_, Option<i64>>(2)?
                    .and_then(|v| u64::try_from(v).ok()),
                utilization_gpu_percent: r.get(3)?,
                temperature_celsius: r.get(4)?,
                power_draw_watts: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every process's memory series in a tier.
    pub fn process_series(
        &self,
        tier: Tier,
        since_ms: u64,
        until_ms: u64,
    ) -> Result<Vec<ProcessSeries>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT p.gpu, p.pid, p.t_ms, p.used, n.user, n.command FROM {} p
             LEFT JOIN processes n ON n.gpu = p.gpu AND n.pid = p.pid
             WHERE p.t_ms BETWEEN ?1 AND ?2 ORDER BY p.gpu, p.pid, p.t_ms",
            tier.process_table()
        ))?;
        let mut out: Vec<ProcessSeries> = Vec::new();
        let mut rows = stmt.query(params![to_i64(since_ms), to_i64(until_ms)])?;
        while let Some(r) = rows.next()? {
            let gpu = GpuIndex(r.get(0)?);
            let pid = Pid(r.get(1)?);
            let t = u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0);
            let used = u64::try_from(r.get::<_, i64>(3)?).unwrap_or(0);
            match out.last_mut() {
                Some(s) if s.gpu == gpu && s.pid == pid => s.points.push((t, used)),
                _ => out.push(ProcessSeries {
                    gpu,
                    pid,
                    user: r.get(4)?,
                    command: r.get(5)?,
                    points: vec![(t, used)],
                }),
            }
        }
        Ok(out)
    }

    /// Events in the window, oldest first.
    pub fn events(&self, since_ms: u64, until_ms: u64) -> Result<Vec<GpuEvent>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t_ms, gpu, json FROM events WHERE t_ms BETWEEN ?1 AND ?2 ORDER BY t_ms",
        )?;
        let rows = stmt.query_map(params![to_i64(since_ms), to_i64(until_ms)], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (t, gpu, json) = row?;
            // An event kind this version does not know is skipped, not an error.
            if let Ok(kind) = serde_json::from_str(&json) {
                out.push(GpuEvent {
                    timestamp_ms: u64::try_from(t).unwrap_or(0),
                    gpu: GpuIndex(gpu),
                    kind,
                });
            }
        }
        Ok(out)
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // Best effort: what is not committed here is at most the last second.
        let _ = self.flush();
    }
}

fn tier_from(n: u8) -> Tier {
    if n == Tier::PerSecond as u8 {
        Tier::PerSecond
    } else {
        Tier::PerMinute
    }
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Store {
    /// Reads a window from the store, from the finest tier that holds it with at most
    /// `max_points` per series.
    pub fn history(
        &self,
        since_ms: u64,
        until_ms: u64,
        now_ms: u64,
        max_points: u64,
    ) -> Result<History, StoreError> {
        let tier = self.tier_for(since_ms, until_ms, now_ms, max_points);
        let mut devices = BTreeMap::new();
        let mut gpus = self.gpus(since_ms, until_ms)?;
        if gpus.is_empty() {
            // A store younger than a minute has no closed 1-minute bucket yet, but the open
            // one is written on every flush; fall back to raw rows to find the GPUs.
            let mut stmt = self.conn.prepare_cached(
                "SELECT DISTINCT gpu FROM device_raw WHERE t_ms BETWEEN ?1 AND ?2 ORDER BY gpu",
            )?;
            let rows = stmt.query_map(params![to_i64(since_ms), to_i64(until_ms)], |r| {
                r.get::<_, u32>(0)
            })?;
            gpus = rows
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .map(GpuIndex)
                .collect();
        }
        for gpu in gpus {
            devices.insert(gpu, self.device_series(tier, gpu, since_ms, until_ms)?);
        }
        Ok(History {
            since_ms,
            until_ms,
            devices,
            processes: self.process_series(tier, since_ms, until_ms)?,
            events: self.events(since_ms, until_ms)?,
        })
    }
}
