//! One tool call's evidence and answers, shared by the two ways a hook
//! decides ([`super::run`] in this process, [`super::remote`] through the
//! central service): what its evidence is gathered from ([`Wanted`]), the
//! transcript its requests are given, and its answers so far
//! ([`Answers`]), of which the strictest is the reply.

use std::path::Path;

use super::transcript::{self, Transcript};
use super::{Answer, Call, DeferAs, HarnessId, Presence, TranscriptRef, answer_for, strictest};
use crate::decision::Fault;
use crate::engine::Engine;
use crate::request::{
    MAX_TRANSCRIPT_ENTRIES, PromptSource, Request, TranscriptEntry, TranscriptFile,
    TranscriptSource,
};
use crate::session::prompts::PromptKey;

/// What a call's evidence is gathered from: its transcript file, and its
/// session's recorded prompt.
pub(super) struct Wanted {
    source: &'static str,
    transcript: Option<TranscriptRef>,
    session: Option<String>,
    turn: Option<String>,
}

/// A call's transcript as its requests get it, and where it came from.
#[derive(Debug, Default)]
pub(super) struct Evidence {
    transcript: Transcript,
    source: TranscriptSource,
}

impl Wanted {
    pub(super) fn of(harness_id: HarnessId, call: &Call) -> Wanted {
        let first = call.requests.first();
        Wanted {
            source: harness_id.as_str(),
            transcript: call.transcript.clone(),
            session: first.map(|r| r.session_id.clone()),
            turn: first.and_then(|r| r.turn_id.clone()),
        }
    }

    /// Reads the transcript's tail; when it holds no user message (the
    /// harness may not have written the file yet), the session's recorded
    /// prompt stands in for it, as untrusted evidence like any transcript
    /// text. Blocking (file, SQLite); never fails.
    pub(super) fn gather(self, engine: &Engine) -> Evidence {
        let tail = engine.config().hooks.transcript_tail_bytes;
        let (mut transcript, file) = match (&self.transcript, tail) {
            (Some(t), 1..) => {
                let read = transcript::read(Path::new(&t.path), t.format, tail);
                let file = match read.read {
                    true => TranscriptFile::Read,
                    false => TranscriptFile::Missing,
                };
                (read, file)
            }
            (Some(_) | None, _) => (Transcript::default(), TranscriptFile::NotRead),
        };
        let has_user = transcript
            .entries
            .iter()
            .any(|e| matches!(e, TranscriptEntry::User { .. }));
        // The store is read only when the transcript has no user message.
        let recorded = match has_user {
            true => None,
            false => self.recorded(engine),
        };
        let prompt = match (has_user, recorded) {
            (true, _) => PromptSource::Transcript,
            (false, Some(text)) => {
                // Before the turn's tool calls, which it led to; the
                // oldest entry makes room when the window is full.
                if transcript.entries.len() >= MAX_TRANSCRIPT_ENTRIES {
                    transcript.entries.remove(0);
                }
                transcript.entries.insert(0, TranscriptEntry::User { text });
                PromptSource::Record
            }
            (false, None) => PromptSource::Nowhere,
        };
        Evidence {
            transcript,
            source: TranscriptSource::Harness { file, prompt },
        }
    }

    /// The session's recorded prompt for this turn, if any. A store that
    /// cannot be read leaves the transcript as it is (the review goes on,
    /// and its packet says no user message was found).
    fn recorded(&self, engine: &Engine) -> Option<String> {
        let session = self.session.as_deref()?;
        let key = PromptKey {
            source: self.source,
            session,
        };
        match engine.recorded_prompt(key, self.turn.as_deref()) {
            Ok(found) => found.map(|p| p.text),
            Err(e) => {
                tracing::warn!(error = %e, "the recorded prompt could not be read");
                None
            }
        }
    }
}

/// One call's answers so far, and what each of its requests is given.
pub(super) struct Answers {
    transcript: Transcript,
    transcript_source: TranscriptSource,
    presence: Presence,
    turn_from_transcript: bool,
    answers: Vec<Answer>,
}

impl Answers {
    pub(super) fn new(
        harness_id: HarnessId,
        call: &Call,
        defer_as: DeferAs,
        evidence: Evidence,
    ) -> Answers {
        let harness = harness_id.harness();
        let presence = harness.refine_presence(&call.event, call.presence, &evidence.transcript);
        let presence = defer_as.presence(presence, harness.can_ask(&call.event));
        Answers {
            transcript: evidence.transcript,
            transcript_source: evidence.source,
            presence,
            turn_from_transcript: call.turn_from_transcript,
            answers: Vec::new(),
        }
    }

    /// The request with the transcript's evidence (and turn, where the
    /// harness gave none).
    pub(super) fn with_transcript(&self, mut request: Request) -> Request {
        request.transcript.clone_from(&self.transcript.entries);
        request.transcript_source = self.transcript_source;
        if self.turn_from_transcript && request.turn_id.is_none() {
            request.turn_id = self
                .transcript
                .latest_user_id
                .as_deref()
                .map(|id| id.chars().take(256).collect());
        }
        request
    }

    /// Keeps a decision's answer; `true` when it denies (the call ends).
    pub(super) fn push(&mut self, decision: &crate::decision::Decision) -> bool {
        self.push_answer(answer_for(decision, self.presence))
    }

    /// Keeps an answer made elsewhere (a remote decision, a fault); `true`
    /// when it denies (the call ends).
    pub(super) fn push_answer(&mut self, answer: Answer) -> bool {
        let denied = matches!(answer, Answer::Deny(_));
        self.answers.push(answer);
        denied
    }

    /// Whom an "ask" reaches in this call.
    pub(super) fn presence(&self) -> Presence {
        self.presence
    }

    pub(super) fn strictest(self) -> Answer {
        strictest(self.answers)
    }
}

/// The deny for a call whose configuration could not be loaded.
pub(super) fn config_error(why: &str) -> Answer {
    Answer::Deny(format!(
        "{} vouch could not load its configuration, so this tool call was blocked. This is a \
         failure of the reviewer setup, not a judgement that the action is risky: {why}",
        Fault::ConfigError.tag()
    ))
}
