/**
 * The grant broker: sandbox-runtime's ask callback, answered by vouch.
 *
 * sandbox-runtime asks once per connection to a destination no list
 * decides, with only `{host, port}`. The broker knows the rest because it
 * wraps exactly one command per process: the command, its cwd, and the
 * session and turn of the harness that started it. For each ask it sends
 * vouch a `network` review with `issue_grant: true`; on an allow it
 * consumes the grant with the identical request and answers `true` only
 * when vouch says `consumed: true`, so each connection is bound to one
 * exact, one-use, expiring authorization. Everything else — a deny, a
 * defer (no human is asked from inside a sandbox), an abstain, an allow
 * without a grant, a refused consume, vouch down, a timeout, a malformed
 * reply — is `{allow: false, reason}` with vouch's message or the fault.
 * One deadline covers the review and the consume. It never throws.
 */

import type { CanonicalRequest, Decision, Settled, VouchSettings } from "../../common/vouch.ts";
import { describeRefusal, errorCode, fault, isRecord, post, review } from "../../common/vouch.ts";

/** sandbox-runtime's answer type (`SandboxAskCallback`'s result). */
export type AskAnswer = true | { allow: false; reason: string };

/** What the broker ties every ask to. */
export interface WrappedCommand {
  readonly sessionId: string;
  readonly turnId: string | undefined;
  readonly command: string;
  readonly cwd: string;
}

export const SOURCE = "sandbox-runtime";

/**
 * Default per-ask deadline (review and consume together): below the connect
 * timeout of the clients that usually run in a sandbox (curl, git, npm wait
 * about 30 s or more), so the client sees vouch's answer, not its own timeout.
 */
export const DEFAULT_TIMEOUT_MS = 20_000;

/** The review request for one ask. */
export function networkRequest(wrapped: WrappedCommand, host: string, port: number, askId: string): CanonicalRequest {
  const request: CanonicalRequest = {
    id: askId,
    session_id: wrapped.sessionId,
    source: SOURCE,
    surface: "network",
    tool: SOURCE,
    destination: `${formatHost(host)}:${port}`,
    command: wrapped.command,
    cwd: wrapped.cwd,
    issue_grant: true,
  };
  if (wrapped.turnId !== undefined) request.turn_id = wrapped.turnId;
  return request;
}

/** An IPv6 literal in brackets, so `host:port` stays unambiguous. */
function formatHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** One ask, answered. */
export async function answerAsk(
  settings: Settled<VouchSettings>,
  wrapped: WrappedCommand,
  params: unknown,
  askId: string,
): Promise<AskAnswer> {
  try {
    if (settings.kind === "fault") return refuse(`vouch-srt is misconfigured: ${settings.reason}`);
    const target = readParams(params);
    if (target.kind === "fault") return refuse(target.reason);
    const request = networkRequest(wrapped, target.value.host, target.value.port, askId);
    const deadline = Date.now() + settings.value.timeoutMs;
    const outcome = await review(settings.value, request, deadline);
    return await conclude(settings.value, request, outcome, deadline);
  } catch (error) {
    return refuse(`the vouch broker failed (${errorCode(error)})`);
  }
}

async function conclude(settings: VouchSettings, request: CanonicalRequest, outcome: Settled<Decision>, deadline: number): Promise<AskAnswer> {
  switch (outcome.kind) {
    case "fault":
      return refuse(outcome.reason);
    case "ok":
      break;
  }
  const decision = outcome.value;
  switch (decision.decision) {
    case "allow":
      if (decision.grant === null) {
        return { allow: false, reason: decision.abstain ? "vouch has no opinion on this destination (routing `pass`, or no reviewer model), and the sandbox's default is to deny" : "vouch allowed without a grant, and only a consumed grant opens a connection" };
      }
      return consume(settings, request, decision.grant.token, deadline);
    // vouch's message is written for the agent: it says who denied and why.
    case "deny":
      return { allow: false, reason: decision.message };
    // Inside a sandbox no human will be asked, so a defer is a denial that says so.
    case "defer":
      return { allow: false, reason: `${decision.message} No human can be asked from inside the sandbox, so the connection was blocked.` };
  }
}

/** `POST /v1/grants/consume` with the identical request; only `consumed: true` opens the connection. */
async function consume(settings: VouchSettings, request: CanonicalRequest, token: string, deadline: number): Promise<AskAnswer> {
  const reply = await post(settings, "/v1/grants/consume", { session_id: request.session_id, token, request }, deadline);
  switch (reply.kind) {
    case "ok":
      if (isRecord(reply.body) && reply.body["consumed"] === true) return true;
      return refuse("vouch did not consume the grant (expired, already used, or issued for another request)");
    case "refused":
      return refuse(describeRefusal(reply));
    case "fault":
      return refuse(reply.reason);
  }
}

function readParams(params: unknown): Settled<{ host: string; port: number }> {
  if (isRecord(params) && typeof params["host"] === "string" && params["host"] !== "" && Number.isInteger(params["port"])) {
    return { kind: "ok", value: { host: params["host"], port: params["port"] as number } };
  }
  return fault("sandbox-runtime asked without a host and port");
}

/**
 * A denial worded as a failure of the review, never as a judgement of the
 * destination, led by its machine-readable fault kind (docs/eval.md).
 */
function refuse(reason: string): AskAnswer {
  return {
    allow: false,
    reason: `[vouch fault: unreachable] Automatic review could not complete, so vouch blocked this connection (${reason}).`,
  };
}
