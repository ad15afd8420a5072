//! The operator's interactive commands, `vouch approve` and
//! `vouch break-glass`, written against `BufRead`/`Write` so they can be
//! driven by tests; `main.rs` passes stdin, stdout and whether stdin is a
//! terminal.
//!
//! Everything shown comes from the agent's side of the world (commands,
//! rationales), so it is printed with control characters escaped: a denial
//! summary must not be able to repaint the operator's terminal.

use std::io::{BufRead, Write};

use super::overrides::{
    self, Approval, ApprovalState, CHALLENGE_TTL_MS, DenialView, OverrideError, Selector,
};
use crate::clock::Clock;
use crate::config::Config;
use crate::store::Store;

/// What an operator command works on.
#[derive(Clone, Copy)]
pub struct OperatorContext<'a> {
    pub store: &'a Store,
    pub clock: &'a dyn Clock,
    pub cfg: &'a Config,
    pub session: &'a str,
}

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error(
        "break glass needs an interactive terminal so a human types the phrase; run \
         `vouch break-glass` in a terminal, or use the operator API challenge and confirm"
    )]
    NotATerminal,
    #[error("no recent non-critical model denial in session `{session}` to approve")]
    NothingToApprove { session: String },
    #[error("cancelled: nothing was authorized")]
    Cancelled,
    #[error(transparent)]
    Override(#[from] OverrideError),
    #[error("cannot talk to the terminal: {0}")]
    Io(#[from] std::io::Error),
}

/// `vouch approve --session S [N|HASH]`. With a selector, approves that
/// denial. Without one, lists the approvable denials and, on a terminal,
/// asks which one to approve. Returns the approval, or `None` when only a
/// list was shown.
pub fn run_approve(
    ctx: OperatorContext<'_>,
    selector: Option<&str>,
    mut input: impl BufRead,
    mut out: impl Write,
    is_tty: bool,
) -> Result<Option<Approval>, OperatorError> {
    let selector = match selector {
        Some(raw) => raw.parse::<Selector>()?,
        None => {
            let listed = overrides::list_denials(ctx.store, ctx.clock, ctx.cfg, ctx.session)
                .map_err(OverrideError::from)?;
            if listed.is_empty() {
                return Err(OperatorError::NothingToApprove {
                    session: ctx.session.to_owned(),
                });
            }
            writeln!(
                out,
                "Recent model denials in session {} (newest first):",
                terminal_safe(ctx.session)
            )?;
            let now = ctx.clock.now_ms();
            for (i, denial) in listed.iter().enumerate() {
                write_denial(&mut out, i.saturating_add(1), denial, now)?;
            }
            if !is_tty {
                writeln!(
                    out,
                    "Approve one exact retry with: vouch approve --session {} <N|HASH>",
                    terminal_safe(ctx.session)
                )?;
                return Ok(None);
            }
            write!(
                out,
                "Approve which one? [1-{}, empty to cancel]: ",
                listed.len()
            )?;
            out.flush()?;
            let answer = read_answer(&mut input)?;
            if answer.is_empty() {
                return Err(OperatorError::Cancelled);
            }
            // Re-select by the full hash: the list may have changed while
            // the operator was reading it.
            match answer.parse::<Selector>()? {
                Selector::Index(i) => match listed.get(i.saturating_sub(1)) {
                    Some(d) => Selector::Hash(d.request_hash.clone()),
                    None => {
                        return Err(OverrideError::NoSuchDenial {
                            selector: answer,
                            session: ctx.session.to_owned(),
                        }
                        .into());
                    }
                },
                hash @ Selector::Hash(_) => hash,
            }
        }
    };
    let approval = overrides::approve(ctx.store, ctx.clock, ctx.cfg, ctx.session, &selector)?;
    writeln!(
        out,
        "Approved one exact retry of request {} in session {}; it expires in {} s. The retry \
         is still checked by hard denies and reviewed by the model, with your approval as \
         context.",
        fingerprint(&approval.request_hash),
        terminal_safe(ctx.session),
        approval
            .expires_at_ms
            .saturating_sub(ctx.clock.now_ms())
            .div_ceil(1000)
    )?;
    Ok(Some(approval))
}

/// `vouch break-glass --session S`: shows the critical denial, asks for the
/// random phrase, and on a match authorizes one exact retry without review.
pub fn run_break_glass(
    ctx: OperatorContext<'_>,
    mut input: impl BufRead,
    mut out: impl Write,
    is_tty: bool,
) -> Result<Approval, OperatorError> {
    if !is_tty {
        return Err(OperatorError::NotATerminal);
    }
    let chosen = choose_critical(ctx, &mut input, &mut out)?;
    let challenge = overrides::break_glass_challenge(
        ctx.store,
        ctx.clock,
        ctx.cfg,
        ctx.session,
        Some(&Selector::Hash(chosen)),
    )?;
    show_challenge(ctx, &challenge, &mut out)?;
    let typed = read_answer(&mut input)?;
    let approval = overrides::break_glass_confirm(
        ctx.store,
        ctx.clock,
        ctx.cfg,
        ctx.session,
        &challenge.id,
        &typed,
    )?;
    writeln!(
        out,
        "Break glass authorized: the next identical request in session {} is allowed without \
         review; the authorization expires in {} s.",
        terminal_safe(ctx.session),
        approval
            .expires_at_ms
            .saturating_sub(ctx.clock.now_ms())
            .div_ceil(1000)
    )?;
    Ok(approval)
}

/// The request hash of the critical denial to break glass for: the only
/// one, or the one the operator picks from the list.
fn choose_critical(
    ctx: OperatorContext<'_>,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<String, OperatorError> {
    let eligible = overrides::list_critical_denials(ctx.store, ctx.clock, ctx.cfg, ctx.session)?;
    let now = ctx.clock.now_ms();
    let several = match eligible.as_slice() {
        [] => {
            return Err(OverrideError::NoCriticalDenial {
                session: ctx.session.to_owned(),
                window_s: ctx.cfg.overrides.break_glass_window_ms / 1000,
            }
            .into());
        }
        [only] => return Ok(only.request_hash.clone()),
        several => several,
    };
    writeln!(out, "Critical model denials eligible for break glass:")?;
    for (i, denial) in several.iter().enumerate() {
        write_denial(out, i.saturating_add(1), denial, now)?;
    }
    write!(
        out,
        "Break glass for which one? [1-{}, empty to cancel]: ",
        several.len()
    )?;
    out.flush()?;
    let answer = read_answer(input)?;
    if answer.is_empty() {
        return Err(OperatorError::Cancelled);
    }
    let picked = match answer.parse::<Selector>()? {
        Selector::Index(i) => several.get(i.saturating_sub(1)),
        Selector::Hash(prefix) => several
            .iter()
            .find(|d| d.request_hash.starts_with(prefix.as_str())),
    };
    match picked {
        Some(d) => Ok(d.request_hash.clone()),
        None => Err(OverrideError::NoSuchDenial {
            selector: answer,
            session: ctx.session.to_owned(),
        }
        .into()),
    }
}

/// Everything the human must see before typing the phrase.
fn show_challenge(
    ctx: OperatorContext<'_>,
    challenge: &overrides::Challenge,
    out: &mut impl Write,
) -> Result<(), OperatorError> {
    let d = &challenge.denial;
    writeln!(out, "BREAK GLASS: authorize one exact retry WITHOUT review")?;
    writeln!(out, "  session:   {}", terminal_safe(ctx.session))?;
    writeln!(out, "  risk:      {}", d.risk_level.as_str())?;
    writeln!(out, "  surface:   {}", terminal_safe(&d.surface))?;
    writeln!(
        out,
        "  cwd:       {}",
        terminal_safe(d.cwd.as_deref().unwrap_or("(none)"))
    )?;
    writeln!(out, "  action:    {}", terminal_safe(&d.summary))?;
    writeln!(out, "  rationale: {}", terminal_safe(&d.rationale))?;
    writeln!(
        out,
        "  request:   {} ({})",
        fingerprint(&d.request_hash),
        d.request_hash
    )?;
    writeln!(
        out,
        "The model judged this critical. If you allow it, the identical request in this session \
         runs once without review and the turn's circuit breaker is reset."
    )?;
    write!(
        out,
        "To proceed, type `{}` within {} s: ",
        challenge.phrase,
        CHALLENGE_TTL_MS / 1000
    )?;
    out.flush()?;
    Ok(())
}

/// One line from the operator, without the line ending. End of input is an
/// empty answer (cancel).
fn read_answer(input: &mut impl BufRead) -> Result<String, OperatorError> {
    let mut line = String::new();
    input.read_line(&mut line)?;
    Ok(line.trim().to_owned())
}

fn write_denial(
    out: &mut impl Write,
    index: usize,
    d: &DenialView,
    now: u64,
) -> std::io::Result<()> {
    let age_s = now.saturating_sub(d.created_at_ms) / 1000;
    writeln!(
        out,
        "{index:>3}. [{}] {} in {} ({} s ago, request {})",
        d.risk_level.as_str(),
        terminal_safe(&d.surface),
        terminal_safe(d.cwd.as_deref().unwrap_or("(no cwd)")),
        age_s,
        fingerprint(&d.request_hash)
    )?;
    writeln!(out, "     action: {}", terminal_safe(&d.summary))?;
    writeln!(out, "     reason: {}", terminal_safe(&d.rationale))?;
    match d.approval {
        ApprovalState::Available => Ok(()),
        ApprovalState::Pending { expires_at_ms } => writeln!(
            out,
            "     approved, pending retry (expires in {} s)",
            expires_at_ms.saturating_sub(now).div_ceil(1000)
        ),
        ApprovalState::Used => writeln!(out, "     approval used; needs a fresh denial"),
    }
}

/// The first 12 hex digits of a request hash, grouped for reading aloud.
pub fn fingerprint(hash: &str) -> String {
    let head: String = hash.chars().take(12).collect();
    let (a, b) = head.split_at(head.len().min(6));
    if b.is_empty() {
        a.to_owned()
    } else {
        format!("{a}-{b}")
    }
}

/// Escapes control characters (ESC, CR, …) so stored text cannot drive the
/// terminal.
pub fn terminal_safe(text: &str) -> String {
    let mut safe = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            safe.extend(c.escape_default());
        } else {
            safe.push(c);
        }
    }
    safe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(terminal_safe("ls\u{1b}[2J\r\n"), "ls\\u{1b}[2J\\r\\n");
        assert_eq!(terminal_safe("plain é"), "plain é");
    }

    #[test]
    fn fingerprint_groups_the_head() {
        assert_eq!(fingerprint("0123456789abcdef"), "012345-6789ab");
        assert_eq!(fingerprint("abc"), "abc");
    }
}
