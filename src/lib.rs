//! vouch: a model-backed auto-review authorizer for coding agents.
//!
//! A coding agent about to cross a boundary (run a shell command, write
//! outside its workspace, open a connection) asks vouch, which answers
//! **allow**, **deny** or **defer** (hand it to the human). Deterministic hard
//! denies run first; then the inert stage, which allows without a model a
//! bash command its analysis proves only reads, rewritten to run confined;
//! then routing; then per-turn session state; then a reviewer model over a
//! small, redacted, fenced evidence packet; then risk ceilings; and for
//! sandbox brokers a one-use grant. Every fault ends in the configured
//! fail-closed outcome, never in an allow.
//!
//! # Layout
//!
//! The order of the stages is a pure function of plain data ([`pipeline`]);
//! the I/O is at its edges ([`engine`]), and so is every input that has to
//! look at the machine: the state, the model, and the inert stage's checks
//! of the files a command would read (see [`policy`]).
//!
//! - [`pipeline`]: **the decision table.** `decide(&Inputs) -> Step` orders
//!   every stage before the model: the hard denies (a command that did not
//!   parse, or whose analysis is incomplete, goes on with a note); the
//!   project configuration (an overlay that was rejected, or a trusted file
//!   of vouch's inside the project, answers with the failure mode); the
//!   inert stage (an inert verdict allows only with its confined form);
//!   routing; `reviewer.without_model` when no model is configured; a
//!   reviewer that cannot be built; then, on the turn's state, a grant token
//!   that could not be minted, break glass, the breaker, the failure and
//!   review budgets, the packet, an exact-retry approval (which skips the
//!   cache) and the cache. `conclude(&Job, &ReviewResult)` orders every
//!   stage after the model (risk ceilings, what is recorded). Both return a
//!   [`decision::Decision`] with the [`pipeline::Effect`]s that must follow
//!   it — one audit record per final decision among them. No file, socket
//!   or clock: the engine hands in what needs them or costs much (the
//!   hard-deny verdict, computed once per request; the inert verdict and
//!   the confined form; the state, the packet, the cache lookup).
//! - [`engine`]: the driver around the table (`engine::driver`)
//!   — gathers its inputs on demand (project configuration and the
//!   protected locations, the request's one analysis of its command, the
//!   hard-deny and inert verdicts and the confined form, the reviewer, the
//!   turn's state, the packet, the cache lookup), calls the model, applies
//!   the effects and hands audit records to the audit sink. The state
//!   effects are applied by `session::apply` in two writes: before the
//!   model, the table is run again inside one write transaction on fresh
//!   state (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: under the session's
//!   advisory lock) and what it decided (a review reserved, an
//!   authorization spent, the grant of an allow made without the model)
//!   commits there; after the model, the verdict's effects (breaker counts,
//!   a denial, the cache, an allow's grant) are a second write — a
//!   transaction of its own in a hook process, and in `vouch serve` queued
//!   for the store's recorder thread, which commits the writes queued
//!   together in one transaction, a savepoint each (`store::queued`). A
//!   verdict that cannot be recorded fails closed; a decision with no
//!   state effect (a hard deny, an inert allow, a routed answer) writes
//!   nothing.
//!   Audit records are in no transaction: they go to the sink over a
//!   bounded queue (`engine::audit`). `Engine::review(Request) -> Decision`
//!   decides one request; `vouch serve` splits it where it must not block a
//!   worker (`review_early` answers a plain hard deny on the worker,
//!   `review_late` the rest), the hooks run `review_here` on their own
//!   runtime, and a hook with `--server` keeps what only its machine can
//!   judge (`floor_here`).
//! - [`decision`]: the decision, its per-stage constructors and the words
//!   said to the agent, and the risk ceilings that turn a reviewer's
//!   verdict into one (`decision::ceiling`); [`names`]: `named_enum!`, which writes each
//!   variant's name once for the enums of decisions, configuration, session
//!   state, metrics, the HTTP roles, `doctor` and `vouch eval` (not every
//!   named enum uses it: Known gaps).
//! - [`request`]: the canonical request, its validation and `request_hash`;
//!   [`json`]: the strict JSON parser (an empty body and trailing data
//!   refused, the field at fault named; unknown fields are refused by the
//!   target types) for canonical requests, HTTP bodies, hook payloads and
//!   the central service's replies to a remote hook. Other JSON from
//!   outside is read where it arrives, under that module's own rules
//!   (Known gaps).
//! - [`config`]: typed configuration, layers and the tighten-only project
//!   overlay, and the routing table the configuration compiles as it loads
//!   (`config::routing`: command templates, patterns, the route lookup the
//!   table asks).
//! - [`paths`]: where vouch keeps its files (`VOUCH_HOME` or XDG).
//! - [`catalogue`]: the harness catalogue — for each harness vouch has an
//!   adapter for, what the layers below the adapters know of it: its name,
//!   the configuration files the agent must not write (read by the
//!   trust-boundary hard denies) and whether its after-event reports the
//!   arguments that ran (read by the audit). A leaf; each adapter names
//!   its entry, and a test checks both list the same harnesses.
//! - [`shell`]: the crate `vouch-shell` (`crates/vouch-shell`, re-exported
//!   here): bash parsed, repaired, expanded and interpreted into an
//!   `Analysis` of the units that would actually run, bounded by budgets it
//!   charges before each step and each level of nesting. Its command table
//!   (`shell::spec`: options and which take values, operands and what is
//!   done to them, wrapped commands, secret-carrying options, the read-only
//!   profiles, git's subcommands and configuration keys) is the command
//!   knowledge the hard denies, the inert stage and redaction share. What a
//!   row cannot say is code, in the crate and in the stages (Known gaps).
//! - [`credentials`]: which paths hold credentials, by name alone (read by
//!   the hard denies, the inert stage, routing, confinement, redaction and
//!   the audit).
//! - [`policy`]: the deterministic stages. The hard denies
//!   (`policy::hard_deny`) are pure functions of the request, its analysis,
//!   the configuration and the protected locations the engine hands in.
//!   The inert stage
//!   (`policy::inert`) is a function of the request, its analysis, the
//!   configuration and the machine's answers to what it asks through
//!   `policy::inert::Files` (`inert/files.rs`; the engine supplies the
//!   disk, `engine::Disk`): to prove that a command only reads what it
//!   may, it asks at decision time — resolves each path through its
//!   symbolic links, refuses hard-linked files, expands globs against the
//!   directory, reads a git configuration file the command would read for
//!   a token in a remote URL and looks for the startup files a reader
//!   loads (`inert/mod.rs`, `derive.rs`); finds the repository and reads
//!   git's configuration files and hooks directories (`git.rs`); walks the
//!   trees `rg` and `grep -r` search, with their ignore files (`tree.rs`).
//!   No code in `policy` opens the filesystem itself
//!   (`tests/it/layering.rs`). Its `scripts.rs` (sed, awk and jq programs)
//!   and `found.rs` (what `find -exec` and `xargs` are given) read no file.
//! - [`rules`]: the rule registry — every rule id a deterministic decision
//!   names (hard denies by category, the inert stage, routing), with what
//!   it means; `docs/rules.md` is generated from it.
//! - [`confine`]: `vouch confine`, the enforcement behind an inert allow
//!   (Landlock, seccomp, no capabilities, secrets left out of the
//!   environment), and the confined form an inert decision carries.
//! - [`evidence`]: redaction, token estimates and the fenced evidence packet.
//! - [`reviewer`]: model clients, verdict parsing, one deadline, bounded retries.
//! - [`session`], [`grants`], [`store`], [`clock`]: the state the table reads
//!   and the effects it writes — turn snapshots, breaker and budget rules,
//!   cache, overrides and break glass, recorded prompts, one-use grants. The
//!   two backends (SQLite files, or one PostgreSQL database shared by
//!   replicas: `store::postgres`), the one `Transaction` both serve
//!   (`store::sql`), the recorder's group commit (`store::queued`), the
//!   schema, file modes, tokens and randomness are in [`store`]; each
//!   module's own SQL, written once for both backends, sits beside its rules
//!   (`session`, with `session::apply` for the table's effects,
//!   `session::overrides`, `session::prompts`, `grants`), and the audit's
//!   in `audit::db`. The engine holds no SQL. `feed::local` keeps its own
//!   small SQLite file (`feed.sqlite`), which no decision reads.
//! - [`audit`]: redacted daily aggregates of every decision and after-event
//!   in `audit.sqlite` (or the shared PostgreSQL database), and the report
//!   that suggests permission rules in each harness's own rule language
//!   (`audit::targets`, one file per harness).
//! - [`eval`]: `vouch eval` — labelled cases (JSON lines) through
//!   `Engine::review` against a private state directory deleted afterwards
//!   (each case its own session, no verdict cache, no policy audit), and the
//!   figures for measuring a reviewer model before trusting it
//!   (`eval::report`).
//! - [`http`], [`server`]: the `vouch serve` HTTP service (one `AppError`,
//!   one strict-body extractor; its own accept loop with connection caps and
//!   a header timeout, `server::connections`), with the operator console at `/console`
//!   (`http::console`); [`feed`]: the live decision feed the console
//!   watches (a relaxed load per decision while nobody does).
//! - [`hooks`]: the harness adapters (`vouch hook <harness>`, and
//!   `POST /hooks/claude-code` for Claude Code's `http` hook): harness JSON →
//!   canonical request → the harness's own reply; with `--server`, a team's
//!   central service decides (`hooks::remote`). `vouch hook` decides in a
//!   worker process it supervises (`hooks::supervise`): a crash of the
//!   decision is the harness's fail-closed reply. Each harness's adapter is
//!   one file in `src/hooks/harnesses/` (its parsing, replies, timeout,
//!   snippet, user settings — data types in `hooks::settings` — and where
//!   its transcript is and in which format), listed by `build.rs` into the
//!   registry the command line, the HTTP route, `vouch install` and `vouch
//!   doctor` read. Its name and protected files are its [`catalogue`]
//!   entry, its audit rule language is in `src/audit/targets/`, and more
//!   of what vouch knows about a harness is outside its file (Known
//!   gaps). Pi and
//!   sandbox-runtime have no adapter: their TypeScript clients
//!   (`clients/pi`, `clients/sandbox-runtime`) call `vouch serve`, and
//!   OpenCode's plugin (`clients/opencode`) runs `vouch hook opencode`.
//! - [`install`]: `vouch install`/`uninstall` (vouch's hook merged into a
//!   harness's user settings, atomically); [`doctor`]: which harnesses are
//!   guarded, and which repository files switch vouch off.
//! - [`cli`]: the command-line commands; [`telemetry`]: tracing setup and events.
//!
//! ## Known gaps
//!
//! Where the code does not keep a rule the layout above would like to
//! state, the gap and where it is:
//!
//! - **Command knowledge outside the table.** `shell::spec` holds what a
//!   row can say; the rest is code beside it. In `vouch-shell`:
//!   `effects/special.rs` (`dd`, `tar` modes, git subcommands, `sed`/`perl`
//!   scripts, archives, `sqlite3`, HTTP clients' request items, the disk
//!   tools' read-only options), `runners.rs` (how each wrapper, shell,
//!   `xargs`, `find -exec` and `parallel` runs its command), `embedded.rs`
//!   (shell code programs run: git's keys and variables, `ssh -o
//!   ProxyCommand`, `rsync -e`, `tar --to-command`, …), `code.rs` (each
//!   interpreter language's strings, and the calls that run a shell or a
//!   program, remove a tree or write a file), `find.rs` (find's
//!   expression), `decode.rs`, `printed.rs` and `printf.rs` (what decoders,
//!   path tools, `tr`, `echo`, `printf` and `test` print) and
//!   `conservative.rs` (`DANGEROUS_PROGRAMS`, the interpreters). In the
//!   hard denies (`src/policy/hard_deny/`), each category's own programs:
//!   `persist.rs` (account, group, password and capability tools; sshd
//!   and PAM settings), `device.rs` (disk, LVM, ZFS and SCSI tools),
//!   `transport.rs` and `switches.rs` (every tool's switches that turn
//!   TLS verification off), `producers.rs` (commands that print a
//!   credential), `opaque.rs` (awk, sed, editors, debuggers, schedulers),
//!   `container.rs` (container engines' `run` and mounts), `exfil.rs`
//!   (`git add`/`push`, servers that publish a directory), `wipe.rs`
//!   (the removers), `text.rs` (the programs that take a script) and
//!   `startup.rs` (the shells' startup files). In the inert stage
//!   (`src/policy/inert/`): `git.rs` (which options of `git show`, `log`,
//!   `diff`, `blame`, `cat-file` print contents), `scripts.rs` (the sed,
//!   awk and jq languages), `found.rs` (the `find -exec` and `xargs`
//!   shapes), `tree.rs` (how `rg` and `grep -r` narrow a search) and
//!   `mod.rs` (the builtins it allows, the variables that steer a
//!   program). In redaction, `src/evidence/redact/stores.rs` (subcommands
//!   that store a secret, programs that read a password from standard
//!   input). In confinement, `src/confine/plan.rs` (what a confined program
//!   needs to read: the system's trees, `PATH`, git's configuration in the
//!   home).
//! - **The inert stage's verdict depends on the machine's files**
//!   (`src/policy/inert/`, see [`policy`]): it asks only through
//!   `policy::inert::Files`, which the engine answers from the disk
//!   (`engine::Disk`), but the answers are the machine's at decision time,
//!   so the verdict is not a function of the request alone. The engine
//!   computes it once per request, before the table runs
//!   (`engine::driver`), and the table reads it as data.
//! - **Outside JSON not read by [`json`]**, each under its own rules: the
//!   model's reply (`reviewer::wire`, `reviewer::verdict`: exactly one
//!   object, unknown fields refused), harness transcripts
//!   (`hooks::transcript`: a line that does not parse is skipped), the
//!   `tool_input` string of Cursor's MCP events (`hooks::harnesses::cursor`:
//!   kept as text when it does not parse), audit events (the lines of
//!   `vouch audit ingest` in `cli`, the array of `POST /v1/audit/events` in
//!   `http::routes`, each event then checked by `audit::ingest`), harness
//!   settings files (`install::json`; `doctor::repo` reads a repository's
//!   with JSONC comments) and `vouch eval` sets (`eval`: the field at
//!   fault is named, but what follows a case's object on its line is not
//!   refused; its request then goes through `Request::from_slice`).
//! - **Enum names written by hand** outside `named_enum!`:
//!   `audit::record::ResultKind`, `audit::subject::Kind` and `PathClass`,
//!   `audit::db::AwaitKind` (all stored in the audit database),
//!   `hooks::DeferAs` (`--defer-as`), and the serde `snake_case` names of
//!   `evidence::packet::Dropped` and `DropCause` and
//!   `session::overrides::Remedy` (JSON out). Enums with data keep their own
//!   tables (`request::Surface`, `reviewer::FailureClass::name`,
//!   `evidence::redact::SecretKind`); rule ids have their registry,
//!   [`rules`].
//! - **A harness is more than its file.** Its name, protected files and
//!   what its after-event reports are its entry in `src/catalogue.rs`
//!   (which the layers below the adapters read); its audit rule language
//!   is `src/audit/targets/<harness>.rs`. The parsers of Claude Code's,
//!   Codex's and Gemini CLI's transcripts are in `src/hooks/transcript.rs`;
//!   the repository files that switch each harness off, in
//!   `src/doctor/repo.rs` (one function per harness), with Gemini CLI's
//!   and Qwen Code's own settings checks in `src/doctor/mod.rs`; Codex's
//!   TOML settings in `src/install/codex_toml.rs` (its `CODEX_HOME` in
//!   `src/cli.rs`); the harnesses' credential files in
//!   `src/credentials.rs`; Claude Code's HTTP hook route in
//!   `src/http/`; pi-permission-system's rule language in
//!   `src/audit/targets/mod.rs`.
//!
//! # Layers
//!
//! A top-level module imports only from its own layer or those below
//! (`tests/it/layering.rs` reads every `crate::` path and fails on any
//! other; no import upward remains, and `KNOWN_UPWARD` is empty).
//! Lowest first:
//!
//! 1. the shared vocabulary and leaves: [`names`] (with [`names::Outcome`]
//!    and [`names::RiskLevel`]), [`json`], [`clock`], [`paths`], [`rules`],
//!    [`shell`], [`request`], [`telemetry`], [`credentials`],
//!    [`catalogue`];
//! 2. [`config`], with the routing table it compiles;
//! 3. what decides and its data: [`policy`], [`evidence`], [`reviewer`];
//!    then [`confine`]; then [`decision`], which carries them (the
//!    reviewer's verdict, the confined form) and holds the risk ceilings;
//! 4. state: [`store`], [`session`], [`grants`], [`audit`], [`feed`];
//! 5. [`pipeline`]; 6. [`engine`];
//! 7. the ways in: [`hooks`], [`http`], [`server`], [`eval`];
//! 8. what sets them up, reading the adapters: [`install`], [`doctor`];
//! 9. [`cli`].
//!
//! What the trust-boundary hard denies and the audit need to know of
//! each harness is in [`catalogue`], below them, not in the adapters
//! (`hooks`); the adapters describe their user settings in
//! `hooks::settings`, which [`install`] reads. The table's effects are
//! declared beside what applies them (`session::effects`, re-exported as
//! `pipeline::Effect`). No two top-level modules import each other, even
//! through others (the test checks that too).

pub mod audit;
pub mod catalogue;
pub mod cli;
pub mod clock;
pub mod config;
pub mod confine;
pub mod credentials;
pub mod decision;
pub mod doctor;
pub mod engine;
pub mod eval;
pub mod evidence;
pub mod feed;
pub mod grants;
pub mod hooks;
pub mod http;
pub mod install;
pub mod json;
pub mod names;
pub mod paths;
pub mod pipeline;
pub mod policy;
pub mod request;
pub mod reviewer;
pub mod rules;
pub mod server;
pub mod session;
pub use vouch_shell as shell;
pub mod store;
pub mod telemetry;
