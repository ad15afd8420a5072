/**
 * What the extension answers Pi for each outcome of a review: the chain
 * link's verdict, or the `tool_call` pre-filter's block. Pure functions over
 * plain data, so every outcome is matched in one place and tested alone.
 *
 * Only an unqualified allow from vouch becomes an allow. A routing `pass`
 * (vouch abstains) is "no opinion": the link defers, the pre-filter lets
 * the host's own rules decide. A fault — vouch down, slow, refusing, or
 * answering something unreadable — takes `VOUCH_FAILURE_MODE`.
 */

import type { Decision, Settled } from "../../common/vouch.ts";
import type { AuthorizerVerdict } from "./chain.ts";

/** What a fault becomes: block the call, or hand it to the next authority. */
export type FailureMode = "deny" | "defer";

/**
 * The reason the agent reads when a review could not complete. It starts
 * with the machine-readable fault kind, as vouch's own fault messages do
 * (docs/eval.md): `unreachable`, vouch did not answer usably.
 */
export function faultMessage(reason: string): string {
  return (
    `[vouch fault: unreachable] Automatic review could not complete, so vouch blocked this action (${reason}). ` +
    "This is a failure of the review, not a judgement of the action; do not retry it in another form."
  );
}

/** The chain link's verdict. */
export function linkVerdict(outcome: Settled<Decision>, failure: FailureMode): AuthorizerVerdict {
  switch (outcome.kind) {
    case "ok":
      return verdictOf(outcome.value);
    case "fault":
      return failureVerdict(outcome.reason, failure);
  }
}

function verdictOf(decision: Decision): AuthorizerVerdict {
  switch (decision.decision) {
    // An abstaining allow is no opinion, never an approval.
    case "allow":
      return decision.abstain ? { kind: "defer" } : { kind: "allow" };
    case "deny":
      return { kind: "deny", reason: decision.message };
    // vouch hands it to the human: the next link or the terminal decides.
    case "defer":
      return { kind: "defer" };
  }
}

export function failureVerdict(reason: string, failure: FailureMode): AuthorizerVerdict {
  switch (failure) {
    case "deny":
      return { kind: "deny", reason: faultMessage(reason) };
    case "defer":
      return { kind: "defer" };
  }
}

/** The pre-filter's answer: a block, or nothing (the host's own rules decide). */
export type PreFilter = { block: true; reason: string } | undefined;

/** The `tool_call` pre-filter's answer: it can only add denials. */
export function preFilter(outcome: Settled<Decision>, failure: FailureMode): PreFilter {
  switch (outcome.kind) {
    case "ok":
      return blockOf(outcome.value);
    case "fault":
      return failureBlock(outcome.reason, failure);
  }
}

function blockOf(decision: Decision): PreFilter {
  switch (decision.decision) {
    case "deny":
      return { block: true, reason: decision.message };
    // Neither an allow nor a defer can approve anything from here: the
    // permission system (or Pi) still applies its own rules.
    case "allow":
    case "defer":
      return undefined;
  }
}

export function failureBlock(reason: string, failure: FailureMode): PreFilter {
  switch (failure) {
    case "deny":
      return { block: true, reason: faultMessage(reason) };
    case "defer":
      return undefined;
  }
}
