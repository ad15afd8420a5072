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

import type { ExtensionAPI, ExtensionContext, ToolCallEvent } from "@earendil-works/pi-coding-agent";

import type { CanonicalRequest, Decision, Settled, VouchSettings } from "../../common/vouch.ts";
import { errorCode, fault, readSettings, review } from "../../common/vouch.ts";
import type { FailureMode, PreFilter } from "./answer.ts";
import { failureBlock, failureVerdict, linkVerdict, preFilter } from "./answer.ts";
import { AuditForwarder } from "./audit.ts";
import type { AuthorizerVerdict, Joined } from "./chain.ts";
import { AUTHORIZER_NAME, findChain, joinChain } from "./chain.ts";
import { requestFromLink, requestFromToolCall, viewSession } from "./request.ts";

/**
 * Default client deadline: vouch's default review deadline
 * (`reviewer.timeout_ms`, 90 s) plus vouch's own request margin (5 s) plus
 * 5 s, so vouch's fail-closed answer arrives before the client gives up.
 */
export const DEFAULT_TIMEOUT_MS = 100_000;

/** Surfaces on which the permission system turns a link's allow into a defer (observed). */
const ALLOW_CAPPED_SURFACES = new Set(["path", "external_directory"]);

type Mode =
  | { kind: "undecided" }
  | { kind: "chain"; joined: Extract<Joined, { kind: "joined" }> }
  | { kind: "prefilter"; why: string };

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

/** One extension instance: Pi creates one per session runtime. */
class VouchForPi {
  readonly #settings: PiSettings;
  readonly #forwarder: AuditForwarder | undefined;
  /** The latest context Pi handed a handler; the chain link gets none of its own. */
  #current: ExtensionContext | undefined;
  #mode: Mode = { kind: "undecided" };
  #announced = false;

  constructor(settings: PiSettings) {
    this.#settings = settings;
    this.#forwarder =
      settings.vouch.kind === "ok"
        ? new AuditForwarder(settings.vouch.value, () => this.#auditContext(), (line) => this.#say(line, "warning"))
        : undefined;
  }

  /** Remembers the context of a Pi event; `announce` settles the mode once per session. */
  bind(ctx: ExtensionContext, announce: boolean): void {
    this.#current = ctx;
    if (announce) this.#announce();
    else this.#settle(false);
  }

  /** `permissions:ready`: the permission system has published its service. */
  ready(): void {
    this.#settle(false);
  }

  decisionBroadcast(event: unknown): void {
    this.#forwarder?.push(event);
  }

  /** The chain link. The chain turns a throw into a gate error, so it answers instead. */
  readonly authorize = async (details: unknown): Promise<AuthorizerVerdict> => {
    const failure = this.#settings.failure;
    try {
      if (this.#current === undefined) return failureVerdict("no Pi session is bound to the vouch extension", failure);
      const request = requestFromLink(details, viewSession(this.#current));
      const verdict = linkVerdict(await this.#review(request), failure);
      const decidedHere = verdict.kind === "deny" || (verdict.kind === "allow" && !ALLOW_CAPPED_SURFACES.has(request.surface));
      if (decidedHere) this.#forwarder?.noteOwnDecision(request.id);
      return verdict;
    } catch (error) {
      return failureVerdict(`the vouch link failed (${errorCode(error)})`, failure);
    }
  };

  /** Pi's `tool_call` hook: the pre-filter, unless the chain asks vouch itself. */
  async toolCall(event: ToolCallEvent, ctx: ExtensionContext): Promise<PreFilter> {
    try {
      this.bind(ctx, true);
      if (this.#mode.kind === "chain") return undefined;
      const input = event.input as unknown as Record<string, unknown>;
      const request = requestFromToolCall(event.toolName, event.toolCallId, input, viewSession(ctx));
      return preFilter(await this.#review(request, ctx.signal), this.#settings.failure);
    } catch (error) {
      return failureBlock(`the vouch pre-filter failed (${errorCode(error)})`, this.#settings.failure);
    }
  }

  async shutdown(): Promise<void> {
    if (this.#mode.kind === "chain") this.#mode.joined.dispose();
    this.#mode = { kind: "undecided" };
    this.#announced = false;
    await this.#forwarder?.flush();
    this.#current = undefined;
  }

  #review(request: CanonicalRequest, signal?: AbortSignal): Promise<Settled<Decision>> {
    const vouch = this.#settings.vouch;
    if (vouch.kind === "fault") return Promise.resolve(fault(`the vouch client is misconfigured: ${vouch.reason}`));
    return review(vouch.value, request, Date.now() + vouch.value.timeoutMs, signal);
  }

  /**
   * Joins the chain when the permission system offers one. The service may
   * be published after this extension's own `session_start`, so only a
   * `final` call (once every `session_start` handler has run) settles on the
   * fallback.
   */
  #settle(final: boolean): void {
    if (this.#mode.kind !== "undecided" || this.#current === undefined) return;
    const lookup = findChain(this.#current.sessionManager.getSessionId());
    if (lookup.kind === "no_chain" && !final) return;
    const joined = joinChain(lookup, this.authorize);
    this.#mode = joined.kind === "joined" ? { kind: "chain", joined } : { kind: "prefilter", why: joined.why };
  }

  #announce(): void {
    if (this.#announced) return;
    this.#settle(true);
    this.#announced = true;
    const { vouch, failure, failureProblem } = this.#settings;
    if (vouch.kind === "fault") this.#say(`configuration problem: ${vouch.reason}; every review fails closed (${failure})`, "error");
    if (failureProblem !== undefined) this.#say(failureProblem, "error");
    switch (this.#mode.kind) {
      case "chain":
        this.#say(
          `authorizer \`${AUTHORIZER_NAME}\` registered with pi-permission-system's ${this.#mode.joined.where}; ` +
            `it reviews asks once \`${AUTHORIZER_NAME}\` is listed in \`authorizerChain\``,
        );
        return;
      case "prefilter":
        this.#say(`${this.#mode.why}; vouch runs as a deny-only pre-filter on Pi's tool_call hook (it can block a call, never approve an ask)`, "warning");
        return;
      case "undecided":
        return;
    }
  }

  #auditContext(): { cwd: string } | undefined {
    return this.#current === undefined ? undefined : { cwd: this.#current.cwd };
  }

  /** One line for the operator: a notification in the TUI, stderr otherwise. */
  #say(line: string, level: "info" | "warning" | "error" = "info"): void {
    try {
      if (this.#current?.hasUI === true) this.#current.ui.notify(`vouch: ${line}`, level);
      else process.stderr.write(`vouch: ${line}\n`);
    } catch {
      // Reporting must never become the fault.
    }
  }
}

/**
 * Where `VOUCH_TOKEN` is kept once it has left the environment, so that a
 * `/reload` (which loads the extension afresh) still has it.
 */
export const TOKEN_SLOT = Symbol.for("vouch-pi:adapter-token");

/**
 * The environment with `VOUCH_TOKEN` taken out of `process.env`: read once,
 * then gone from Pi's environment, so the commands the agent runs (which
 * inherit it) cannot read the token and talk to vouch as this client does.
 */
function takeToken(): Readonly<Record<string, string | undefined>> {
  const slots = globalThis as unknown as Record<symbol, unknown>;
  const fromEnv = process.env["VOUCH_TOKEN"];
  if (fromEnv !== undefined && fromEnv.trim() !== "") slots[TOKEN_SLOT] = fromEnv;
  delete process.env["VOUCH_TOKEN"];
  const kept = slots[TOKEN_SLOT];
  return typeof kept === "string" ? { ...process.env, VOUCH_TOKEN: kept } : { ...process.env };
}

export default function vouchForPi(pi: ExtensionAPI): void {
  const vouch = new VouchForPi(readPiSettings(takeToken()));
  pi.events.on("permissions:ready", () => vouch.ready());
  pi.events.on("permissions:decision", (event) => vouch.decisionBroadcast(event));
  pi.on("session_start", (_event, ctx) => vouch.bind(ctx, false));
  // Both run after every extension's `session_start`: the mode is known by then.
  pi.on("resources_discover", (_event, ctx) => vouch.bind(ctx, true));
  pi.on("before_agent_start", (_event, ctx) => vouch.bind(ctx, true));
  pi.on("turn_start", (_event, ctx) => vouch.bind(ctx, true));
  pi.on("tool_call", (event, ctx) => vouch.toolCall(event, ctx));
  pi.on("session_shutdown", () => vouch.shutdown());
}
