//! Harness adapters (design §7.3): each coding-agent harness's own hook JSON
//! in, the canonical [`Request`] through the one engine call, the harness's
//! own reply out — in the harness's fail-closed terms.
//!
//! A harness's adapter is one file in `src/hooks/harnesses/` holding one
//! [`Harness`]: its payload parsing and reply schema, its abstain/ask/deny
//! forms per event, its hook timeout, its settings snippet and user
//! settings (described in [`settings`]'s data types, which `vouch install`
//! reads), where its transcript is and in which format. `build.rs` lists
//! the files into [`harnesses::ALL`], the registry the ways in read: the
//! command line (`vouch hook <name>`, `vouch hook snippet <name>`), the
//! HTTP route, `vouch install` and `vouch doctor`. What the layers below
//! need to know of a harness is in its entry of [`crate::catalogue`],
//! which the adapter names ([`Harness::entry`]): its name, the
//! configuration files the agent must not write ([`HarnessFiles`], read by
//! the trust-boundary hard denies) and whether its after-event reports the
//! arguments that ran (read by the audit). Its audit rule language is the
//! audit's (`src/audit/targets/<harness>.rs`, `vouch audit report
//! --target`). Nor is the rest of a harness all in its file: the parsers
//! of Claude Code's, Codex's and Gemini CLI's transcripts are in
//! [`transcript`] (Copilot CLI's and Qwen Code's are in their files), the
//! repository files that switch each harness off in `doctor::repo`,
//! Codex's TOML settings in `install::codex_toml`, the harnesses'
//! credential files in `credentials` (the Known gaps of
//! `src/lib.rs`).
//!
//! What is shared lives here: turning a [`Decision`] into an answer (a
//! `defer` becomes "ask" only where a human will really be asked, else a
//! deny that says a human must approve), combining the decisions of a
//! call that names several targets, and the fault replies.
//!
//! Faults never reach a harness's fail-open path: every parse error, config
//! error, internal error or deadline is a well-formed deny (see [`run`]),
//! and `vouch hook` decides in a worker it supervises, so a crash of the
//! decision itself is one too (see [`supervise`]).

mod call;
pub mod remote;
pub mod run;
pub mod settings;
pub mod snippet;
pub mod supervise;
pub mod tools;
pub mod transcript;

/// The adapters, one module per file of `src/hooks/harnesses/`, and
/// [`harnesses::ALL`].
pub mod harnesses {
    include!(concat!(env!("OUT_DIR"), "/harnesses.rs"));
}

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde_json::Value;

use crate::catalogue::{self, HarnessFiles};
use crate::decision::{Decision, Fault, Outcome};
use crate::request::{Request, RequestError};

pub use run::{HookOptions, decide_call, record_prompt, run_hook};

/// Shortest hook deadline vouch works with; a harness timeout too short
/// for it still gets an answer, just a fail-closed one sooner.
pub const MIN_DEADLINE_MS: u64 = 500;

pub use snippet::{SnippetContext, SnippetOptions};

/// One harness of [`harnesses::ALL`], by name: what the command line, the
/// HTTP route and a request's `source` carry.
#[derive(Clone, Copy)]
pub struct HarnessId(&'static dyn Harness);

impl HarnessId {
    /// A harness by its adapter.
    pub fn of(harness: &'static dyn Harness) -> HarnessId {
        HarnessId(harness)
    }

    /// The harness named `name`, if vouch has its adapter.
    pub fn named(name: &str) -> Option<HarnessId> {
        HarnessId::all().find(|h| h.as_str() == name)
    }

    /// Every harness, in the registry's order.
    pub fn all() -> impl Iterator<Item = HarnessId> {
        harnesses::ALL.iter().map(|h| HarnessId(*h))
    }

    /// Every harness name, for messages and the command line.
    pub fn names() -> Vec<&'static str> {
        HarnessId::all().map(HarnessId::as_str).collect()
    }

    /// The name on the command line, in the HTTP route and in `source`.
    pub fn as_str(self) -> &'static str {
        self.0.name()
    }

    /// The adapter.
    pub fn harness(self) -> &'static dyn Harness {
        self.0
    }
}

impl PartialEq for HarnessId {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for HarnessId {}

impl Hash for HarnessId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for HarnessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HarnessId({})", self.as_str())
    }
}

impl fmt::Display for HarnessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HarnessId {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HarnessId::named(s).ok_or_else(|| HookError::UnknownHarness {
            name: s.to_owned(),
            known: HarnessId::names().join("`, `"),
        })
    }
}

/// Why a hook call could not become canonical requests.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("unknown harness `{name}`: expected one of `{known}`")]
    UnknownHarness { name: String, known: String },
    #[error("hook input is not valid JSON: {0}")]
    Json(String),
    #[error("hook input is larger than the limit of {limit} bytes")]
    TooLarge { limit: usize },
    #[error("field `{0}` is missing or not a string")]
    MissingField(&'static str),
    #[error("hook event `{0}` is not one this adapter knows")]
    UnknownEvent(String),
    #[error("tool `{tool}`: field `tool_input.{field}` is missing or not a string")]
    MissingInput { tool: String, field: &'static str },
    #[error("tool `{tool}`: field `tool_input.{field}` is not a URL with a host: `{url}`")]
    BadUrl {
        tool: String,
        field: &'static str,
        url: String,
    },
    #[error("tool `{tool}`: {problem}")]
    BadInput { tool: String, problem: String },
    #[error("{0}")]
    Request(#[from] RequestError),
}

/// Whether a human will really be asked when vouch answers "ask".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// The harness shows its own approval prompt to a person.
    Human,
    /// Nobody will see a prompt (headless, bypass modes, an event without
    /// "ask"): a `defer` must become a deny saying a human must approve.
    Nobody(&'static str),
}

/// What vouch tells the harness, before the harness's own schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// No opinion: the harness's own rules decide.
    Abstain,
    Allow(String),
    /// An inert command, allowed only as its confined form: the harness
    /// runs `confined` in place of the call (docs/confine.md). Only for a
    /// request whose adapter said the harness rewrites the call
    /// ([`runs_rewritten`]); an adapter that cannot rewrite renders it as a
    /// deny ([`cannot_rewrite`]), never as a plain allow.
    AllowConfined {
        message: String,
        confined: crate::confine::Confined,
    },
    Deny(String),
    /// Hand the call to the human in the harness's prompt. Only produced
    /// when [`Presence::Human`].
    Ask(String),
}

/// The harness's reply: a JSON object on stdout, or nothing at all (what
/// Codex reads as "no objection").
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Json(Value),
    Empty,
}

impl Reply {
    /// The bytes printed on stdout (a JSON line, or nothing).
    pub fn to_stdout(&self) -> String {
        match self {
            Reply::Json(v) => format!("{v}\n"),
            Reply::Empty => String::new(),
        }
    }

    /// The HTTP body: `{}` stands for "nothing".
    pub fn to_json(&self) -> Value {
        match self {
            Reply::Json(v) => v.clone(),
            Reply::Empty => Value::Object(serde_json::Map::new()),
        }
    }
}

/// Where the harness keeps its transcript, and in which format.
#[derive(Debug, Clone)]
pub struct TranscriptRef {
    pub path: String,
    pub format: &'static dyn transcript::Format,
}

/// A tool call about to run: one or more canonical requests (a patch or a
/// multi-file read names several targets; each is decided and the strictest
/// answer wins), the transcript to read, and whom "ask" reaches.
#[derive(Debug, Clone)]
pub struct Call {
    pub event: String,
    pub requests: Vec<Request>,
    pub transcript: Option<TranscriptRef>,
    pub presence: Presence,
    /// The harness gave no turn id: take it from the transcript's latest
    /// user message.
    pub turn_from_transcript: bool,
}

/// A tool call that already happened (`PostToolUse`, `AfterTool`,
/// `after*`): for the audit only, it never changes a decision.
#[derive(Debug, Clone)]
pub struct Observed {
    pub event: String,
    pub request: Request,
    /// Whether the tool reported success, when the harness says.
    pub succeeded: Option<bool>,
}

/// A user prompt the harness has accepted (Claude Code's
/// `UserPromptSubmit` and its counterparts): recorded as the session's
/// latest prompt for the turn's tool calls, whose transcript may not hold
/// it yet. Never decided.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub event: String,
    pub session_id: String,
    /// The harness's turn id for the prompt, when the event names one (the
    /// same id its tool calls carry).
    pub turn_id: Option<String>,
    /// The prompt as the user wrote it (redacted before it is stored).
    pub text: String,
}

/// What one hook call asks of vouch.
#[derive(Debug, Clone)]
pub enum Event {
    /// A tool is about to run: decide.
    Decide(Call),
    /// A tool ran: record it; answer the harness's no-op.
    Observe(Box<Observed>),
    /// The user submitted a prompt: record it; answer the harness's no-op
    /// (a prompt is never blocked, see [`run::record_prompt`]).
    Prompt(Box<Prompt>),
    /// Session, stop and similar events: nothing to decide.
    Ignore { event: String },
}

impl Event {
    pub fn name(&self) -> &str {
        match self {
            Event::Decide(c) => &c.event,
            Event::Observe(o) => &o.event,
            Event::Prompt(p) => &p.event,
            Event::Ignore { event } => event,
        }
    }
}

/// One harness's adapter: what vouch knows about the harness beyond its
/// [`catalogue::Entry`] (which it names) and its audit rule language.
pub trait Harness: Sync {
    /// The harness's entry in the catalogue: its name, the configuration
    /// the agent must not write and what its after-event reports.
    fn entry(&self) -> &'static catalogue::Entry;

    /// The name on the command line, in the HTTP route and in `source`
    /// (`claude-code`), from the catalogue.
    fn name(&self) -> &'static str {
        self.entry().name
    }

    /// One line for `vouch hook --help`: the harness and its events.
    fn about(&self) -> &'static str;

    /// The harness's own hook timeout, in seconds, when the command line
    /// does not say (`--timeout`): vouch answers before it.
    fn default_timeout_secs(&self) -> u64;

    /// The settings fragment for the user's own harness configuration, and
    /// notes for the user (where it goes, what to check).
    fn snippet(&self, ctx: &SnippetContext<'_>) -> Result<(String, Vec<String>), String>;

    /// Where `vouch install` merges the snippet: the harness's user-level
    /// settings file and its format ([`settings`], read by
    /// `crate::install`); `None` where vouch has no installer.
    fn install(&self) -> Option<settings::Install> {
        None
    }

    /// The harness's configuration the agent must not write, from the
    /// catalogue.
    fn protected(&self) -> HarnessFiles {
        self.entry().protected
    }

    /// Maps one hook input onto canonical requests. `input` is the parsed
    /// JSON object; fields vouch does not read are ignored (harnesses add
    /// fields across versions), fields it decides on are checked.
    fn parse(&self, input: &Value) -> Result<Event, HookError>;

    /// The reply for `answer` to an event named `event`.
    fn render(&self, event: &str, answer: &Answer) -> Reply;

    /// The reply to an event vouch decides nothing about.
    fn no_op(&self, event: &str) -> Reply;

    /// The event vouch assumes when the input did not say (unreadable
    /// stdin): its primary pre-tool event.
    fn primary_event(&self) -> &'static str;

    /// The after-the-fact events: an input vouch cannot read there is
    /// answered with the no-op (the tool already ran; a deny would mean
    /// nothing, and some harnesses reject its shape).
    fn after_events(&self) -> &'static [&'static str];

    /// Whether something after vouch's check can change a call's arguments
    /// and the after-event reports the arguments that actually ran, from
    /// the catalogue ([`catalogue::Entry::after_event_has_ran_arguments`]).
    fn after_event_has_ran_arguments(&self) -> bool {
        self.entry().after_event_has_ran_arguments
    }

    /// The prompt events (Claude Code's `UserPromptSubmit`): recorded,
    /// never decided, and never blocked — an input vouch cannot read there
    /// is answered with the no-op too.
    fn prompt_events(&self) -> &'static [&'static str] {
        &[]
    }

    /// The reply for a call vouch could not decide (`fault`: an input that
    /// could not be read, the hook's deadline), for event `event`.
    fn fault_reply(&self, event: &str, fault: Fault, why: &dyn fmt::Display) -> Reply {
        if self.prompt_events().contains(&event) {
            // A prompt is never blocked (see `run::record_prompt`); the
            // reason may quote the prompt, which the logs must not keep.
            let why = crate::evidence::redact::redact_text(&why.to_string()).into_owned();
            tracing::warn!(event, error = %why, "unreadable prompt event; the prompt goes through");
            return self.no_op(event);
        }
        if self.after_events().contains(&event) {
            // The reason may quote the input (a URL), which the logs must not keep.
            let why = crate::evidence::redact::redact_text(&why.to_string()).into_owned();
            tracing::warn!(event, error = %why, "unreadable after-the-fact hook input");
            return self.no_op(event);
        }
        self.render(event, &fault_answer(fault, why))
    }

    /// Whether `event`'s reply schema has an "ask" at all.
    fn can_ask(&self, _event: &str) -> bool {
        true
    }

    /// Who will see an "ask", once the transcript has been read.
    fn refine_presence(
        &self,
        _event: &str,
        presence: Presence,
        _transcript: &transcript::Transcript,
    ) -> Presence {
        presence
    }
}

/// How `defer` is mapped, from the hook command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeferAs {
    /// Per event, from what the harness says about who is there.
    #[default]
    Auto,
    /// The user promises a person watches every session: "ask" wherever
    /// the event has it.
    Ask,
    /// Never ask: every `defer` is a deny.
    Deny,
}

impl FromStr for DeferAs {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(DeferAs::Auto),
            "ask" => Ok(DeferAs::Ask),
            "deny" => Ok(DeferAs::Deny),
            other => Err(format!(
                "`{other}` is not one of `auto`, `ask`, `deny` for --defer-as"
            )),
        }
    }
}

impl DeferAs {
    /// Applies the command-line choice to what the event says.
    pub fn presence(self, event: Presence, event_has_ask: bool) -> Presence {
        match (self, event_has_ask) {
            // An event without "ask" can only deny, whatever the user says.
            (_, false) => Presence::Nobody("this hook event cannot ask a human"),
            (DeferAs::Auto, true) => event,
            (DeferAs::Ask, true) => Presence::Human,
            (DeferAs::Deny, true) => Presence::Nobody("`--defer-as deny` is set"),
        }
    }
}

/// The answer for one pipeline decision.
pub fn answer_for(decision: &Decision, presence: Presence) -> Answer {
    if let (Outcome::Allow, Some(confined)) = (decision.outcome(), decision.confined()) {
        return Answer::AllowConfined {
            message: decision.message().to_owned(),
            confined: confined.clone(),
        };
    }
    answer_from(
        decision.outcome(),
        decision.abstain(),
        decision.message(),
        presence,
    )
}

/// Marks the bash requests of a call to one of `tools` as runnable in
/// their confined form: the adapter's harness runs the rewritten command
/// its reply carries (`updatedInput`, `tool_input`, `modifiedArgs`).
pub fn runs_rewritten(requests: &mut [Request], tools: &[&str]) {
    for request in requests {
        let shell_tool = request.tool.as_deref().is_some_and(|t| tools.contains(&t));
        if request.surface == crate::request::Surface::Bash && shell_tool {
            request.can_run_confined = true;
        }
    }
}

/// The reason of the deny an adapter that cannot rewrite a call renders
/// for [`Answer::AllowConfined`] (which it never asked for): the command
/// was allowed only confined, so anything but its confined form is a deny.
pub fn cannot_rewrite(harness: &str) -> String {
    format!(
        "vouch allowed this command only in its confined form, and {harness} cannot run a \
         rewritten command, so it was blocked."
    )
}

/// The answer for a decision's outcome, abstain flag and message: what
/// [`answer_for`] reads of a [`Decision`], and all a remote hook reads of
/// the decision JSON the central service returns ([`remote`]).
pub fn answer_from(outcome: Outcome, abstain: bool, message: &str, presence: Presence) -> Answer {
    match outcome {
        // An abstain (`pass` routing, or no model): the harness's own rules decide.
        Outcome::Allow if abstain => Answer::Abstain,
        Outcome::Allow => Answer::Allow(message.to_owned()),
        Outcome::Deny => Answer::Deny(message.to_owned()),
        // A person will see the harness's prompt.
        Outcome::Defer => match presence {
            Presence::Human => Answer::Ask(message.to_owned()),
            // Nobody to ask: "ask" would hang or be refused; say so.
            Presence::Nobody(why) => Answer::Deny(format!(
                "{message} No human can be asked here ({why}), so vouch blocked it: a human \
                 must approve this action before it runs."
            )),
        },
    }
}

/// The strictest of several answers: any deny, else any ask, else any
/// allow, else abstain. An empty list is a deny (nothing was decided).
pub fn strictest(answers: Vec<Answer>) -> Answer {
    let mut best: Option<Answer> = None;
    for answer in answers {
        // A confined allow outranks a plain one: its rewrite must survive.
        let rank = |a: &Answer| match a {
            Answer::Abstain => 0,
            Answer::Allow(_) => 1,
            Answer::AllowConfined { .. } => 2,
            Answer::Ask(_) => 3,
            Answer::Deny(_) => 4,
        };
        best = match best {
            Some(b) if rank(&b) >= rank(&answer) => Some(b),
            Some(_) | None => Some(answer),
        };
    }
    best.unwrap_or_else(|| Answer::Deny("vouch found nothing to decide in this call".to_owned()))
}

/// A deny for a fault, worded as a failure rather than a risk judgement.
pub fn fault_answer(fault: Fault, why: &dyn fmt::Display) -> Answer {
    Answer::Deny(format!(
        "{} vouch could not review this tool call, so it was blocked. This is a failure of the \
         reviewer, not a judgement that the action is risky: {why}",
        fault.tag()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Routed;

    #[test]
    fn defer_asks_only_where_a_human_is_asked() {
        let d = Decision::routed(
            Routed::Human,
            "h".into(),
            crate::pipeline::NO_REVIEWER_RULE.into(),
            "no reviewer".into(),
        );
        assert!(matches!(answer_for(&d, Presence::Human), Answer::Ask(_)));
        let Answer::Deny(m) = answer_for(&d, Presence::Nobody("headless run")) else {
            panic!("defer without a human must deny");
        };
        assert!(m.contains("a human must approve"), "{m}");
        assert!(m.contains("headless run"), "{m}");
    }

    #[test]
    fn strictest_wins() {
        let a = strictest(vec![
            Answer::Abstain,
            Answer::Allow("a".into()),
            Answer::Deny("d".into()),
            Answer::Ask("q".into()),
        ]);
        assert_eq!(a, Answer::Deny("d".into()));
        assert_eq!(
            strictest(vec![Answer::Abstain, Answer::Allow("a".into())]),
            Answer::Allow("a".into())
        );
        assert!(matches!(strictest(vec![]), Answer::Deny(_)));
    }

    #[test]
    fn defer_as_never_invents_an_ask() {
        let human = Presence::Human;
        assert!(matches!(
            DeferAs::Ask.presence(human, false),
            Presence::Nobody(_)
        ));
        assert_eq!(DeferAs::Auto.presence(human, true), human);
        assert!(matches!(
            DeferAs::Deny.presence(human, true),
            Presence::Nobody(_)
        ));
        assert_eq!(
            DeferAs::Ask.presence(Presence::Nobody("x"), true),
            Presence::Human
        );
    }

    #[test]
    fn harness_names_round_trip() {
        let names = HarnessId::names();
        for required in ["claude-code", "codex", "cursor", "gemini"] {
            assert!(names.contains(&required), "{names:?}");
        }
        for h in HarnessId::all() {
            assert_eq!(h.as_str().parse::<HarnessId>().unwrap(), h);
            assert_eq!(h.harness().name(), h.as_str());
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "two harnesses share a name");
        let err = "pi".parse::<HarnessId>().unwrap_err().to_string();
        assert!(err.contains("`claude-code`"), "{err}");
    }
}
