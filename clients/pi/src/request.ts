/**
 * Translating what Pi and pi-permission-system hand the extension into
 * vouch's canonical request (design §4).
 *
 * Two sources: a link of the authorizer chain receives the permission
 * system's request (`surface`, `value`, `toolName`, `command`/`path`,
 * `toolCallId`, `requestId`) but no cwd and no tool input; Pi's own
 * `tool_call` hook (the fallback) receives the tool name and its input.
 * Both add what only Pi knows: the working directory, the session id, the
 * latest user message (the one piece of evidence that can authorize an
 * action) and a turn id that changes with every user prompt. Every field
 * from the permission system is read defensively: it is another
 * extension's object, and a shape this code does not recognise must give a
 * request vouch reviews strictly, never an exception.
 */

import type { CanonicalRequest } from "../../common/vouch.ts";
import { isRecord } from "../../common/vouch.ts";

/** `source` of every request this client sends. */
export const SOURCE = "pi";
/** `agent` when the permission system names none: Pi's main agent. */
const MAIN_AGENT = "main";
/** `turn_id` when the session holds no user message yet. */
const NO_USER_TURN = "no-user-message";

/** What the extension knows about the session a call belongs to. */
export interface SessionView {
  readonly sessionId: string;
  readonly cwd: string;
  /** Id of the latest user message entry: a new prompt, a new turn. */
  readonly turnId: string;
  /** Text of the latest user message, if there is one. */
  readonly latestUserText: string | undefined;
}

/** The slice of Pi's read-only session manager this file reads. */
export interface SessionSource {
  readonly cwd: string;
  readonly sessionManager: {
    getSessionId(): string;
    getBranch(): readonly unknown[];
  };
}

/** Reads the session id, cwd and latest user message from Pi's context. */
export function viewSession(ctx: SessionSource): SessionView {
  const branch = ctx.sessionManager.getBranch();
  for (let i = branch.length - 1; i >= 0; i -= 1) {
    const entry = branch[i];
    if (!isRecord(entry) || entry["type"] !== "message" || typeof entry["id"] !== "string") continue;
    const message = entry["message"];
    if (!isRecord(message) || message["role"] !== "user") continue;
    return { sessionId: ctx.sessionManager.getSessionId(), cwd: ctx.cwd, turnId: entry["id"], latestUserText: messageText(message["content"]) };
  }
  return { sessionId: ctx.sessionManager.getSessionId(), cwd: ctx.cwd, turnId: NO_USER_TURN, latestUserText: undefined };
}

/** A user message's text: a string, or the text blocks of a content array joined. */
function messageText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content.flatMap((block: unknown) =>
    isRecord(block) && block["type"] === "text" && typeof block["text"] === "string" ? [block["text"]] : [],
  );
  return parts.length === 0 ? undefined : parts.join("\n");
}

/** Surfaces vouch knows by name; anything else is sent as a custom surface. */
const KNOWN_SURFACES = new Set(["bash", "write", "edit", "read", "path", "external_directory", "network", "mcp", "delete", "git_push"]);
/** Surfaces whose action is about a path. */
const PATH_SURFACES = new Set(["write", "edit", "read", "path", "external_directory", "delete"]);

/**
 * vouch's `surface` for a permission-system surface or Pi tool name:
 * a known one as is, another valid name as a custom surface, and anything
 * else (empty, too long, odd characters) with those characters replaced,
 * so the request stays valid and the model still sees the tool in `tool`.
 */
export function vouchSurface(name: string): string {
  if (KNOWN_SURFACES.has(name)) return name;
  const cleaned = name.replace(/[^A-Za-z0-9_.:-]/g, "_").slice(0, 64);
  return cleaned === "" ? "unknown_tool" : cleaned;
}

/** The request for one ask a chain link received (`details` as the permission system passed it). */
export function requestFromLink(details: unknown, session: SessionView): CanonicalRequest {
  const d = isRecord(details) ? details : {};
  const payload = isRecord(d["payload"]) ? d["payload"] : {};
  const asked = isRecord(payload["request"]) ? payload["request"] : {};
  const intent = isRecord(d["accessIntent"]) ? d["accessIntent"] : {};
  const gateSurface = text(asked["surface"]) ?? text(intent["surface"]) ?? text(d["toolName"]) ?? "unknown_tool";
  const surface = vouchSurface(gateSurface);
  const tool = text(asked["toolName"]) ?? text(d["toolName"]);
  const value = text(asked["value"]);
  const command = text(d["command"]) ?? (surface === "bash" ? value : undefined);
  const path = PATH_SURFACES.has(surface)
    ? (text(intent["boundaryValue"]) ?? text(d["path"]) ?? (command === undefined ? value : undefined))
    : undefined;
  const request = base(session, surface, tool, text(d["agentName"]));
  put(request, "id", text(d["requestId"]));
  put(request, "tool_call_id", text(d["toolCallId"]));
  put(request, "command", command);
  put(request, "path", path);
  // What the rule fired on for a surface that is neither a command nor a
  // path (an MCP target, a skill name): the model needs to see it.
  if (command === undefined && path === undefined && value !== undefined) request.input = { value };
  return request;
}

/** The request for one Pi `tool_call` (the deny-only fallback). */
export function requestFromToolCall(
  toolName: string,
  toolCallId: string,
  input: Record<string, unknown>,
  session: SessionView,
): CanonicalRequest {
  const surface = vouchSurface(toolName);
  const request = base(session, surface, toolName, undefined);
  put(request, "tool_call_id", toolCallId);
  if (surface === "bash") {
    // Pi's bash input is {command, timeout?}; the command is the action,
    // the timeout is not part of what it does.
    put(request, "command", text(input["command"]) ?? "");
    return request;
  }
  put(request, "path", PATH_SURFACES.has(surface) ? text(input["path"]) : undefined);
  request.input = input;
  return request;
}

function base(session: SessionView, surface: string, tool: string | undefined, agent: string | undefined): CanonicalRequest {
  const request: CanonicalRequest = {
    session_id: session.sessionId,
    turn_id: session.turnId,
    source: SOURCE,
    agent: agent ?? MAIN_AGENT,
    surface,
    cwd: session.cwd,
  };
  put(request, "tool", tool);
  if (session.latestUserText !== undefined) request.transcript = [{ role: "user", text: session.latestUserText }];
  return request;
}

function put<K extends "id" | "tool_call_id" | "tool" | "command" | "path">(
  request: CanonicalRequest,
  key: K,
  value: string | undefined,
): void {
  if (value !== undefined) request[key] = value;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
