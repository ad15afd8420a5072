//! `vouch hook <harness> --server URL`: the hook process on the developer's
//! machine has a central `vouch serve` decide, instead of running the whole
//! engine itself (a team shares one reviewer configuration, one model key,
//! one state and one audit).
//!
//! The process still does everything that needs the developer's machine:
//! it reads the harness's payload with the same adapter, gathers the
//! evidence the service cannot see (the harness's transcript file, the
//! prompt the harness's prompt hook recorded in the local state) and sends
//! it **inline** in the canonical request's `transcript`, so the service's
//! packet has the same user message the local path would. And it keeps the
//! floor: the hard denies and the refusals to decide (vouch's own files
//! inside the project, a loosening project overlay) are decided here first
//! ([`Engine::floor_here`]), with this machine's files and symlinks, so they
//! answer without a round trip, hold while the service is down, and no
//! service configuration can turn them into an allow. So is the inert
//! stage, with its confined form (docs/confine.md): which files a read
//! reaches is this machine's to say, and the request the service gets says
//! `remote_hook`, so the service never judges it inert on its own files.
//!
//! Everything else goes to `URL/v1/review` with the adapter token, and the
//! returned decision becomes the harness's reply exactly as a local one
//! would ([`super::answer_from`]: same shapes, same "ask only where a human
//! is asked"). A service that cannot be reached, does not answer in time,
//! refuses the token or answers anything but a decision for this very
//! request is the harness's fail-closed deny, tagged
//! `[vouch fault: unreachable]`; a setup that cannot work (no token, a bad
//! URL, plain http across the network, an unreadable CA file) is tagged
//! `[vouch fault: config_error]`. Never an allow.
//!
//! The hook's environment is the project's to set (see [`super::run`]), so
//! nothing here is taken from it but the token: no proxy variables (a
//! project-set `HTTPS_PROXY` must not see, or answer for, the service) and
//! no `SSL_CERT_FILE`/`SSL_CERT_DIR` (a project-set CA must not vouch for a
//! fake service). The URL, the token file and the CA file come from the hook
//! command line in the user's own harness settings.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde::Deserialize;

use super::call::{Answers, Wanted, config_error};
use super::{Answer, Call, DeferAs, HarnessId, answer_from, fault_answer};
use crate::decision::{Fault, Outcome};
use crate::engine::Engine;
use crate::request::{MAX_REQUEST_BYTES, Request, TranscriptEntry};

/// The variable that holds the adapter token when `--token-file` is not
/// given.
pub const TOKEN_ENV: &str = "VOUCH_ADAPTER_TOKEN";

/// The service's review route, below the `--server` URL.
const REVIEW_PATH: &str = "v1/review";

/// The system's trusted roots: the first PEM bundle found. Read from these
/// fixed places rather than wherever `SSL_CERT_FILE` points (the project
/// can set the hook's environment); a private CA goes in `--ca-file`.
pub const SYSTEM_ROOTS: &[&str] = &[
    // Debian, Ubuntu, Arch, Alpine, Gentoo (ca-certificates).
    "/etc/ssl/certs/ca-certificates.crt",
    // Fedora, RHEL, CentOS.
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/tls/certs/ca-bundle.crt",
    // openSUSE.
    "/etc/ssl/ca-bundle.pem",
    // macOS, the BSDs, Alpine.
    "/etc/ssl/cert.pem",
];

/// Time kept back from the hook's deadline, so the fail-closed reply for a
/// service that did not answer goes out before the watchdog's.
const REPLY_RESERVE: Duration = Duration::from_millis(250);

/// Largest body sent: the service's default (and largest legal)
/// `server.max_body_bytes`. The inline transcript is shortened, oldest
/// entries first, to fit.
const MAX_BODY_BYTES: usize = MAX_REQUEST_BYTES;

/// The latest user message is cut to this when the request does not fit
/// otherwise (the service's packet keeps far less of it anyway).
const MAX_USER_TEXT_BYTES: usize = 64 * 1024;

/// Largest decision read back; a decision is a few KiB.
const MAX_REPLY_BYTES: usize = 256 * 1024;

/// Largest token or CA file read.
const MAX_TOKEN_FILE_BYTES: u64 = 4096;
const MAX_CA_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// What the hook command line says about the central service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptions {
    /// `--server URL`: the service's base URL (`https://vouch.corp`); the
    /// hook posts to `URL/v1/review`.
    pub server: String,
    /// `--token-file FILE`: the adapter token; else [`TOKEN_ENV`].
    pub token_file: Option<PathBuf>,
    /// `--ca-file FILE`: the only roots trusted for an `https://` service
    /// (PEM); else the system's ([`SYSTEM_ROOTS`]).
    pub ca_file: Option<PathBuf>,
    /// `--allow-plain-http`: plain `http://` to a host that is not loopback.
    pub allow_plain_http: bool,
}

/// What the remote path reads of this machine besides the engine.
pub struct Local<'a> {
    /// The user's home, sent as the request's `home` when the harness gave
    /// none: the service judges paths against the developer's home, not
    /// its own.
    pub home: Option<PathBuf>,
    /// Reads one environment variable (the token's).
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// Why the remote setup cannot work: the hook fails closed with
/// `config_error`.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("`--server` is not a URL: `{url}`")]
    BadUrl { url: String },
    #[error("`--server` must be an `http://` or `https://` URL, not `{scheme}://`")]
    Scheme { scheme: String },
    #[error(
        "`--server` must not carry a user name, password, query or fragment (the token goes in \
         `--token-file` or `{TOKEN_ENV}`)"
    )]
    Extra,
    #[error(
        "`--server {url}` is plain http to a host that is not loopback: the token and the \
         decisions would cross the network in clear text; use `https://`, or pass \
         `--allow-plain-http` for a network you trust"
    )]
    PlainHttp { url: String },
    #[error("`--ca-file` needs an `https://` server")]
    CaWithoutTls,
    #[error("no adapter token: pass `--token-file FILE` or set `{TOKEN_ENV}`")]
    NoToken,
    #[error("cannot read the token file `{path}`: {problem}")]
    TokenFile { path: String, problem: String },
    #[error("the adapter token from {from} is empty or not one line of printable characters")]
    BadToken { from: String },
    #[error("cannot use the CA file `{path}`: {problem}")]
    CaFile { path: String, problem: String },
    #[error("no system certificate bundle found (looked in `{looked}`); pass `--ca-file`")]
    NoSystemRoots { looked: String },
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// Why the service gave no usable decision: the hook fails closed with
/// `unreachable`.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("the vouch service at `{server}` could not be reached: {problem}")]
    Transport { server: String, problem: String },
    #[error("the vouch service at `{server}` did not answer within {ms} ms")]
    Timeout { server: String, ms: u128 },
    #[error("no time was left before the hook's deadline to ask the vouch service")]
    NoTime,
    #[error("the vouch service at `{server}` refused the adapter token (HTTP 401)")]
    Unauthorized { server: String },
    #[error("the vouch service at `{server}` answered HTTP {status}{detail}")]
    Status {
        server: String,
        status: u16,
        detail: String,
    },
    #[error("the vouch service's answer is not a decision: {0}")]
    BadBody(String),
    #[error("the vouch service answered for another request (request hash `{got}`)")]
    OtherRequest { got: String },
    #[error("the request does not fit in {limit} bytes even without its transcript")]
    TooLarge { limit: usize },
    #[error("cannot start the runtime for the call: {0}")]
    Runtime(String),
    #[error("the call to the vouch service failed inside vouch: {0}")]
    Panic(String),
}

/// The part of the service's decision JSON (design §5) a harness's reply is
/// made from. Fields vouch does not read are ignored (a newer service may
/// add some); these must be there.
#[derive(Debug, Deserialize)]
struct Served {
    decision: Outcome,
    #[serde(default)]
    abstain: bool,
    message: String,
    request_hash: String,
}

/// A connection setup to the central service: the review URL, the
/// `Authorization` header and one client.
pub struct Remote {
    endpoint: reqwest::Url,
    /// `server` as given, for messages (never with a credential: refused).
    server: String,
    /// `Bearer <token>`, marked sensitive.
    authorization: HeaderValue,
    client: reqwest::Client,
    connect_timeout: Duration,
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token never reaches a log line.
        f.debug_struct("Remote")
            .field("endpoint", &self.endpoint.as_str())
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// Checks the options, reads the token and the roots, builds the client.
    pub fn connect(
        opts: &RemoteOptions,
        env: &dyn Fn(&str) -> Option<String>,
        connect_timeout: Duration,
    ) -> Result<Remote, SetupError> {
        let (endpoint, tls) = endpoint(opts)?;
        let authorization = authorization(opts, env)?;
        let builder = reqwest::Client::builder()
            // The environment's proxy variables are the project's to set.
            .no_proxy()
            // A redirect is not a decision (and must not carry the token on).
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(connect_timeout)
            .user_agent(concat!("vouch-hook/", env!("CARGO_PKG_VERSION")))
            .tls_built_in_root_certs(false);
        let builder = match tls {
            Tls::Plain => builder,
            Tls::Verified => {
                let roots = match &opts.ca_file {
                    Some(file) => ca_file(file)?,
                    None => system_roots()?,
                };
                roots.into_iter().fold(builder.https_only(true), |b, cert| {
                    b.add_root_certificate(cert)
                })
            }
        };
        let client = builder
            .build()
            .map_err(|e| SetupError::Client(error_chain(&e)))?;
        Ok(Remote {
            endpoint,
            server: opts.server.clone(),
            authorization,
            client,
            connect_timeout,
        })
    }

    /// Asks the service to decide `request`, before `until`.
    fn review(&self, request: &Request, until: Instant) -> Result<Served, CallError> {
        let body = fit_body(request)?;
        let left = until
            .saturating_duration_since(Instant::now())
            .saturating_sub(REPLY_RESERVE);
        if left.is_zero() {
            return Err(CallError::NoTime);
        }
        let runtime = CallRuntime::new()?;
        let server = || self.server.clone();
        let failed = |e: reqwest::Error| match e.is_timeout() {
            true => CallError::Timeout {
                server: server(),
                ms: match e.is_connect() {
                    true => self.connect_timeout.min(left).as_millis(),
                    false => left.as_millis(),
                },
            },
            false => CallError::Transport {
                server: server(),
                problem: error_chain(&e.without_url()),
            },
        };
        let (status, bytes) = runtime.block_on(async {
            // Built inside the runtime: its timers need one.
            let call = self
                .client
                .post(self.endpoint.clone())
                .header(AUTHORIZATION, self.authorization.clone())
                .header(CONTENT_TYPE, "application/json")
                .timeout(left)
                .body(body)
                .send();
            let mut response = call.await.map_err(failed)?;
            let status = response.status().as_u16();
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(failed)? {
                if bytes.len().saturating_add(chunk.len()) > MAX_REPLY_BYTES {
                    return Err(CallError::BadBody(format!(
                        "larger than {MAX_REPLY_BYTES} bytes"
                    )));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok((status, bytes))
        })?;
        match status {
            200 => {}
            401 => return Err(CallError::Unauthorized { server: server() }),
            status => {
                return Err(CallError::Status {
                    server: server(),
                    status,
                    detail: detail(&bytes),
                });
            }
        }
        let served: Served =
            crate::json::from_slice(&bytes).map_err(|e| CallError::BadBody(e.to_string()))?;
        // A decision for another request (a misrouted or replayed answer) is
        // not this call's.
        if served.request_hash != request.request_hash() {
            return Err(CallError::OtherRequest {
                got: served.request_hash,
            });
        }
        Ok(served)
    }
}

/// Decides a call with the central service: the evidence is gathered here
/// (transcript file, recorded prompt) and sent inline; each request meets
/// the local floor first, then the service; the strictest answer wins and
/// the first deny ends the call, as in [`super::run::decide_call_here`].
pub fn decide_call(
    engine: &Engine,
    harness_id: HarnessId,
    call: Call,
    defer_as: DeferAs,
    opts: &RemoteOptions,
    local: &Local<'_>,
    until: Instant,
) -> Answer {
    let evidence = Wanted::of(harness_id, &call).gather(engine);
    let mut answers = Answers::new(harness_id, &call, defer_as, evidence);
    let connect_timeout = Duration::from_millis(engine.config().hooks.server_connect_timeout_ms);
    // Set up on the first request the floor does not decide.
    let mut remote: Option<Result<Remote, SetupError>> = None;
    let home = local
        .home
        .as_deref()
        .map(|h| h.display().to_string())
        .filter(|h| h.starts_with('/'));
    for request in call.requests {
        let mut request = answers.with_transcript(request);
        redact_evidence(&mut request.transcript);
        if request.home.is_none() {
            request.home.clone_from(&home);
        }
        // The floor, and inert with its confined form: decided here, where
        // the files are (an inert allow is answered here too).
        if let Some(decision) = engine.floor_here(&request) {
            if answers.push(&decision) {
                break;
            }
            continue;
        }
        // The service cannot see this machine's files: it must not call
        // the command inert.
        request.remote_hook = true;
        let remote =
            remote.get_or_insert_with(|| Remote::connect(opts, local.env, connect_timeout));
        let answer = match remote {
            Ok(remote) => match caught(|| remote.review(&request, until)) {
                Ok(served) => answer_from(
                    served.decision,
                    served.abstain,
                    &served.message,
                    answers.presence(),
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "the vouch service gave no decision; failing closed");
                    fault_answer(Fault::Unreachable, &e)
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "the remote hook is not set up; failing closed");
                config_error(&e.to_string())
            }
        };
        if answers.push_answer(answer) {
            break;
        }
    }
    answers.strictest()
}

/// Redacts the transcript before it leaves this machine: the service
/// redacts the whole request again before anything reaches its packet,
/// state or logs, but a secret the agent saw has no business crossing the
/// network. The action fields are sent as they are (the service's hard
/// denies and the request hash read them).
fn redact_evidence(transcript: &mut [TranscriptEntry]) {
    use crate::evidence::redact::{redact_text, redact_value};
    for entry in transcript {
        match entry {
            TranscriptEntry::User { text }
            | TranscriptEntry::Assistant { text }
            | TranscriptEntry::Summary { text }
            | TranscriptEntry::ToolResult { text, .. } => {
                if let std::borrow::Cow::Owned(redacted) = redact_text(text) {
                    *text = redacted;
                }
            }
            TranscriptEntry::ToolCall { input, .. } => {
                if let Some(input) = input.as_mut() {
                    *input = redact_value(input);
                }
            }
        }
    }
}

/// Runs the call, turning a panic inside it (the HTTP stack's) into an
/// error: a hook process must answer with a fail-closed reply, not die into
/// its harness's fail-open path.
fn caught(f: impl FnOnce() -> Result<Served, CallError>) -> Result<Served, CallError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        Err(CallError::Panic(why))
    })
}

/// Whether the connection is TLS-verified or plain (loopback, or allowed).
enum Tls {
    Plain,
    Verified,
}

/// `URL/v1/review`, after the checks on the URL.
fn endpoint(opts: &RemoteOptions) -> Result<(reqwest::Url, Tls), SetupError> {
    let url = reqwest::Url::parse(&opts.server).map_err(|_| SetupError::BadUrl {
        url: opts.server.clone(),
    })?;
    if !url.username().is_empty()
        || url.password().is_some()
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(SetupError::Extra);
    }
    let Some(host) = url.host_str() else {
        return Err(SetupError::BadUrl {
            url: opts.server.clone(),
        });
    };
    let tls = match url.scheme() {
        "https" => Tls::Verified,
        "http" if opts.ca_file.is_some() => return Err(SetupError::CaWithoutTls),
        "http" if is_loopback(host) || opts.allow_plain_http => Tls::Plain,
        "http" => {
            return Err(SetupError::PlainHttp {
                url: opts.server.clone(),
            });
        }
        other => {
            return Err(SetupError::Scheme {
                scheme: other.to_owned(),
            });
        }
    };
    // The service may sit below a path (`https://host/vouch/`).
    let base = format!("{}/", url.as_str().trim_end_matches('/'));
    let endpoint = reqwest::Url::parse(&base)
        .and_then(|b| b.join(REVIEW_PATH))
        .map_err(|_| SetupError::BadUrl {
            url: opts.server.clone(),
        })?;
    Ok((endpoint, tls))
}

/// `localhost`, `127.0.0.0/8` or `[::1]`: traffic that never leaves the host.
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `Bearer <token>` from `--token-file`, else [`TOKEN_ENV`].
fn authorization(
    opts: &RemoteOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<HeaderValue, SetupError> {
    let (token, from) = match &opts.token_file {
        Some(path) => (
            read_small(path, MAX_TOKEN_FILE_BYTES).map_err(|problem| SetupError::TokenFile {
                path: path.display().to_string(),
                problem,
            })?,
            format!("`{}`", path.display()),
        ),
        None => (
            env(TOKEN_ENV).ok_or(SetupError::NoToken)?,
            format!("`{TOKEN_ENV}`"),
        ),
    };
    let token = token.trim();
    let printable = !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic());
    let bad = || SetupError::BadToken { from: from.clone() };
    if !printable {
        return Err(bad());
    }
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| bad())?;
    value.set_sensitive(true);
    Ok(value)
}

/// The certificates of a PEM file; at least one.
fn ca_file(path: &Path) -> Result<Vec<reqwest::Certificate>, SetupError> {
    let fail = |problem: String| SetupError::CaFile {
        path: path.display().to_string(),
        problem,
    };
    let pem = read_small(path, MAX_CA_FILE_BYTES).map_err(fail)?;
    pem_certificates(pem.as_bytes()).map_err(fail)
}

/// The first system bundle of [`SYSTEM_ROOTS`] that exists.
fn system_roots() -> Result<Vec<reqwest::Certificate>, SetupError> {
    let found = SYSTEM_ROOTS.iter().map(Path::new).find(|p| p.is_file());
    let Some(path) = found else {
        return Err(SetupError::NoSystemRoots {
            looked: SYSTEM_ROOTS.join("`, `"),
        });
    };
    ca_file(path)
}

fn pem_certificates(pem: &[u8]) -> Result<Vec<reqwest::Certificate>, String> {
    let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| error_chain(&e))?;
    match certs.is_empty() {
        true => Err("it holds no PEM certificate".to_owned()),
        false => Ok(certs),
    }
}

/// A small text file, read whole (at most `limit` bytes).
fn read_small(path: &Path, limit: u64) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(limit.saturating_add(1))
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    match u64::try_from(text.len()).unwrap_or(u64::MAX) > limit {
        true => Err(format!("larger than {limit} bytes")),
        false => Ok(text),
    }
}

/// The request as JSON, within [`MAX_BODY_BYTES`]: when the inline
/// transcript makes it larger, its oldest entries go first (never the
/// latest user message), then that message is cut.
fn fit_body(request: &Request) -> Result<Vec<u8>, CallError> {
    let encode = |r: &Request| serde_json::to_vec(r).map_err(|e| CallError::BadBody(e.to_string()));
    let body = encode(request)?;
    if body.len() <= MAX_BODY_BYTES {
        return Ok(body);
    }
    let mut shorter = request.clone();
    let latest_user = shorter
        .transcript
        .iter()
        .rposition(|e| matches!(e, TranscriptEntry::User { .. }));
    let mut excess = body.len().saturating_sub(MAX_BODY_BYTES);
    let mut kept = Vec::with_capacity(shorter.transcript.len());
    for (index, entry) in shorter.transcript.into_iter().enumerate() {
        let size = serde_json::to_vec(&entry).map_or(0, |v| v.len().saturating_add(1));
        if excess > 0 && Some(index) != latest_user {
            excess = excess.saturating_sub(size);
            continue;
        }
        kept.push(entry);
    }
    let dropped = request.transcript.len().saturating_sub(kept.len());
    shorter.transcript = kept;
    // Said, not silent: the service sees a shorter transcript than the
    // harness wrote.
    tracing::info!(
        dropped,
        limit = MAX_BODY_BYTES,
        "the inline transcript was shortened to fit the service's body limit, oldest entries first"
    );
    let body = encode(&shorter)?;
    if body.len() <= MAX_BODY_BYTES {
        return Ok(body);
    }
    tracing::info!(
        limit = MAX_USER_TEXT_BYTES,
        "the latest user message was cut to fit the service's body limit"
    );
    for entry in &mut shorter.transcript {
        if let TranscriptEntry::User { text } = entry {
            let mut cut = MAX_USER_TEXT_BYTES.min(text.len());
            while !text.is_char_boundary(cut) {
                cut = cut.saturating_sub(1);
            }
            text.truncate(cut);
        }
    }
    let body = encode(&shorter)?;
    match body.len() <= MAX_BODY_BYTES {
        true => Ok(body),
        false => Err(CallError::TooLarge {
            limit: MAX_BODY_BYTES,
        }),
    }
}

/// The start of an error body, for the message (4xx bodies carry detail;
/// redacted, as the agent reads it).
fn detail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text: String = text.trim().chars().take(300).collect();
    match text.is_empty() {
        true => String::new(),
        false => format!(": {}", crate::evidence::redact::redact_text(&text)),
    }
}

/// An error and its causes, one line (reqwest's own text stops at the top).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}

/// The single-threaded runtime one call runs on, dropped without waiting
/// for stray blocking tasks (a name lookup that hangs): the reply must not
/// wait on them.
struct CallRuntime(Option<tokio::runtime::Runtime>);

impl CallRuntime {
    fn new() -> Result<CallRuntime, CallError> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map(|rt| CallRuntime(Some(rt)))
            .map_err(|e| CallError::Runtime(e.to_string()))
    }

    fn block_on<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, CallError>>,
    ) -> Result<T, CallError> {
        match &self.0 {
            Some(rt) => rt.block_on(f),
            None => Err(CallError::Runtime("the runtime was not kept".to_owned())),
        }
    }
}

impl Drop for CallRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(server: &str) -> RemoteOptions {
        RemoteOptions {
            server: server.to_owned(),
            token_file: None,
            ca_file: None,
            allow_plain_http: false,
        }
    }

    #[test]
    fn the_review_route_sits_below_the_server_url() {
        for (server, want) in [
            ("http://127.0.0.1:8787", "http://127.0.0.1:8787/v1/review"),
            ("http://localhost:8787/", "http://localhost:8787/v1/review"),
            (
                "https://vouch.corp/team",
                "https://vouch.corp/team/v1/review",
            ),
            (
                "https://vouch.corp/team/",
                "https://vouch.corp/team/v1/review",
            ),
            ("http://[::1]:9/", "http://[::1]:9/v1/review"),
        ] {
            let (url, _) = endpoint(&opts(server)).unwrap();
            assert_eq!(url.as_str(), want, "{server}");
        }
    }

    #[test]
    fn plain_http_leaves_the_host_only_when_allowed() {
        assert!(matches!(
            endpoint(&opts("http://vouch.corp")),
            Err(SetupError::PlainHttp { .. })
        ));
        assert!(matches!(
            endpoint(&opts("http://10.0.0.1:8787")),
            Err(SetupError::PlainHttp { .. })
        ));
        let mut allowed = opts("http://vouch.corp");
        allowed.allow_plain_http = true;
        assert!(matches!(endpoint(&allowed), Ok((_, Tls::Plain))));
        assert!(matches!(
            endpoint(&opts("http://127.0.0.2:1")),
            Ok((_, Tls::Plain))
        ));
        let mut ca = opts("http://127.0.0.1:1");
        ca.ca_file = Some(PathBuf::from("/ca.pem"));
        assert!(matches!(endpoint(&ca), Err(SetupError::CaWithoutTls)));
    }

    #[test]
    fn odd_urls_are_refused() {
        for server in [
            "vouch.corp",
            "ftp://vouch.corp",
            "https://user:pw@vouch.corp",
            "https://vouch.corp/?token=x",
            "unix:/run/vouch.sock",
        ] {
            assert!(endpoint(&opts(server)).is_err(), "{server}");
        }
    }

    #[test]
    fn the_token_comes_from_the_file_else_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("adapter.token");
        std::fs::write(&file, "file-token\n").unwrap();
        let env = |name: &str| (name == TOKEN_ENV).then(|| "env-token".to_owned());
        let mut o = opts("http://127.0.0.1:1");
        assert_eq!(authorization(&o, &env).unwrap(), "Bearer env-token");
        o.token_file = Some(file);
        let header = authorization(&o, &env).unwrap();
        assert_eq!(header, "Bearer file-token");
        assert!(header.is_sensitive());
        assert!(!format!("{header:?}").contains("file-token"));
        let none = |_: &str| None;
        assert!(matches!(
            authorization(&opts("http://127.0.0.1:1"), &none),
            Err(SetupError::NoToken)
        ));
        let odd = |_: &str| Some("two words".to_owned());
        let err = authorization(&opts("http://127.0.0.1:1"), &odd).unwrap_err();
        assert!(!err.to_string().contains("two words"), "{err}");
    }

    #[test]
    fn a_huge_transcript_is_cut_oldest_first_keeping_the_latest_user_message() {
        let mut request: Request = serde_json::from_value(
            serde_json::json!({"session_id": "s", "surface": "bash", "command": "ls"}),
        )
        .unwrap();
        let big = "x".repeat(300 * 1024);
        request.transcript = vec![
            TranscriptEntry::User { text: big.clone() },
            TranscriptEntry::Assistant { text: big.clone() },
            TranscriptEntry::User {
                text: "latest".to_owned(),
            },
            TranscriptEntry::Assistant { text: big.clone() },
            TranscriptEntry::Assistant { text: big },
        ];
        let body = fit_body(&request).unwrap();
        assert!(body.len() <= MAX_BODY_BYTES);
        let sent: Request = serde_json::from_slice(&body).unwrap();
        assert!(sent.transcript.contains(&TranscriptEntry::User {
            text: "latest".to_owned()
        }));
        assert!(sent.transcript.len() < 5);
    }
}
