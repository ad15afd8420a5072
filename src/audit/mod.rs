//! The policy audit (design §8): which asks keep reaching a human, and which
//! permission rules would stop them — without ever storing a raw command,
//! path, URL or secret.
//!
//! What goes in: every final decision vouch makes, the harnesses'
//! after-the-fact reports (a call vouch deferred that then ran is a human
//! approval), and pi-permission-system `permissions:decision` events. What is
//! kept: daily counts per day, project scope (HMAC), surface, subject
//! (command template, path class or tool name), result, resolution, rule
//! origin (HMAC) and rule pattern (HMAC), in `<state_dir>/audit.sqlite` (or,
//! with `[store] backend = "postgres"`, in the state's PostgreSQL database).
//!
//! Auditing never touches a decision. Observations go to a background
//! writer over a bounded queue; a failure to open, lock, write or read the
//! database turns auditing off for the rest of the process with one warning,
//! and a corrupt file is left exactly as it was.
//!
//! - [`keys`]: `hmac.key` and the keyed hashes.
//! - [`subject`]: command templates, path classes, tool names.
//! - [`record`]: the vocabulary of results and resolutions, and rows.
//! - [`db`]: the database, its migrations and retention.
//! - [`ingest`]: events from harnesses and pi-permission-system.
//! - [`report`]: statistics and suggested rules; [`targets`]: each
//!   harness's rule language.

pub mod db;
pub mod facts;
pub mod ingest;
pub mod keys;
pub mod record;
pub mod report;
mod sink;
pub mod subject;
pub mod targets;
mod writer;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::Digest as _;

use crate::config::{AuditConfig, project_root};
use crate::request::{Request, Surface};
use crate::store::StoreError;

pub use sink::{AuditSink, DecisionSink, NoAudit, ProjectLookup};
pub use writer::{Audit, AuditDelivery, AuditStatus};

/// Why the audit could not do something. Never reaches a decision.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error(
        "audit database `{path}` is corrupt ({detail}); it was left untouched: move it aside to \
         start a new audit, or restore it from a backup"
    )]
    Corrupt { path: String, detail: String },
    #[error("audit database `{path}` is locked by another process (gave up after {waited_ms} ms)")]
    Locked { path: String, waited_ms: u64 },
    #[error("audit database `{path}`: cannot migrate the schema: {detail}")]
    Migration { path: String, detail: String },
    #[error("audit database `{path}`: {source}")]
    Sqlite {
        path: String,
        source: rusqlite::Error,
    },
    /// The audit's database failed in another way: on PostgreSQL a server
    /// that is down or a lock wait past `store.timeout_ms`, anywhere a
    /// value the schema rules out. `at` never holds a password.
    #[error("audit database `{at}`: {detail}")]
    Database { at: String, detail: String },
    /// The PostgreSQL server cannot be reached or did not complete the
    /// transaction (down, restarting, failing over). Passing: the batch is
    /// not counted, and the next one tries again.
    #[error("audit database `{at}` is unavailable: {detail}")]
    Unavailable { at: String, detail: String },
    #[error("audit key `{path}` {problem}")]
    Key { path: String, problem: String },
    #[error(transparent)]
    Files(#[from] StoreError),
    #[error("auditing is turned off (`audit.enabled = false`)")]
    Disabled,
    #[error("the audit writer stopped: {0}")]
    Stopped(String),
}

/// The audit settings in force for one observation's project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectAudit {
    /// `audit.enabled` after the project overlay (which may only turn it off).
    pub enabled: bool,
    /// `audit.retention_days` after the project overlay (which may only
    /// shorten it).
    pub retention_days: u32,
}

impl ProjectAudit {
    pub fn of(cfg: &AuditConfig) -> ProjectAudit {
        ProjectAudit {
            enabled: cfg.enabled,
            retention_days: cfg.retention_days,
        }
    }
}

/// What was observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// A final decision (vouch's own, or a permission system's).
    Decision {
        result: record::ResultKind,
        resolution: &'static str,
        /// Raw rule origin and pattern; hashed before storage.
        origin: Option<String>,
        pattern: Option<String>,
        /// A subagent's ask forwarded to its parent.
        forwarded: bool,
        /// vouch's own decision, to be paired with its after-event.
        awaits_after_event: bool,
    },
    /// The harness reported that the call ran.
    Ran,
}

/// How an ingested event is identified, for idempotent ingest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventId {
    /// The source's own request id.
    Id(String),
    /// A stable digest of the event, where the source has no id.
    Digest(String),
}

/// One observation, with everything its row is derived from. The raw
/// fields live only in memory, on their way to [`Observation::to_op`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub what: What,
    pub surface: Surface,
    /// The surface as reported, when it is not a valid vouch surface.
    pub invalid_surface: bool,
    pub tool: Option<String>,
    pub command: Option<String>,
    pub path: Option<String>,
    pub resolved_path: Option<String>,
    pub destination: Option<String>,
    /// A value with no better field (pi's `value` on a tool surface).
    pub value: Option<String>,
    pub cwd: Option<String>,
    pub home: Option<String>,
    /// The project root when the caller already knows it.
    pub project_root: Option<PathBuf>,
    pub session_id: Option<String>,
    pub request_hash: Option<String>,
    pub source: Option<String>,
    pub at_ms: u64,
    pub project: ProjectAudit,
    pub event_id: Option<EventId>,
    /// Whether `command` starts another command, from vouch's own analysis
    /// of the request ([`subject::starts_another_command`]); `None` for
    /// events vouch never analysed, whose template analyses the command.
    pub starts_another: Option<bool>,
}

/// What deriving rows needs besides the observation.
#[derive(Debug, Clone, Copy)]
pub struct Derive<'a> {
    pub keys: &'a keys::Keys,
    pub limits: subject::Limits,
    pub pending_ttl_ms: u64,
    /// What this batch already derived.
    pub memo: &'a RefCell<Memo>,
}

/// Values already derived: the same commands, directories and rule
/// patterns come back far more often than they differ, and a bash parse or
/// a directory walk is the expensive part of an observation.
///
/// Templates are kept across batches, keyed by the SHA-256 of the command
/// (never the command itself) and bounded by [`MEMO_TEMPLATES`]; project
/// roots and keyed hashes only for one batch ([`Memo::next_batch`]), so a
/// new `.git` is seen by the next batch and no raw value outlives it.
#[derive(Debug, Default)]
pub struct Memo {
    templates: HashMap<[u8; 32], subject::Subject>,
    roots: HashMap<String, Option<PathBuf>>,
    /// Per domain, value → keyed hash (looked up by `&str`: a hit, the
    /// common case, allocates nothing).
    digests: HashMap<keys::Domain, HashMap<String, String>>,
    /// Session → request hash → the pending key of the pair: an agent's
    /// retries of one request share it.
    pending: HashMap<String, HashMap<String, String>>,
}

/// Templates remembered across batches before the memo starts over.
pub const MEMO_TEMPLATES: usize = 8192;

impl Memo {
    /// Forgets what holds raw values; keeps the templates (within bound).
    pub fn next_batch(&mut self) {
        self.roots.clear();
        self.digests.clear();
        self.pending.clear();
        if self.templates.len() > MEMO_TEMPLATES {
            self.templates.clear();
        }
    }

    fn template(
        &mut self,
        command: &str,
        starts_another: Option<bool>,
        limits: subject::Limits,
    ) -> subject::Subject {
        let key: [u8; 32] = sha2::Sha256::digest(command.as_bytes()).into();
        self.templates
            .entry(key)
            .or_insert_with(|| {
                let action = subject::Action {
                    command: Some(command),
                    starts_another,
                    ..Default::default()
                };
                subject::subject_of(
                    &Surface::Bash,
                    action,
                    subject::PathContext::default(),
                    limits,
                )
            })
            .clone()
    }

    fn digest(&mut self, keys: &keys::Keys, domain: keys::Domain, value: &str) -> String {
        let known = self.digests.entry(domain).or_default();
        if let Some(digest) = known.get(value) {
            return digest.clone();
        }
        let digest = keys.digest(domain, value);
        known.insert(value.to_owned(), digest.clone());
        digest
    }

    /// The pending key of a decision or after event of `hash` in `session`.
    fn pending_key(&mut self, keys: &keys::Keys, session: &str, hash: &str) -> String {
        if let Some(key) = self.pending.get(session).and_then(|known| known.get(hash)) {
            return key.clone();
        }
        let key = keys.digest_parts(
            keys::Domain::Pending,
            &[session.as_bytes(), hash.as_bytes()],
        );
        self.pending
            .entry(session.to_owned())
            .or_default()
            .insert(hash.to_owned(), key.clone());
        key
    }
}

impl Observation {
    /// An observation of a canonical request: what vouch decided about it
    /// (see [`Observation::of_record`]) or that it ran.
    pub fn of_request(
        request: &Request,
        what: What,
        project: ProjectAudit,
        project_root: Option<PathBuf>,
        at_ms: u64,
    ) -> Observation {
        Observation {
            what,
            surface: request.surface.clone(),
            invalid_surface: false,
            tool: request.tool.clone(),
            command: request.command.clone(),
            path: request.path.clone(),
            resolved_path: request.resolved_path.clone(),
            destination: request.destination.clone(),
            value: None,
            cwd: request.cwd.clone(),
            home: request.home.clone(),
            project_root,
            session_id: Some(request.session_id.clone()),
            request_hash: Some(request.request_hash()),
            source: request.source.clone(),
            at_ms,
            project,
            event_id: None,
            starts_another: None,
        }
    }

    /// The database operation this observation becomes, or `None` when its
    /// project turned auditing off.
    pub fn to_op(&self, derive: Derive<'_>) -> Option<db::Op> {
        if !self.project.enabled {
            return None;
        }
        let keys = derive.keys;
        let mut memo = derive.memo.borrow_mut();
        let root = self.project_root.clone().or_else(|| {
            let cwd = self.cwd.as_deref()?;
            memo.roots
                .entry(cwd.to_owned())
                .or_insert_with(|| Some(project_root(Path::new(cwd))))
                .clone()
        });
        let (surface, subject) = self.subject(root.as_deref(), derive.limits, &mut memo);
        let source = record::source(self.source.as_deref());
        // The harness reports, after the fact, the arguments that ran, and
        // something after vouch's check could have changed them.
        let checks_ran =
            crate::catalogue::named(&source).is_some_and(|e| e.after_event_has_ran_arguments);
        let once = self.once_key(keys, &source);
        let pending_key = match (&self.session_id, &self.request_hash) {
            (Some(session), Some(hash)) => Some(memo.pending_key(keys, session, hash)),
            _ => None,
        };
        let mut row = record::Row {
            day: record::day_of(self.at_ms),
            scope: root.map(|r| memo.digest(keys, keys::Domain::Scope, &r.to_string_lossy())),
            surface,
            subject,
            source,
            result: record::ResultKind::Allow,
            resolution: "user_approved",
            origin: None,
            pattern: None,
            forwarded: false,
        };
        let retention_days = self.project.retention_days;
        let What::Decision {
            result,
            resolution,
            origin,
            pattern,
            forwarded,
            awaits_after_event,
        } = &self.what
        else {
            return Some(db::Op::Ran {
                // Without a session and request hash nothing can match.
                key: pending_key.unwrap_or_default(),
                row,
                retention_days,
                once,
                unreviewed_counts: checks_ran,
            });
        };
        let mut hashed = |domain, v: &Option<String>| {
            v.as_deref()
                .filter(|v| !v.is_empty())
                .map(|v| memo.digest(keys, domain, v))
        };
        row.result = *result;
        row.resolution = resolution;
        row.origin = hashed(keys::Domain::Origin, origin);
        row.pattern = hashed(keys::Domain::Pattern, pattern);
        row.forwarded = *forwarded;
        let awaits = match (awaits_after_event, result, pending_key) {
            (true, record::ResultKind::Defer, Some(key)) => Some((key, db::AwaitKind::Defer)),
            (true, record::ResultKind::Deny, Some(key)) => Some((key, db::AwaitKind::Deny)),
            // Remembered only where the after-event can tell it apart from
            // a call whose arguments changed after the check.
            (true, record::ResultKind::Allow, Some(key)) if checks_ran => {
                Some((key, db::AwaitKind::Allow))
            }
            _ => None,
        }
        .map(|(key, decision)| db::Await {
            key,
            decision,
            expires_at_ms: self.at_ms.saturating_add(derive.pending_ttl_ms),
        });
        Some(db::Op::Count {
            row,
            retention_days,
            once,
            awaits,
        })
    }

    /// The surface as stored and the subject.
    fn subject(
        &self,
        root: Option<&Path>,
        limits: subject::Limits,
        memo: &mut Memo,
    ) -> (String, subject::Subject) {
        if self.invalid_surface {
            return ("<custom-tool>".to_owned(), subject::tool_subject(None));
        }
        // A template depends on the command alone.
        if let (Surface::Bash, Some(command)) = (&self.surface, &self.command) {
            return (
                self.surface.as_str().to_owned(),
                memo.template(command, self.starts_another, limits),
            );
        }
        let ctx = subject::PathContext {
            cwd: self.cwd.as_deref(),
            home: self.home.as_deref(),
            workspace: root,
        };
        let action = subject::Action {
            tool: self.tool.as_deref(),
            command: self.command.as_deref(),
            path: self.path.as_deref(),
            resolved_path: self.resolved_path.as_deref(),
            destination: self.destination.as_deref(),
            value: self.value.as_deref(),
            starts_another: self.starts_another,
        };
        (
            self.surface.as_str().to_owned(),
            subject::subject_of(&self.surface, action, ctx, limits),
        )
    }

    /// The HMAC that makes ingesting this event idempotent.
    fn once_key(&self, keys: &keys::Keys, source: &str) -> Option<String> {
        self.event_id.as_ref().map(|id| {
            let (tag, value) = match id {
                EventId::Id(id) => ("id", id),
                EventId::Digest(digest) => ("digest", digest),
            };
            keys.digest_parts(
                keys::Domain::EventId,
                &[source.as_bytes(), tag.as_bytes(), value.as_bytes()],
            )
        })
    }
}
