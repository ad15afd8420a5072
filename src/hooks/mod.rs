//! Harness adapters (design §7.3): each coding-agent harness's own hook JSON
//! in, the canonical [`Request`] through the one engine call, the harness's
//! own reply out — in the harness's fail-closed terms.
//!
//! One [`Harness`] per harness (its own file) does three things: parse an
//! event (which tool, which turn, which transcript), map its tools onto
//! surfaces, and render an [`Answer`] in the harness's reply schema. What is
//! shared lives here: turning a [`Decision`] into an answer (a `defer`
//! becomes "ask" only where a human will really be asked, else a deny that
//! says a human must approve), combining the decisions of a call that names
//! several targets, and the fault replies. A new harness is its adapter file
//! plus its entries in the tables that name every harness today (the
//! `HarnessId` arms, the hook timeouts in [`run`], the snippets, the CLI
//! variant, the trust-boundary files and the audit targets).
//!
//! Faults never reach a harness's fail-open path: every parse error, config
//! error, internal error or deadline is a well-formed deny (see [`run`]).

pub mod claude_code;
pub mod codex;
pub mod cursor;
pub mod gemini;
pub mod run;
pub mod snippet;
pub mod tools;
pub mod transcript;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::decision::{Decision, Outcome};
use crate::request::{Request, RequestError};

pub use run::{HookOptions, decide_call, run_hook};

/// The harnesses vouch has adapters for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HarnessId {
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
}

impl HarnessId {
    pub const ALL: [HarnessId; 4] = [
        HarnessId::ClaudeCode,
        HarnessId::Codex,
        HarnessId::Gemini,
        HarnessId::Cursor,
    ];

    /// The name on the command line, in the HTTP route and in `source`.
    pub fn as_str(self) -> &'static str {
        match self {
            HarnessId::ClaudeCode => "claude-code",
            HarnessId::Codex => "codex",
            HarnessId::Gemini => "gemini",
            HarnessId::Cursor => "cursor",
        }
    }

    /// The adapter.
    pub fn harness(self) -> &'static dyn Harness {
        match self {
            HarnessId::ClaudeCode => &claude_code::ClaudeCode,
            HarnessId::Codex => &codex::Codex,
            HarnessId::Gemini => &gemini::Gemini,
            HarnessId::Cursor => &cursor::Cursor,
        }
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
        HarnessId::ALL
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| HookError::UnknownHarness(s.to_owned()))
    }
}

/// Why a hook call could not become canonical requests.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("unknown harness `{0}`: expected `claude-code`, `codex`, `gemini` or `cursor`")]
    UnknownHarness(String),
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptRef {
    pub path: String,
    pub format: transcript::Format,
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

/// What one hook call asks of vouch.
#[derive(Debug, Clone)]
pub enum Event {
    /// A tool is about to run: decide.
    Decide(Call),
    /// A tool ran: record it; answer the harness's no-op.
    Observe(Box<Observed>),
    /// Session, prompt, stop and similar events: nothing to decide.
    Ignore { event: String },
}

impl Event {
    pub fn name(&self) -> &str {
        match self {
            Event::Decide(c) => &c.event,
            Event::Observe(o) => &o.event,
            Event::Ignore { event } => event,
        }
    }
}

/// One harness's adapter.
pub trait Harness: Sync {
    fn id(&self) -> HarnessId;

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

    /// The reply for an input that could not be read, for event `event`.
    fn fault_reply(&self, event: &str, why: &dyn fmt::Display) -> Reply {
        if self.after_events().contains(&event) {
            // The reason may quote the input (a URL), which the logs must not keep.
            let why = crate::evidence::redact::redact_text(&why.to_string()).into_owned();
            tracing::warn!(event, error = %why, "unreadable after-the-fact hook input");
            return self.no_op(event);
        }
        self.render(event, &fault_answer(why))
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
    match decision.outcome() {
        // An abstain (`pass` routing, or no model): the harness's own rules decide.
        Outcome::Allow if decision.abstain() => Answer::Abstain,
        Outcome::Allow => Answer::Allow(decision.message().to_owned()),
        Outcome::Deny => Answer::Deny(decision.message().to_owned()),
        // A person will see the harness's prompt.
        Outcome::Defer => match presence {
            Presence::Human => Answer::Ask(decision.message().to_owned()),
            // Nobody to ask: "ask" would hang or be refused; say so.
            Presence::Nobody(why) => Answer::Deny(format!(
                "{} No human can be asked here ({why}), so vouch blocked it: a human must \
                 approve this action before it runs.",
                decision.message()
            )),
        },
    }
}

/// The strictest of several answers: any deny, else any ask, else any
/// allow, else abstain. An empty list is a deny (nothing was decided).
pub fn strictest(answers: Vec<Answer>) -> Answer {
    let mut best: Option<Answer> = None;
    for answer in answers {
        let rank = |a: &Answer| match a {
            Answer::Abstain => 0,
            Answer::Allow(_) => 1,
            Answer::Ask(_) => 2,
            Answer::Deny(_) => 3,
        };
        best = match best {
            Some(b) if rank(&b) >= rank(&answer) => Some(b),
            Some(_) | None => Some(answer),
        };
    }
    best.unwrap_or_else(|| Answer::Deny("vouch found nothing to decide in this call".to_owned()))
}

/// A deny for a fault, worded as a failure rather than a risk judgement.
pub fn fault_answer(why: &dyn fmt::Display) -> Answer {
    Answer::Deny(format!(
        "vouch could not review this tool call, so it was blocked. This is a failure of the \
         reviewer, not a judgement that the action is risky: {why}"
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
        for h in HarnessId::ALL {
            assert_eq!(h.as_str().parse::<HarnessId>().unwrap(), h);
            assert_eq!(h.harness().id(), h);
        }
        assert!("pi".parse::<HarnessId>().is_err());
    }
}
