/**
 * The Pi client inside the real Pi agent (`@earendil-works/pi-coding-agent`
 * 1.6.0 from the registry, on the registry's Node 22), run headless against
 * a scripted agent model on loopback, with a real `vouch serve` and the
 * project's test model server as vouch's reviewer.
 *
 * - With pi-permission-system 20.7.3 (the registry's; no authorizer chain)
 *   the extension says it falls back to a deny-only `tool_call` pre-filter,
 *   and that pre-filter stops what vouch denies.
 * - With the chain host double (the documented >= 20.9 interface, single
 *   slot and per-session map) vouch is a link of the chain.
 *
 * In each: a denied bash call does not run and the agent's tool result
 * carries vouch's message; an allowed one runs.
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import type { AgentModel } from "../../test-support/agent-model.ts";
import { RUN_PREFIX, startAgentModel, toolResults } from "../../test-support/agent-model.ts";
import type { PiRun, PiWorld } from "../../test-support/pi.ts";
import { piWorld, runPi, writePermissionConfig } from "../../test-support/pi.ts";
import { deadPort, useReviewWorld } from "../../test-support/vouch.ts";

const CLIENT = new URL("..", import.meta.url).pathname;
const CHAIN_HOST = new URL("./chain-host/index.ts", import.meta.url).pathname;
const PERMISSION_SYSTEM = new URL("../../node_modules/@gotgenes/pi-permission-system", import.meta.url).pathname;

const review = useReviewWorld("cmd", "scripted deny: the user did not ask for this");
let agent: AgentModel;

before(async () => {
  agent = await startAgentModel();
});

after(async () => {
  await agent?.close();
});

interface Outcome {
  run: PiRun;
  world: PiWorld;
  /** What the agent model was shown as the tool's result. */
  seen: string;
}

async function ask(extensions: string[], command: string, env: Record<string, string> = {}, setup?: (world: PiWorld) => void): Promise<Outcome> {
  const world = piWorld(agent.baseUrl);
  setup?.(world);
  const run = await runPi(world, extensions, `${RUN_PREFIX}${command}`, { VOUCH_URL: review().vouch.url, VOUCH_TOKEN_FILE: review().vouch.tokenFile, ...env });
  assert.equal(run.code, 0, `pi failed:\n${run.stderr}`);
  const token = review().vouch.token;
  assert.ok(!run.stdout.includes(token) && !run.stderr.includes(token) && !JSON.stringify(agent.requests).includes(token), "the adapter token leaked");
  const results = toolResults(agent.requests);
  return { run, world, seen: results[results.length - 1] ?? "" };
}

const VOUCH_DENIAL = /Automatic policy denied this action \(not a human\).*scripted deny: the user did not ask for this/;

describe("pi-permission-system 20.7.3: the deny-only fallback", () => {
  const extensions = [PERMISSION_SYSTEM, CLIENT];
  // The permission system allows everything itself, so whatever is stopped
  // was stopped by vouch's pre-filter.
  const setup = (world: PiWorld) => writePermissionConfig(world, { permission: { "*": "allow" } });

  test("says at load that it falls back, and a denied bash call does not run", async () => {
    const { run, world, seen } = await ask(extensions, "touch denied-cmd-ran", {}, setup);
    assert.match(run.stderr, /no authorizer chain \(it arrived in 20\.9\.0\); vouch runs as a deny-only pre-filter/);
    assert.equal(existsSync(join(world.project, "denied-cmd-ran")), false, "the denied command ran");
    assert.match(seen, VOUCH_DENIAL);
  });

  test("an allowed bash call runs", async () => {
    const { world, seen } = await ask(extensions, "touch allowed-cmd-ran", {}, setup);
    assert.equal(existsSync(join(world.project, "allowed-cmd-ran")), true, `the allowed command did not run; agent saw: ${seen}`);
  });

  test("the agent's commands do not inherit VOUCH_TOKEN", async () => {
    const { world } = await ask(extensions, "echo allowed-cmd token=${VOUCH_TOKEN:-unset} > seen.txt", { VOUCH_TOKEN: review().vouch.token, VOUCH_TOKEN_FILE: "" }, setup);
    assert.equal(readFileSync(join(world.project, "seen.txt"), "utf8"), "allowed-cmd token=unset\n");
  });

  test("a hard deny does not run and never reaches the model", async () => {
    const { world, seen } = await ask(extensions, "mkdir -p .claude && touch .claude/settings.json", {}, setup);
    assert.equal(existsSync(join(world.project, ".claude")), false);
    assert.match(seen, /Automatic policy denied this action/);
    assert.equal((await review().model.requests()).filter((r) => r.body.includes(".claude/settings.json")).length, 0);
  });

  test("vouch down: the call is blocked, never run", async () => {
    const { world, seen } = await ask(extensions, "touch allowed-cmd-down", { VOUCH_URL: `http://127.0.0.1:${await deadPort()}` }, setup);
    assert.equal(existsSync(join(world.project, "allowed-cmd-down")), false);
    assert.match(seen, /Automatic review could not complete, so vouch blocked this action \(vouch is unreachable/);
  });

  test("decision broadcasts go to the audit: ingested, or off with one line where this vouch has none", async () => {
    const probe = await fetch(`${review().vouch.url}/v1/audit/events`, { method: "POST", headers: { authorization: `Bearer ${review().vouch.token}` }, body: "[]" });
    const { run } = await ask(extensions, "touch allowed-cmd-audit", {}, setup);
    const lines = run.stderr.split("\n").filter((l) => l.startsWith("vouch: audit:"));
    assert.deepEqual(lines, probe.status === 501 ? ["vouch: audit: this vouch has no audit ingest (501); forwarding of permission decisions is off"] : [], run.stderr);
  });
});

describe("the authorizer chain (host double of pi-permission-system >= 20.9)", () => {
  const extensions = [CHAIN_HOST, CLIENT];

  test("registered as `vouch`; a denied bash call does not run and the agent sees vouch's message", async () => {
    const { run, world, seen } = await ask(extensions, "touch denied-cmd-ran", { CHAIN_HOST_CHAIN: "vouch" });
    assert.match(run.stderr, /authorizer `vouch` registered with pi-permission-system's service/);
    assert.equal(existsSync(join(world.project, "denied-cmd-ran")), false);
    assert.match(seen, /^\[pi-permission-system\] The user denied this 'bash' call \(rule '\*'\)\. Reason: Automatic policy denied/);
    assert.match(seen, VOUCH_DENIAL);
  });

  test("an allowed bash call runs", async () => {
    const { world } = await ask(extensions, "touch allowed-cmd-ran", { CHAIN_HOST_CHAIN: "vouch" });
    assert.equal(existsSync(join(world.project, "allowed-cmd-ran")), true);
  });

  test("vouch's defer goes to the chain's terminal: headless, that blocks", async () => {
    const { world, seen } = await ask(extensions, "touch undecided-ran", { CHAIN_HOST_CHAIN: "vouch" });
    assert.equal(existsSync(join(world.project, "undecided-ran")), false);
    assert.match(seen, /needs confirmation, and no one can be asked/);
  });

  test("registered but not listed in the chain: vouch is not consulted", async () => {
    const { world } = await ask(extensions, "touch allowed-cmd-unlisted", { CHAIN_HOST_CHAIN: "" });
    assert.equal(existsSync(join(world.project, "allowed-cmd-unlisted")), false);
    assert.equal((await review().model.requests()).filter((r) => r.body.includes("allowed-cmd-unlisted")).length, 0);
  });

  test("the per-session service map (29+): allow runs, deny does not", async () => {
    const env = { CHAIN_HOST_CHAIN: "vouch", CHAIN_HOST_VARIANT: "per-session" };
    const allowed = await ask(extensions, "touch allowed-cmd-map", env);
    assert.match(allowed.run.stderr, /registered with pi-permission-system's session service/);
    assert.equal(existsSync(join(allowed.world.project, "allowed-cmd-map")), true);
    const denied = await ask(extensions, "touch denied-cmd-map", env);
    assert.equal(existsSync(join(denied.world.project, "denied-cmd-map")), false);
    assert.match(denied.seen, VOUCH_DENIAL);
  });
});
