/**
 * The shared client core: settings from the environment, the token, the
 * bounded HTTP exchange (against real loopback servers that misbehave on
 * purpose) and the strict reading of vouch's decision (against captured
 * decisions).
 */

import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";

import type { VouchSettings } from "./vouch.ts";
import { parseDecision, post, readSettings, readToken, review } from "./vouch.ts";

const FIXTURES = new URL("../sandbox-runtime/test/fixtures/", import.meta.url);
const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8"));

function settingsOf(env: Record<string, string>): VouchSettings {
  const settings = readSettings(env, 1234);
  assert.equal(settings.kind, "ok", settings.kind === "fault" ? settings.reason : "");
  return (settings as { value: VouchSettings }).value;
}

function problem(env: Record<string, string>): string {
  const settings = readSettings(env, 1234);
  assert.equal(settings.kind, "fault");
  return settings.kind === "fault" ? settings.reason : "";
}

describe("settings", () => {
  test("defaults: vouch's own address, the client's default deadline, the default token file", () => {
    const settings = settingsOf({});
    assert.equal(settings.url, "http://127.0.0.1:8787");
    assert.equal(settings.timeoutMs, 1234);
    assert.deepEqual(settings.token, { kind: "file", path: join(homedir(), ".local/state/vouch/adapter.token"), from: "the default state directory" });
  });

  test("the token comes from VOUCH_TOKEN, VOUCH_TOKEN_FILE, VOUCH_HOME, XDG_STATE_HOME in that order", () => {
    assert.deepEqual(settingsOf({ VOUCH_TOKEN: " abc ", VOUCH_TOKEN_FILE: "/f" }).token, { kind: "env", value: "abc" });
    assert.deepEqual(settingsOf({ VOUCH_TOKEN_FILE: "/f", VOUCH_HOME: "/h" }).token, { kind: "file", path: "/f", from: "VOUCH_TOKEN_FILE" });
    assert.deepEqual(settingsOf({ VOUCH_HOME: "/h", XDG_STATE_HOME: "/x" }).token, { kind: "file", path: "/h/state/adapter.token", from: "VOUCH_HOME" });
    const xdg = settingsOf({ XDG_STATE_HOME: "/x" }).token;
    assert.equal(xdg.kind === "file" ? xdg.path : "", "/x/vouch/adapter.token");
  });

  test("VOUCH_URL: loopback over http, anything over https, nothing else", () => {
    assert.equal(settingsOf({ VOUCH_URL: "http://localhost:9/" }).url, "http://localhost:9");
    assert.equal(settingsOf({ VOUCH_URL: "http://[::1]:9" }).url, "http://[::1]:9");
    assert.equal(settingsOf({ VOUCH_URL: "https://vouch.example.com" }).url, "https://vouch.example.com");
    assert.match(problem({ VOUCH_URL: "http://10.0.0.5:8787" }), /clear text to a non-loopback host; use https/);
    assert.match(problem({ VOUCH_URL: "http://127.0.0.1.example.com" }), /non-loopback/);
    assert.match(problem({ VOUCH_URL: "unix:/run/vouch.sock" }), /must start with http:\/\/ or https:\/\//);
    assert.match(problem({ VOUCH_URL: "not a url" }), /is not a URL/);
    assert.match(problem({ VOUCH_URL: "https://u:p@vouch.example.com" }), /must not carry credentials/);
  });

  test("VOUCH_TIMEOUT_MS must be whole milliseconds in 1..600000", () => {
    assert.equal(settingsOf({ VOUCH_TIMEOUT_MS: " 2500 " }).timeoutMs, 2500);
    for (const bad of ["0", "-5", "1.5", "1e3", "soon", "600001"]) {
      assert.match(problem({ VOUCH_TIMEOUT_MS: bad }), /VOUCH_TIMEOUT_MS .* must be a whole number of milliseconds from 1 to 600000/, bad);
    }
  });
});

describe("token file", () => {
  const dir = mkdtempSync(join(tmpdir(), "vouch-token-"));
  const file = (name: string, content: string, mode: number) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    chmodSync(path, mode);
    return { kind: "file" as const, path, from: "VOUCH_TOKEN_FILE" };
  };

  test("read and trimmed when private", () => {
    assert.deepEqual(readToken(file("ok", "tok-123\n", 0o600)), { kind: "ok", value: "tok-123" });
  });

  test("refused when readable by others, empty, oversized, missing or a directory", () => {
    const reason = (source: Parameters<typeof readToken>[0]) => {
      const token = readToken(source);
      return token.kind === "fault" ? token.reason : "read";
    };
    assert.match(reason(file("loose", "tok", 0o644)), /readable by group or others; run `chmod 600/);
    assert.match(reason(file("empty", " \n", 0o600)), /is empty/);
    assert.match(reason(file("big", "x".repeat(5000), 0o600)), /5000 bytes, more than the 4096/);
    assert.match(reason({ kind: "file", path: join(dir, "none"), from: "VOUCH_HOME" }), /cannot read token file .* \(from VOUCH_HOME\): ENOENT/);
    assert.match(reason({ kind: "file", path: dir, from: "VOUCH_TOKEN_FILE" }), /is not a regular file/);
  });
});

describe("the decision", () => {
  test("captured decisions parse", () => {
    const allow = parseDecision(fixture("vouch_review-decision_allow-with-grant.json"));
    assert.equal(allow.kind, "ok");
    assert.deepEqual(allow.kind === "ok" && allow.value.grant, { token: "<redacted-grant-token>", expiresAtMs: 1796112091096 });
    const deny = parseDecision(fixture("vouch_review-decision_deny.json"));
    assert.equal(deny.kind === "ok" && deny.value.decision, "deny");
  });

  test("anything not clearly vouch's decision is a fault", () => {
    const base = fixture("vouch_review-decision_deny.json") as Record<string, unknown>;
    const cases: Array<[Record<string, unknown> | unknown, RegExp]> = [
      [{ ...base, decision: "allowed" }, /no valid `decision`/],
      [{ ...base, decision: true }, /no valid `decision`/],
      [{ ...base, message: undefined }, /lacks `stage`, `message` or `request_hash`/],
      [{ ...base, abstain: "yes" }, /non-boolean `abstain`/],
      [{ ...base, grant: { token: "" , expires_at_ms: 1 } }, /malformed `grant`/],
      [{ ...base, grant: "tok" }, /malformed `grant`/],
      [[base], /not a JSON object/],
    ];
    for (const [body, pattern] of cases) {
      const parsed = parseDecision(body);
      assert.equal(parsed.kind, "fault");
      assert.match(parsed.kind === "fault" ? parsed.reason : "", pattern);
    }
  });
});

/** A loopback server for one test; returns its URL. */
async function serve(listener: RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("the exchange", () => {
  const call = async (listener: RequestListener, timeoutMs = 2000) => {
    const server = await serve(listener);
    try {
      const settings = settingsOf({ VOUCH_URL: server.url, VOUCH_TOKEN: "tok", VOUCH_TIMEOUT_MS: String(timeoutMs) });
      return await post(settings, "/v1/review", { session_id: "s", surface: "bash" }, Date.now() + timeoutMs);
    } finally {
      await server.close();
    }
  };
  const faultOf = (reply: Awaited<ReturnType<typeof post>>) => (reply.kind === "fault" ? reply.reason : `not a fault: ${reply.kind}`);

  test("sends the bearer token and JSON", async () => {
    let seen = "";
    const reply = await call((req, res) => {
      seen = `${req.method} ${req.url} ${req.headers.authorization} ${req.headers["content-type"]}`;
      res.end("{}");
    });
    assert.equal(seen, "POST /v1/review Bearer tok application/json");
    assert.deepEqual(reply, { kind: "ok", status: 200, body: {} });
  });

  test("vouch's error body becomes a refusal with its code and message", async () => {
    const reply = await call((_req, res) => res.writeHead(400).end('{"error":{"code":"invalid_request","message":"unknown field `comand`"}}'));
    assert.deepEqual(reply, { kind: "refused", status: 400, code: "invalid_request", message: "unknown field `comand`" });
  });

  test("a body that is not JSON, too large (declared or streamed), a redirect, or too late is a fault", async () => {
    assert.match(faultOf(await call((_req, res) => res.end("<html>"))), /HTTP 200 with a body that is not JSON/);
    assert.match(faultOf(await call((_req, res) => res.writeHead(200, { "content-length": "9999999" }).end())), /declares 9999999 bytes/);
    const chunk = "x".repeat(64 * 1024);
    const streamed = await call((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      for (let i = 0; i < 20; i += 1) res.write(chunk);
      res.end();
    });
    assert.match(faultOf(streamed), /larger than the 1048576 bytes a reply can be/);
    assert.match(faultOf(await call((_req, res) => res.writeHead(307, { location: "http://127.0.0.1:1/" }).end())), /unreachable/);
    assert.match(faultOf(await call(() => {}, 300)), /did not answer within the client's deadline of 300 ms/);
    // A server that sends headers and then stalls mid-body is bounded by the same deadline.
    assert.match(faultOf(await call((_req, res) => res.writeHead(200).write("{", () => {}), 300)), /deadline of 300 ms/);
  });

  test("review: a 2xx that is not a decision is a fault, never an allow", async () => {
    const server = await serve((_req, res) => res.end('{"decision":"allow"}'));
    try {
      const settings = settingsOf({ VOUCH_URL: server.url, VOUCH_TOKEN: "tok" });
      const outcome = await review(settings, { session_id: "s", surface: "bash" }, Date.now() + 1000);
      assert.equal(outcome.kind, "fault");
    } finally {
      await server.close();
    }
  });
});
