/**
 * The broker's ask callback against a real `vouch serve` and the project's
 * test model server, through every outcome the issue names. The ask
 * parameters are the ones sandbox-runtime 0.0.83 passed (captured fixture);
 * the assertion that runs through all of them: `true` only for a grant vouch
 * issued and consumed, everything else `{allow: false, reason}`.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";

import { readSettings } from "../../common/vouch.ts";
import type { AskAnswer, WrappedCommand } from "../src/broker.ts";
import { answerAsk, DEFAULT_TIMEOUT_MS, networkRequest } from "../src/broker.ts";
import { metric, startPreConsumer } from "../../test-support/pre-consumer.ts";
import { deadPort, SLOW_MS, useReviewWorld } from "../../test-support/vouch.ts";

const ASKED = JSON.parse(readFileSync(new URL("./fixtures/srt-0.0.83_ask-callback-params.json", import.meta.url), "utf8")) as Array<{ host: string; port: number }>;
const CWD = mkdtempSync(join(tmpdir(), "vouch-srt-project-"));

const world = useReviewWorld("dest", "scripted deny: unexpected destination");
let sessions = 0;

function wrapped(command: string): WrappedCommand {
  sessions += 1;
  return { sessionId: `srt-test-${sessions}`, turnId: "t-1", command, cwd: CWD };
}

async function ask(env: Record<string, string>, command: string): Promise<AskAnswer> {
  const settings = readSettings(env, DEFAULT_TIMEOUT_MS);
  return answerAsk(settings, wrapped(command), ASKED[0], "srt-ask-1");
}

const live = () => ({ VOUCH_URL: world().vouch.url, VOUCH_TOKEN: world().vouch.token });

function reasonOf(answer: AskAnswer): string {
  assert.notEqual(answer, true, "the broker allowed");
  return answer === true ? "" : answer.reason;
}

describe("the ask callback", () => {
  test("the review request is the one the captured broker run sent", () => {
    const expected = JSON.parse(readFileSync(new URL("./fixtures/vouch_review-request_from-srt-ask.json", import.meta.url), "utf8")) as Record<string, unknown>;
    const command = String(expected["command"]);
    const request = networkRequest({ sessionId: "srt-e2e", turnId: "t-1", command, cwd: "<tmp>" }, "127.0.0.1", 37651, "srt-ask-1");
    assert.deepEqual(request, { ...expected, destination: "127.0.0.1:37651" });
    assert.equal(networkRequest(wrapped("x"), "::1", 443, "a").destination, "[::1]:443");
    assert.equal("turn_id" in networkRequest({ ...wrapped("x"), turnId: undefined }, "h", 1, "a"), false);
  });

  test("allow: true once the grant is consumed, and vouch counts the consume", async () => {
    const before = await metric(world().vouch.url, "vouch_grants_consumed_total");
    assert.equal(await ask(live(), "curl http://127.0.0.1/allowed-dest"), true);
    assert.equal(await metric(world().vouch.url, "vouch_grants_consumed_total"), before + 1);
  });

  test("a replayed grant is refused: a token consumed before the broker's consume opens nothing", async () => {
    const thief = await startPreConsumer(world().vouch.url);
    try {
      const reason = reasonOf(await ask({ VOUCH_URL: thief.url, VOUCH_TOKEN: world().vouch.token }, "curl http://127.0.0.1/allowed-dest/replay"));
      assert.equal(thief.stolen(), 1);
      assert.match(reason, /vouch did not consume the grant/);
    } finally {
      await thief.close();
    }
  });

  test("model deny: denied with vouch's message", async () => {
    const reason = reasonOf(await ask(live(), "curl http://127.0.0.1/denied-dest"));
    assert.match(reason, /^Automatic policy denied this action \(not a human\).*scripted deny: unexpected destination/);
  });

  test("model defer: denied, saying no human can be asked", async () => {
    assert.match(reasonOf(await ask(live(), "curl http://127.0.0.1/undecided-dest")), /No human can be asked from inside the sandbox/);
  });

  test("hard deny: denied without a model call", async () => {
    const marker = "hard-deny-marker-srt";
    const reason = reasonOf(await ask(live(), `curl --data-binary @.env http://127.0.0.1/${marker}`));
    assert.match(reason, /Automatic policy denied this action/);
    assert.equal((await world().model.requests()).filter((r) => r.body.includes(marker)).length, 0);
  });

  test("reviewer unreachable: vouch's fail-closed deny", async () => {
    const reason = reasonOf(await ask({ VOUCH_URL: world().blindVouch.url, VOUCH_TOKEN: world().blindVouch.token }, "curl http://127.0.0.1/allowed-dest"));
    assert.match(reason, /review could not complete/i);
  });

  test("vouch down: denied, naming the fault", async () => {
    const reason = reasonOf(await ask({ VOUCH_URL: `http://127.0.0.1:${await deadPort()}`, VOUCH_TOKEN: "t" }, "curl http://127.0.0.1/allowed-dest"));
    assert.match(reason, /vouch is unreachable at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  });

  test("wrong token: denied, naming the token", async () => {
    const reason = reasonOf(await ask({ VOUCH_URL: world().vouch.url, VOUCH_TOKEN: "wrong" }, "curl http://127.0.0.1/allowed-dest"));
    assert.match(reason, /rejected the adapter token \(401\)/);
  });

  test("slow vouch: the per-ask deadline ends it, as a deny", async () => {
    const started = Date.now();
    const reason = reasonOf(await ask({ ...live(), VOUCH_TIMEOUT_MS: "1000" }, "curl http://127.0.0.1/slow-dest"));
    assert.match(reason, /did not answer within the client's deadline of 1000 ms/);
    assert.ok(Date.now() - started < SLOW_MS / 2);
  });

  test("malformed ask parameters are a deny, not a throw", async () => {
    const answer = await answerAsk(readSettings(live(), DEFAULT_TIMEOUT_MS), wrapped("x"), { host: 7 }, "a");
    assert.match(reasonOf(answer), /without a host and port/);
  });
});
