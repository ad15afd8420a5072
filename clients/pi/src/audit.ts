/**
 * Forwarding pi-permission-system's `permissions:decision` broadcasts to
 * `POST /v1/audit/events`, where vouch's audit learns which asks people keep
 * approving by hand.
 *
 * Forwarding is best effort and can never touch a decision: it runs after
 * the decision was broadcast, off the permission path, and every problem
 * ends in at most one log line. A vouch without the audit ingest (404, or
 * 501 before the audit subsystem existed) turns it off for the session; so
 * does a refusal of the batch itself (400, 401, 413), which would only
 * repeat. vouch down or slow drops that batch and keeps going. Nothing is
 * buffered across failures and the queue is bounded: a burst larger than it
 * is dropped and counted, never allowed to grow.
 *
 * The body is a JSON array of the broadcasts as they were, each with what
 * the event lacks and only the client knows: `cwd` (vouch's audit scopes by
 * project), `home`, `source: "pi"` and `timestamp_ms` (when it was heard).
 *
 * Decisions vouch itself made as a chain link are not forwarded: vouch's
 * audit already records its own final decisions, and some permission-system
 * versions report a link's answer as `user_approved` / `user_denied`, which
 * would count vouch's automatic allows as human approvals.
 */

import type { VouchSettings } from "../../common/vouch.ts";
import { homedir } from "node:os";

import { describeRefusal, isRecord, oneLine, post } from "../../common/vouch.ts";
import { SOURCE } from "./request.ts";

/** Events waiting to be sent, at most. */
const MAX_QUEUED = 256;
/** Events in one `POST`, at most. */
const MAX_BATCH = 64;
/** Deadline of one audit `POST` (it never holds anything up, but must not linger). */
const AUDIT_DEADLINE_MS = 5_000;
/** Request ids of link decisions vouch made, remembered for skipping their broadcasts. */
const MAX_OWN_DECISIONS = 1024;

export interface AuditContext {
  readonly cwd: string;
}

export class AuditForwarder {
  #state: "on" | "off" = "on";
  #queue: Record<string, unknown>[] = [];
  #inFlight: Promise<void> | undefined;
  #dropped = 0;
  #faultLogged = false;
  #rejectionLogged = false;
  readonly #ownDecisions = new Set<string>();

  readonly #settings: VouchSettings;
  readonly #context: () => AuditContext | undefined;
  readonly #log: (line: string) => void;

  constructor(settings: VouchSettings, context: () => AuditContext | undefined, log: (line: string) => void) {
    this.#settings = settings;
    this.#context = context;
    this.#log = log;
  }

  /** Remembers that vouch answered the permission request `requestId` itself. */
  noteOwnDecision(requestId: string | undefined): void {
    if (requestId === undefined) return;
    if (this.#ownDecisions.size >= MAX_OWN_DECISIONS) {
      const oldest = this.#ownDecisions.values().next().value;
      if (oldest !== undefined) this.#ownDecisions.delete(oldest);
    }
    this.#ownDecisions.add(requestId);
  }

  /** Takes one broadcast payload; returns at once. */
  push(event: unknown): void {
    if (this.#state === "off" || !isDecisionEvent(event)) return;
    const requestId = event["requestId"];
    if (typeof requestId === "string" && this.#ownDecisions.delete(requestId)) return;
    if (this.#queue.length >= MAX_QUEUED) {
      this.#dropped += 1;
      if (this.#dropped === 1) this.#log(`audit: more than ${MAX_QUEUED} decisions waiting; dropping and counting the rest`);
      return;
    }
    this.#queue.push(forwardedEvent(event, this.#context()?.cwd, Date.now()));
    this.#kick();
  }

  /** Waits for what is being sent (bounded by its deadline); for session shutdown. */
  async flush(): Promise<void> {
    while (this.#inFlight !== undefined) await this.#inFlight;
    if (this.#dropped > 0) this.#log(`audit: ${this.#dropped} decision(s) were dropped because the queue was full`);
  }

  #kick(): void {
    if (this.#inFlight !== undefined || this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, MAX_BATCH);
    this.#inFlight = this.#send(batch).finally(() => {
      this.#inFlight = undefined;
      this.#kick();
    });
  }

  async #send(events: Record<string, unknown>[]): Promise<void> {
    const deadline = Date.now() + Math.min(this.#settings.timeoutMs, AUDIT_DEADLINE_MS);
    const reply = await post(this.#settings, "/v1/audit/events", events, deadline);
    switch (reply.kind) {
      case "ok":
        this.#faultLogged = false;
        this.#noteRejections(reply.body);
        return;
      case "refused":
        this.#turnOff(
          reply.status === 404 || reply.status === 501
            ? `audit: this vouch has no audit ingest (${reply.status}); forwarding of permission decisions is off`
            : `audit: ${describeRefusal(reply)}; forwarding of permission decisions is off`,
        );
        return;
      case "fault":
        if (!this.#faultLogged) this.#log(`audit: ${reply.reason}; these decisions were not forwarded`);
        this.#faultLogged = true;
        return;
    }
  }

  /** The ingest's summary names events it refused; that repeats, so it is said once. */
  #noteRejections(summary: unknown): void {
    const rejected = isRecord(summary) ? summary["rejected"] : undefined;
    if (this.#rejectionLogged || !Array.isArray(rejected) || rejected.length === 0) return;
    this.#rejectionLogged = true;
    const first: unknown = rejected[0];
    const why = isRecord(first) && typeof first["error"] === "string" ? first["error"] : "no reason given";
    this.#log(`audit: vouch refused ${rejected.length} forwarded decision(s) (${oneLine(why)})`);
  }

  #turnOff(line: string): void {
    this.#state = "off";
    this.#queue = [];
    this.#log(line);
  }
}

/** A broadcast as the ingest receives it: as it was, plus what only the client knows. */
export function forwardedEvent(event: Record<string, unknown>, cwd: string | undefined, nowMs: number): Record<string, unknown> {
  return { ...event, ...(cwd === undefined ? {} : { cwd }), home: homedir(), source: SOURCE, timestamp_ms: nowMs };
}

/** The fields every `permissions:decision` payload has (20.7.3 and later). */
function isDecisionEvent(event: unknown): event is Record<string, unknown> {
  return (
    isRecord(event) &&
    typeof event["surface"] === "string" &&
    typeof event["value"] === "string" &&
    (event["result"] === "allow" || event["result"] === "deny") &&
    typeof event["resolution"] === "string"
  );
}
