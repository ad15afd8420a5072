/**
 * The Pi client against a real `vouch serve` and the project's test model
 * server: the chain link (with the permission request exactly as
 * pi-permission-system 26.3.1 passed it, from the captured fixture) and the
 * `tool_call` pre-filter, through every outcome the issue names. The
 * assertion that runs through all of them: nothing ends in an allow that
 * vouch did not give.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";

import { SERVICE_KEY, SESSION_SERVICES_KEY } from "../src/chain.ts";
import type { AuthorizerVerdict, Authorize } from "../src/chain.ts";
import { deadPort, SLOW_MS, useReviewWorld } from "../../test-support/vouch.ts";
import { loadExtension, session } from "./fake-pi.ts";

const FIXTURE = JSON.parse(readFileSync(new URL("./fixtures/pps-26.3.1_authorizer-link_authorize-args.json", import.meta.url), "utf8")) as {
  details: Record<string, unknown>;
};
/** The project the agent works in: its own directory, holding none of vouch's files. */
const CWD = mkdtempSync(join(tmpdir(), "vouch-pi-project-"));

/** The fixture's permission request, for another bash command. */
function linkDetails(command: string): Record<string, unknown> {
  const details = structuredClone(FIXTURE.details);
  const payload = details["payload"] as { request: Record<string, unknown> };
  payload.request["value"] = command;
  details["command"] = command;
  details["requestId"] = `perm-${command.length}-${Math.random().toString(16).slice(2)}`;
  return details;
}

const world = useReviewWorld("cmd", "scripted deny: not what the user asked");
let sessions = 0;

/** Loads the extension into a fresh session and returns its chain link. */
async function link(env: Record<string, string>, userText: string): Promise<Authorize> {
  sessions += 1;
  let captured: Authorize | undefined;
  const slots = globalThis as unknown as Record<symbol, unknown>;
  slots[SERVICE_KEY] = {
    registerAuthorizer(name: string, authorize: Authorize) {
      assert.equal(name, "vouch");
      captured = authorize;
      return () => {};
    },
  };
  const ext = loadExtension(env, session(`pi-link-${sessions}`, CWD, userText));
  await ext.fire("session_start", { reason: "startup" });
  delete slots[SERVICE_KEY];
  assert.ok(captured, "the extension registered no authorizer");
  return captured;
}

/** Loads the extension with no permission system, and returns its tool_call handler. */
async function preFilter(env: Record<string, string>, userText: string) {
  sessions += 1;
  const ext = loadExtension(env, session(`pi-pre-${sessions}`, CWD, userText));
  await ext.fire("session_start", { reason: "startup" });
  return (command: string) => ext.fire("tool_call", { type: "tool_call", toolName: "bash", toolCallId: "call_1", input: { command } });
}

const live = () => ({ VOUCH_URL: world().vouch.url, VOUCH_TOKEN: world().vouch.token });

function assertDenied(verdict: AuthorizerVerdict, pattern: RegExp): void {
  assert.equal(verdict.kind, "deny");
  assert.match(verdict.kind === "deny" ? (verdict.reason ?? "") : "", pattern);
}

describe("chain link", () => {
  test("allow: vouch's allow is the link's allow", async () => {
    const authorize = await link(live(), "Please run allowed-cmd");
    assert.deepEqual(await authorize(linkDetails("echo allowed-cmd"), {}, {}), { kind: "allow" });
  });

  test("model deny: the link denies with vouch's message as the reason", async () => {
    const authorize = await link(live(), "Please run something");
    const verdict = await authorize(linkDetails("echo denied-cmd"), {}, {});
    assertDenied(verdict, /^Automatic policy denied this action \(not a human\).*scripted deny: not what the user asked/);
  });

  test("model defer: the link defers to the next authority", async () => {
    const authorize = await link(live(), "Please run something");
    assert.deepEqual(await authorize(linkDetails("echo undecided-cmd"), {}, {}), { kind: "defer" });
  });

  test("hard deny: denied without any model call", async () => {
    const authorize = await link(live(), "Please run it");
    const marker = "hard-deny-marker-1";
    const verdict = await authorize(linkDetails(`rm -rf / # ${marker}`), {}, {});
    assertDenied(verdict, /Automatic policy denied this action/);
    const seen = await world().model.requests();
    assert.equal(seen.filter((r) => r.body.includes(marker)).length, 0, "the model was asked about a hard deny");
  });

  test("reviewer unreachable: vouch's fail-closed deny, never an allow", async () => {
    const authorize = await link({ VOUCH_URL: world().blindVouch.url, VOUCH_TOKEN: world().blindVouch.token }, "Please run allowed-cmd");
    assertDenied(await authorize(linkDetails("echo allowed-cmd"), {}, {}), /review could not complete/i);
  });

  test("vouch down: denied, or deferred when VOUCH_FAILURE_MODE=defer", async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    const denyLink = await link({ VOUCH_URL: url, VOUCH_TOKEN: "t" }, "Please run allowed-cmd");
    assertDenied(await denyLink(linkDetails("echo allowed-cmd"), {}, {}), /vouch is unreachable at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    const deferLink = await link({ VOUCH_URL: url, VOUCH_TOKEN: "t", VOUCH_FAILURE_MODE: "defer" }, "Please run allowed-cmd");
    assert.deepEqual(await deferLink(linkDetails("echo allowed-cmd"), {}, {}), { kind: "defer" });
  });

  test("wrong token: denied, naming the token", async () => {
    const authorize = await link({ VOUCH_URL: world().vouch.url, VOUCH_TOKEN: "not-the-token" }, "Please run allowed-cmd");
    assertDenied(await authorize(linkDetails("echo allowed-cmd"), {}, {}), /rejected the adapter token \(401\)/);
  });

  test("slow vouch: the client's deadline ends it, as a deny", async () => {
    const authorize = await link({ ...live(), VOUCH_TIMEOUT_MS: "1000" }, "Please run slow-cmd");
    const started = Date.now();
    const verdict = await authorize(linkDetails("echo slow-cmd"), {}, {});
    assertDenied(verdict, /did not answer within the client's deadline of 1000 ms/);
    assert.ok(Date.now() - started < SLOW_MS / 2, "the link waited for vouch instead of its own deadline");
  });

  test("bad configuration: every review fails closed, naming the variable", async () => {
    const authorize = await link({ VOUCH_URL: "http://example.com:8787", VOUCH_TOKEN: "t" }, "x");
    assertDenied(await authorize(linkDetails("echo allowed-cmd"), {}, {}), /VOUCH_URL .* non-loopback host; use https/);
  });

  test("VOUCH_TOKEN, taken out of the environment at load, survives a /reload", async () => {
    const first = await link(live(), "Please run allowed-cmd");
    assert.deepEqual(await first(linkDetails("echo allowed-cmd first"), {}, {}), { kind: "allow" });
    // A reload loads the extension again in the same process, with the token gone from the environment.
    let captured: Authorize | undefined;
    (globalThis as unknown as Record<symbol, unknown>)[SERVICE_KEY] = { registerAuthorizer: (_: string, fn: Authorize) => ((captured = fn), () => {}) };
    const ext = loadExtension({ VOUCH_URL: world().vouch.url, VOUCH_TOKEN_FILE: join(CWD, "no-such-token") }, session(`pi-reload-${sessions}`, CWD, "Please run allowed-cmd"), true);
    await ext.fire("session_start", { reason: "reload" });
    delete (globalThis as unknown as Record<symbol, unknown>)[SERVICE_KEY];
    assert.ok(captured);
    assert.deepEqual(await captured(linkDetails("echo allowed-cmd again"), {}, {}), { kind: "allow" });
  });

  test("the per-session service map (27+) is found by the session's id", async () => {
    sessions += 1;
    const id = `pi-map-${sessions}`;
    let captured: Authorize | undefined;
    const slots = globalThis as unknown as Record<symbol, unknown>;
    slots[SESSION_SERVICES_KEY] = new Map([
      [id, { registerAuthorizer: (_: string, authorize: Authorize) => ((captured = authorize), () => {}) }],
      ["another-session", { registerAuthorizer: () => assert.fail("registered with another session's service") }],
    ]);
    const ext = loadExtension(live(), session(id, CWD, "Please run allowed-cmd"));
    await ext.fire("session_start", { reason: "startup" });
    delete slots[SESSION_SERVICES_KEY];
    assert.ok(captured);
    assert.deepEqual(await captured(linkDetails("echo allowed-cmd"), {}, {}), { kind: "allow" });
  });
});

describe("tool_call pre-filter (no authorizer chain)", () => {
  test("allow and defer are no opinion; deny blocks with vouch's message", async () => {
    const call = await preFilter(live(), "Please run something");
    assert.equal(await call("echo allowed-cmd"), undefined);
    assert.equal(await call("echo undecided-cmd"), undefined);
    const blocked = (await call("echo denied-cmd")) as { block: boolean; reason: string };
    assert.equal(blocked.block, true);
    assert.match(blocked.reason, /scripted deny: not what the user asked/);
  });

  test("faults block: vouch down, wrong token, slow vouch, reviewer unreachable", async () => {
    const down = await preFilter({ VOUCH_URL: `http://127.0.0.1:${await deadPort()}`, VOUCH_TOKEN: "t" }, "x");
    assert.match(((await down("echo allowed-cmd")) as { reason: string }).reason, /vouch is unreachable/);
    const wrong = await preFilter({ VOUCH_URL: world().vouch.url, VOUCH_TOKEN: "wrong" }, "x");
    assert.match(((await wrong("echo allowed-cmd")) as { reason: string }).reason, /adapter token \(401\)/);
    const slow = await preFilter({ ...live(), VOUCH_TIMEOUT_MS: "800" }, "x");
    assert.match(((await slow("echo slow-cmd")) as { reason: string }).reason, /deadline of 800 ms/);
    const blind = await preFilter({ VOUCH_URL: world().blindVouch.url, VOUCH_TOKEN: world().blindVouch.token }, "x");
    assert.match(((await blind("echo allowed-cmd")) as { reason: string }).reason, /review could not complete/i);
  });

  test("a hard deny blocks without a model call", async () => {
    const call = await preFilter(live(), "x");
    const marker = "hard-deny-marker-2";
    assert.equal(((await call(`rm -rf ~ # ${marker}`)) as { block: boolean }).block, true);
    assert.equal((await world().model.requests()).filter((r) => r.body.includes(marker)).length, 0);
  });
});
