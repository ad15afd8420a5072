/**
 * Mapping what Pi and pi-permission-system hand the extension into vouch's
 * canonical request, against the payloads captured from the real packages
 * (`fixtures/`), and the answer for every outcome of a review.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import type { Decision } from "../../common/vouch.ts";
import { fault } from "../../common/vouch.ts";
import { faultMessage, linkVerdict, preFilter } from "../src/answer.ts";
import { requestFromLink, requestFromToolCall, viewSession, vouchSurface } from "../src/request.ts";
import type { SessionView } from "../src/request.ts";

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")) as Record<string, unknown>;

const SESSION: SessionView = { sessionId: "01a2309f-b5c5-763a-b313-bb670b389557", cwd: "<project dir>", turnId: "cb20be25", latestUserText: "Please run: touch ran-x" };

describe("the chain link's request", () => {
  test("the captured 26.3.1 bash ask maps to the request vouch reviewed in the captured run", () => {
    const { details } = fixture("pps-26.3.1_authorizer-link_authorize-args.json") as { details: Record<string, unknown> };
    const expected = (fixture("vouch_review_from-pi-link_reviewer-deny.json") as { request: Record<string, unknown> }).request;
    const request = requestFromLink(details, SESSION);
    // The captured run was a different ask (other request id) of the same call.
    assert.deepEqual({ ...request, id: "x" }, { ...expected, id: "x" });
    assert.equal(request.id, details["requestId"]);
  });

  test("external_directory: the path is the boundary the rule fired on, and the command is kept", () => {
    const { details } = fixture("pps-26.3.1_authorizer-link_external-directory_allow-capped.json") as { details: Record<string, unknown> };
    const request = requestFromLink(details, SESSION);
    assert.equal(request.surface, "external_directory");
    assert.equal(request.command, "cp <outside dir>/note.txt copied.txt");
    assert.equal(request.path, "<outside dir>/note.txt");
    assert.equal(request.tool, "bash");
  });

  test("a surface that is neither command nor path carries its value as input", () => {
    const request = requestFromLink({ requestId: "r", payload: { request: { surface: "mcp", toolName: "mcp", value: "exa:search" } } }, SESSION);
    assert.equal(request.surface, "mcp");
    assert.deepEqual(request.input, { value: "exa:search" });
  });

  test("shapes this code does not know still give a valid request, never a throw", () => {
    for (const details of [null, undefined, 42, "x", [], {}, { payload: 7 }, { payload: { request: { surface: 9 } } }]) {
      const request = requestFromLink(details, SESSION);
      assert.equal(request.surface, "unknown_tool");
      assert.equal(request.session_id, SESSION.sessionId);
    }
  });

  test("surface names vouch does not know become valid custom surfaces", () => {
    assert.equal(vouchSurface("read"), "read");
    assert.equal(vouchSurface("skill"), "skill");
    assert.equal(vouchSurface("my tool!"), "my_tool_");
    assert.equal(vouchSurface("t".repeat(100)).length, 64);
    assert.equal(vouchSurface(""), "unknown_tool");
  });
});

describe("the pre-filter's request", () => {
  test("the captured tool_call event maps to a bash request (the timeout is not part of the action)", () => {
    const event = fixture("pi-1.6.0_tool_call-hook-event.json") as { toolName: string; toolCallId: string; input: Record<string, unknown> };
    const request = requestFromToolCall(event.toolName, event.toolCallId, { ...event.input, timeout: 30 }, SESSION);
    assert.deepEqual(request, {
      session_id: SESSION.sessionId,
      turn_id: "cb20be25",
      source: "pi",
      agent: "main",
      surface: "bash",
      cwd: "<project dir>",
      tool: "bash",
      transcript: [{ role: "user", text: "Please run: touch ran-x" }],
      tool_call_id: "call_fake_1",
      command: "touch ran-x",
    });
  });

  test("file tools carry their path and their whole input", () => {
    const request = requestFromToolCall("write", "c1", { path: "notes.md", content: "hello" }, SESSION);
    assert.equal(request.surface, "write");
    assert.equal(request.path, "notes.md");
    assert.deepEqual(request.input, { path: "notes.md", content: "hello" });
  });
});

describe("the session view", () => {
  const ctx = (branch: unknown[]) => ({ cwd: "/p", sessionManager: { getSessionId: () => "s", getBranch: () => branch } });

  test("the latest user message is the evidence and its entry id is the turn", () => {
    const view = viewSession(
      ctx([
        { type: "message", id: "u1", message: { role: "user", content: "first" } },
        { type: "message", id: "a1", message: { role: "assistant", content: [{ type: "text", text: "ok" }] } },
        { type: "message", id: "u2", message: { role: "user", content: [{ type: "text", text: "second" }, { type: "image" }, { type: "text", text: "line" }] } },
        { type: "message", id: "t1", message: { role: "toolResult", content: [] } },
      ]),
    );
    assert.deepEqual(view, { sessionId: "s", cwd: "/p", turnId: "u2", latestUserText: "second\nline" });
  });

  test("no user message yet: one fixed turn and no evidence", () => {
    assert.deepEqual(viewSession(ctx([{ type: "model_change", id: "m" }, "junk", null])), { sessionId: "s", cwd: "/p", turnId: "no-user-message", latestUserText: undefined });
  });
});

describe("answers", () => {
  const decision = (d: Partial<Decision>): { kind: "ok"; value: Decision } => ({
    kind: "ok",
    value: { decision: "allow", stage: "reviewer", message: "vouch says", requestHash: "h", abstain: false, grant: null, ...d },
  });

  test("only vouch's unqualified allow is an allow", () => {
    assert.deepEqual(linkVerdict(decision({}), "deny"), { kind: "allow" });
    assert.deepEqual(linkVerdict(decision({ abstain: true, stage: "routing" }), "deny"), { kind: "defer" });
    assert.deepEqual(linkVerdict(decision({ decision: "defer" }), "deny"), { kind: "defer" });
    assert.deepEqual(linkVerdict(decision({ decision: "deny" }), "defer"), { kind: "deny", reason: "vouch says" });
    assert.deepEqual(linkVerdict(fault("vouch is down"), "deny"), { kind: "deny", reason: faultMessage("vouch is down") });
    assert.deepEqual(linkVerdict(fault("vouch is down"), "defer"), { kind: "defer" });
  });

  test("the pre-filter only ever blocks", () => {
    assert.equal(preFilter(decision({}), "deny"), undefined);
    assert.equal(preFilter(decision({ decision: "defer" }), "deny"), undefined);
    assert.deepEqual(preFilter(decision({ decision: "deny" }), "defer"), { block: true, reason: "vouch says" });
    assert.deepEqual(preFilter(fault("slow"), "deny"), { block: true, reason: faultMessage("slow") });
    assert.equal(preFilter(fault("slow"), "defer"), undefined);
  });
});
