/**
 * The Pi extension: vouch as an authorizer for Pi.
 *
 * With pi-permission-system 20.9 or later it joins the authorizer chain as
 * the link `vouch` (on `permissions:ready`): every ask the permission system
 * would put to a human first goes to `vouch serve`, whose allow, deny (with
 * its message as the reason) or defer is the link's verdict. Without the
 * chain (the registry's 20.7.3, or no permission system at all) it falls
 * back to Pi's `tool_call` hook as a deny-only pre-filter, and says so when
 * the session starts. In both modes it forwards `permissions:decision`
 * broadcasts to vouch's audit.
 *
 * Its contract with Pi: it never throws into Pi and never waits longer than
 * its own deadline (`VOUCH_TIMEOUT_MS`, by default vouch's review deadline
 * plus a margin); any fault takes `VOUCH_FAILURE_MODE`.
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { Decision, Settled, VouchSettings } from "../../common/vouch.ts";
import { errorCode, fault, readSettings, review } from "../../common/vouch.ts";
import type { FailureMode, PreFilter } from "./answer.ts";
import { failureBlock, failureVerdict, linkVerdict, preFilter } from "./answer.ts";
import { AuditForwarder } from "./audit.ts";
import type { AuthorizerVerdict, Joined } from "./chain.ts";
import { AUTHORIZER_NAME, findChain, joinChain } from "./chain.ts";
import type { CanonicalRequest } from "../../common/vouch.ts";
import { requestFromLink, requestFromToolCall, viewSession } from "./request.ts";

/**
 * Default client deadline: vouch's default review deadline
 * (`reviewer.timeout_ms`, 90 s) plus vouch's own request margin (5 s) plus
 * 5 s, so vouch's fail-closed answer arrives before the client gives up.
 */
export const DEFAULT_TIMEOUT_MS = 100_000;

/** Surfaces on which the permission system turns a link's allow into a defer (observed). */
const ALLOW_CAPPED_SURFACES = new Set(["path", "external_directory"]);

type Mode = { kind: "undecided" } | { kind: "chain"; joined: Extract<Joined, { kind: "joined" }> } | { kind: "prefilter"; why: string };

export interface PiSettings {
  readonly vouch: Settled<VouchSettings>;
  readonly failure: FailureMode;
  /** A problem with `VOUCH_FAILURE_MODE` itself, reported at start. */
  readonly failureProblem: string | undefined;
}

export function readPiSettings(env: Readonly<Record<string, string | undefined>>): PiSettings {
  const raw = env["VOUCH_FAILURE_MODE"]?.trim();
  const known = raw === undefined || raw === "" || raw === "deny" || raw === "defer";
  return {
    vouch: readSettings(env, DEFAULT_TIMEOUT_MS),
    // An unreadable failure mode takes the stricter of the two.
    failure: raw === "defer" ? "defer" : "deny",
    failureProblem: known ? undefined : `VOUCH_FAILURE_MODE \`${raw}\` must be \`deny\` or \`defer\`; using \`deny\``,
  };
}

export default function vouchForPi(pi: ExtensionAPI): void {
  const settings = readPiSettings(process.env);
  let current: ExtensionContext | undefined;
  let mode: Mode = { kind: "undecided" };
  let announced = false;

  const say = (line: string, level: "info" | "warning" | "error" = "info") => {
    try {
      if (current?.hasUI === true) current.ui.notify(`vouch: ${line}`, level);
      else process.stderr.write(`vouch: ${line}\n`);
    } catch {
      // Reporting must never become the fault.
    }
  };

  const forwarder =
    settings.vouch.kind === "ok"
      ? new AuditForwarder(
          settings.vouch.value,
          () => (current === undefined ? undefined : { sessionId: current.sessionManager.getSessionId(), cwd: current.cwd }),
          (line) => say(line, "warning"),
        )
      : undefined;

  const ask = (request: CanonicalRequest, signal?: AbortSignal): Promise<Settled<Decision>> => {
    const vouch = settings.vouch;
    if (vouch.kind === "fault") return Promise.resolve(fault(`vouch client is misconfigured: ${vouch.reason}`));
    return review(vouch.value, request, Date.now() + vouch.value.timeoutMs, signal);
  };

  const authorize = async (details: unknown): Promise<AuthorizerVerdict> => {
    try {
      if (current === undefined) return failureVerdict("no Pi session is bound to the vouch extension", settings.failure);
      const request = requestFromLink(details, viewSession(current));
      const verdict = linkVerdict(await ask(request), settings.failure);
      const decidedHere = verdict.kind === "deny" || (verdict.kind === "allow" && !ALLOW_CAPPED_SURFACES.has(request.surface));
      if (decidedHere) forwarder?.noteOwnDecision(request.id);
      return verdict;
    } catch (error) {
      // The chain turns a throw into a gate error; answer instead.
      return failureVerdict(`the vouch link failed (${errorCode(error)})`, settings.failure);
    }
  };

  /** Joins the chain if the permission system offers one; `final` settles on the fallback otherwise. */
  const settle = (final: boolean) => {
    if (mode.kind !== "undecided" || current === undefined) return;
    const lookup = findChain(current.sessionManager.getSessionId());
    if (lookup.kind === "no_chain" && !final) return;
    const joined = joinChain(lookup, authorize);
    mode = joined.kind === "joined" ? { kind: "chain", joined } : { kind: "prefilter", why: joined.why };
  };

  const announce = () => {
    if (announced) return;
    settle(true);
    announced = true;
    if (settings.vouch.kind === "fault") say(`configuration problem: ${settings.vouch.reason}; every review fails closed (${settings.failure})`, "error");
    if (settings.failureProblem !== undefined) say(settings.failureProblem, "error");
    switch (mode.kind) {
      case "chain":
        say(`authorizer \`${AUTHORIZER_NAME}\` registered with pi-permission-system's ${mode.joined.where}; it reviews asks once \`${AUTHORIZER_NAME}\` is listed in \`authorizerChain\``);
        return;
      case "prefilter":
        say(`${mode.why}; vouch runs as a deny-only pre-filter on Pi's tool_call hook (it can block a call, never approve an ask)`, "warning");
        return;
      case "undecided":
        return;
    }
  };

  pi.events.on("permissions:ready", () => settle(false));
  pi.events.on("permissions:decision", (event) => forwarder?.push(event));

  pi.on("session_start", (_event, ctx) => {
    current = ctx;
    settle(false);
  });
  pi.on("resources_discover", (_event, ctx) => {
    current = ctx;
    announce();
  });
  pi.on("before_agent_start", (_event, ctx) => {
    current = ctx;
    announce();
  });
  pi.on("turn_start", (_event, ctx) => {
    current = ctx;
  });

  pi.on("tool_call", async (event, ctx): Promise<PreFilter> => {
    try {
      current = ctx;
      announce();
      if (mode.kind === "chain") return undefined;
      const input = event.input as unknown as Record<string, unknown>;
      const request = requestFromToolCall(event.toolName, event.toolCallId, input, viewSession(ctx));
      return preFilter(await ask(request, ctx.signal), settings.failure);
    } catch (error) {
      return failureBlock(`the vouch pre-filter failed (${errorCode(error)})`, settings.failure);
    }
  });

  pi.on("session_shutdown", async () => {
    if (mode.kind === "chain") mode.joined.dispose();
    mode = { kind: "undecided" };
    announced = false;
    await forwarder?.flush();
    current = undefined;
  });
}
