/**
 * The one way vouch's Node clients talk to `vouch serve`: configuration from
 * the environment, the adapter token, one bounded HTTP exchange under a
 * deadline, and a strict reading of the decision that comes back.
 *
 * Nothing here throws and nothing here decides. Every problem — a bad
 * setting, an unreadable token, vouch down, a timeout, a reply that is not
 * the shape vouch promises — comes back as a `Fault` carrying a sentence
 * that names it, and each client turns a fault into its own fail-closed
 * answer. Both clients import this file from the checkout (`../../common/`),
 * so the wire contract is written once.
 */

import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Where vouch listens unless `VOUCH_URL` says otherwise (vouch's own `server.listen`). */
export const DEFAULT_URL = "http://127.0.0.1:8787";
/** Largest reply body read from vouch; a decision is well under 64 KiB. */
const MAX_REPLY_BYTES = 1024 * 1024;
/** Largest token file read; vouch's tokens are 43 bytes. */
const MAX_TOKEN_FILE_BYTES = 4096;
/** Legal `VOUCH_TIMEOUT_MS` range, the same as vouch's `reviewer.timeout_ms`. */
const TIMEOUT_RANGE_MS = { min: 1, max: 600_000 } as const;

/** What every client reads from its environment. */
export interface VouchSettings {
  /** Base URL of `vouch serve` (no trailing slash). */
  readonly url: string;
  /** Where the adapter token comes from; read at each call, so a rotated token is picked up. */
  readonly token: TokenSource;
  /** The client's own deadline for one answer, in milliseconds. */
  readonly timeoutMs: number;
}

export type TokenSource =
  | { readonly kind: "env"; readonly value: string }
  | { readonly kind: "file"; readonly path: string; readonly from: string };

/** A problem that keeps the client from getting vouch's answer. */
export interface Fault {
  readonly kind: "fault";
  /** One sentence, no final period, safe to show the agent and the operator. */
  readonly reason: string;
}

export type Settled<T> = { readonly kind: "ok"; readonly value: T } | Fault;

export function fault(reason: string): Fault {
  return { kind: "fault", reason };
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads `VOUCH_URL`, `VOUCH_TOKEN` / `VOUCH_TOKEN_FILE` and
 * `VOUCH_TIMEOUT_MS`. A bad value is a fault naming the variable, never a
 * silent fallback to a default: a client that quietly talked to another URL
 * or waited another time would not be the one the operator configured.
 */
export function readSettings(env: Env, defaultTimeoutMs: number): Settled<VouchSettings> {
  const url = readUrl(env["VOUCH_URL"]);
  if (url.kind === "fault") return url;
  const timeoutMs = readTimeout(env["VOUCH_TIMEOUT_MS"], defaultTimeoutMs);
  if (timeoutMs.kind === "fault") return timeoutMs;
  const token = tokenSource(env);
  if (token.kind === "fault") return token;
  return { kind: "ok", value: { url: url.value, token: token.value, timeoutMs: timeoutMs.value } };
}

function readUrl(raw: string | undefined): Settled<string> {
  const text = raw === undefined || raw.trim() === "" ? DEFAULT_URL : raw.trim();
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return fault(`VOUCH_URL \`${text}\` is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return fault(`VOUCH_URL \`${text}\` must start with http:// or https://`);
  }
  if (parsed.username !== "" || parsed.password !== "" || parsed.search !== "" || parsed.hash !== "") {
    return fault(`VOUCH_URL \`${parsed.origin}\` must not carry credentials, a query or a fragment`);
  }
  // The bearer token travels in a header: over plain http it must stay on
  // this machine, as vouch itself only listens on loopback unless told.
  if (parsed.protocol === "http:" && !isLoopbackHost(parsed.hostname)) {
    return fault(`VOUCH_URL \`${text}\` sends the token in clear text to a non-loopback host; use https`);
  }
  return { kind: "ok", value: parsed.href.replace(/\/+$/, "") };
}

function isLoopbackHost(host: string): boolean {
  if (host === "localhost" || host === "[::1]") return true;
  const octets = host.split(".");
  return octets.length === 4 && octets[0] === "127" && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255);
}

function readTimeout(raw: string | undefined, fallback: number): Settled<number> {
  if (raw === undefined || raw.trim() === "") return { kind: "ok", value: fallback };
  const text = raw.trim();
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < TIMEOUT_RANGE_MS.min || value > TIMEOUT_RANGE_MS.max) {
    return fault(
      `VOUCH_TIMEOUT_MS \`${text}\` must be a whole number of milliseconds from ${TIMEOUT_RANGE_MS.min} to ${TIMEOUT_RANGE_MS.max}`,
    );
  }
  return { kind: "ok", value };
}

/**
 * `VOUCH_TOKEN`, else `VOUCH_TOKEN_FILE`, else the adapter token where vouch
 * creates it: `$VOUCH_HOME/state/`, `$XDG_STATE_HOME/vouch/`, or
 * `~/.local/state/vouch/` (vouch's own lookup order).
 */
function tokenSource(env: Env): Settled<TokenSource> {
  const inline = env["VOUCH_TOKEN"];
  if (inline !== undefined && inline.trim() !== "") return { kind: "ok", value: { kind: "env", value: inline.trim() } };
  const file = env["VOUCH_TOKEN_FILE"];
  if (file !== undefined && file.trim() !== "") {
    return { kind: "ok", value: { kind: "file", path: file.trim(), from: "VOUCH_TOKEN_FILE" } };
  }
  const home = env["VOUCH_HOME"];
  if (home !== undefined && home !== "") {
    return { kind: "ok", value: { kind: "file", path: join(home, "state", "adapter.token"), from: "VOUCH_HOME" } };
  }
  const xdg = env["XDG_STATE_HOME"];
  const stateDir = xdg !== undefined && xdg.startsWith("/") ? join(xdg, "vouch") : join(homedir(), ".local", "state", "vouch");
  return { kind: "ok", value: { kind: "file", path: join(stateDir, "adapter.token"), from: "the default state directory" } };
}

/** The token's value, or a fault naming the file and what is wrong with it. */
export function readToken(source: TokenSource): Settled<string> {
  switch (source.kind) {
    case "env":
      return { kind: "ok", value: source.value };
    case "file":
      return readTokenFile(source.path, source.from);
  }
}

function readTokenFile(path: string, from: string): Settled<string> {
  try {
    const meta = statSync(path);
    if (!meta.isFile()) return fault(`token file \`${path}\` (from ${from}) is not a regular file`);
    if (meta.size > MAX_TOKEN_FILE_BYTES) {
      return fault(`token file \`${path}\` is ${meta.size} bytes, more than the ${MAX_TOKEN_FILE_BYTES} a token can be`);
    }
    // vouch refuses to run with a token others can read; so does its client.
    if ((meta.mode & 0o077) !== 0) {
      return fault(`token file \`${path}\` is readable by group or others; run \`chmod 600 ${path}\``);
    }
    const value = readFileSync(path, "utf8").trim();
    if (value === "") return fault(`token file \`${path}\` is empty`);
    return { kind: "ok", value };
  } catch (error) {
    return fault(`cannot read token file \`${path}\` (from ${from}): ${errorCode(error)}`);
  }
}

/** What `POST` brought back: a 2xx JSON body, vouch's own error, or a fault. */
export type Reply =
  | { readonly kind: "ok"; readonly status: number; readonly body: unknown }
  | { readonly kind: "refused"; readonly status: number; readonly code: string; readonly message: string }
  | Fault;

/**
 * One `POST` of `body` as JSON to `path`, finished by `deadline` (an
 * absolute `Date.now()` time) or by `signal`, whichever comes first. The
 * reply body is read with a size limit; anything that is not JSON is a
 * fault. Never throws.
 */
export async function post(
  settings: VouchSettings,
  path: string,
  body: unknown,
  deadline: number,
  signal?: AbortSignal,
): Promise<Reply> {
  const token = readToken(settings.token);
  if (token.kind === "fault") return token;
  const remaining = deadline - Date.now();
  if (remaining <= 0) return fault(`no time was left before the client's deadline of ${settings.timeoutMs} ms`);
  const timeout = AbortSignal.timeout(remaining);
  const abort = signal === undefined ? timeout : AbortSignal.any([timeout, signal]);
  try {
    const response = await fetch(`${settings.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token.value}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: abort,
      redirect: "error",
    });
    const text = await readLimited(response, abort);
    if (text.kind === "fault") return text;
    return interpret(response.status, text.value);
  } catch (error) {
    if (timeout.aborted) return fault(`vouch did not answer within the client's deadline of ${settings.timeoutMs} ms`);
    if (signal?.aborted === true) return fault("the call was cancelled before vouch answered");
    return fault(`vouch is unreachable at ${settings.url} (${errorCode(error)})`);
  }
}

async function readLimited(response: Response, abort: AbortSignal): Promise<Settled<string>> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > MAX_REPLY_BYTES) {
    await response.body?.cancel();
    return fault(`vouch's reply declares ${declared} bytes, more than the ${MAX_REPLY_BYTES} a reply can be`);
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return { kind: "ok", value: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    abort.throwIfAborted();
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_REPLY_BYTES) {
      await reader.cancel();
      return fault(`vouch's reply is larger than the ${MAX_REPLY_BYTES} bytes a reply can be`);
    }
    chunks.push(value);
  }
  return { kind: "ok", value: Buffer.concat(chunks).toString("utf8") };
}

function interpret(status: number, text: string): Reply {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return fault(`vouch answered HTTP ${status} with a body that is not JSON`);
  }
  if (status >= 200 && status < 300) return { kind: "ok", status, body };
  // vouch's errors are {"error": {"code", "message"}} (docs/http.md).
  const error = isRecord(body) && isRecord(body["error"]) ? body["error"] : {};
  const code = typeof error["code"] === "string" ? error["code"] : "unknown";
  const message = typeof error["message"] === "string" ? error["message"] : `HTTP ${status}`;
  return { kind: "refused", status, code, message };
}

/** A refusal (non-2xx) in words, for a fault reason. */
export function describeRefusal(reply: { status: number; code: string; message: string }): string {
  switch (reply.status) {
    case 401:
      return "vouch rejected the adapter token (401); check VOUCH_TOKEN or VOUCH_TOKEN_FILE";
    case 403:
      return "vouch refused this token for the route (403)";
    default:
      return `vouch refused the request (${reply.status} ${reply.code}: ${oneLine(reply.message)})`;
  }
}

export type Verdict = "allow" | "deny" | "defer";

/** The fields of vouch's decision (design §5) the clients act on. */
export interface Decision {
  readonly decision: Verdict;
  readonly stage: string;
  readonly message: string;
  readonly requestHash: string;
  /** `routing` said `pass`: vouch has no opinion and the host's own rules decide. */
  readonly abstain: boolean;
  readonly grant: { readonly token: string; readonly expiresAtMs: number } | null;
}

/**
 * Reads a decision strictly: an unknown `decision` value, a missing
 * `message` or a malformed `grant` is a fault, so nothing vouch did not
 * clearly say can be taken for an allow.
 */
export function parseDecision(body: unknown): Settled<Decision> {
  if (!isRecord(body)) return fault("vouch's decision is not a JSON object");
  const verdict = body["decision"];
  if (verdict !== "allow" && verdict !== "deny" && verdict !== "defer") {
    return fault(`vouch's decision has no valid \`decision\` (got ${JSON.stringify(verdict) ?? "nothing"})`);
  }
  const stage = body["stage"];
  const message = body["message"];
  const hash = body["request_hash"];
  if (typeof stage !== "string" || typeof message !== "string" || typeof hash !== "string") {
    return fault("vouch's decision lacks `stage`, `message` or `request_hash`");
  }
  const abstain = body["abstain"] ?? false;
  if (typeof abstain !== "boolean") return fault("vouch's decision has a non-boolean `abstain`");
  const grant = parseGrant(body["grant"]);
  if (grant.kind === "fault") return grant;
  return { kind: "ok", value: { decision: verdict, stage, message, requestHash: hash, abstain, grant: grant.value } };
}

function parseGrant(raw: unknown): Settled<Decision["grant"]> {
  if (raw === null || raw === undefined) return { kind: "ok", value: null };
  if (isRecord(raw) && typeof raw["token"] === "string" && raw["token"] !== "" && typeof raw["expires_at_ms"] === "number") {
    return { kind: "ok", value: { token: raw["token"], expiresAtMs: raw["expires_at_ms"] } };
  }
  return fault("vouch's decision carries a malformed `grant`");
}

/** `POST /v1/review`: the decision, or a fault saying why there is none. */
export async function review(
  settings: VouchSettings,
  request: CanonicalRequest,
  deadline: number,
  signal?: AbortSignal,
): Promise<Settled<Decision>> {
  const reply = await post(settings, "/v1/review", request, deadline, signal);
  switch (reply.kind) {
    case "ok":
      return parseDecision(reply.body);
    case "refused":
      return fault(describeRefusal(reply));
    case "fault":
      return reply;
  }
}

/** The canonical request (design §4) as the clients build it. */
export interface CanonicalRequest {
  id?: string;
  tool_call_id?: string;
  session_id: string;
  turn_id?: string;
  source?: string;
  agent?: string;
  surface: string;
  tool?: string;
  command?: string;
  cwd?: string;
  path?: string;
  destination?: string;
  input?: Record<string, unknown>;
  transcript?: Array<{ role: "user"; text: string }>;
  issue_grant?: boolean;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A short, single-line name for an error: its code or class, never a stack. */
export function errorCode(error: unknown): string {
  if (isRecord(error)) {
    const cause = error["cause"];
    if (isRecord(cause) && typeof cause["code"] === "string") return cause["code"];
    if (typeof error["code"] === "string") return error["code"];
  }
  if (error instanceof Error) return `${error.name}: ${oneLine(error.message)}`;
  return oneLine(String(error));
}

/** Collapses whitespace and caps length, for text that goes into one log or reason line. */
export function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}…`;
}
