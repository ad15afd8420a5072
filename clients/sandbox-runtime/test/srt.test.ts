/**
 * `vouch-srt` end to end: the real `@anthropic-ai/sandbox-runtime` library
 * (bubblewrap, socat and ripgrep from Debian), a real `vouch serve` with the
 * project's test model server as reviewer, and a loopback HTTP target that
 * the sandboxed `curl` can reach only through the sandbox's proxy — so
 * nothing leaves the machine. The target counts what reaches it.
 */

import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";

import { BIN } from "../../test-support/pi.ts";
import type { Finished } from "../../test-support/process.ts";
import { runToEnd } from "../../test-support/process.ts";
import { metric, startPreConsumer } from "../../test-support/pre-consumer.ts";
import type { ModelServer, VouchServer } from "../../test-support/vouch.ts";
import { allow, deadPort, deny, startModelServer, startVouch } from "../../test-support/vouch.ts";

const CLI = new URL("../src/cli.ts", import.meta.url).pathname;
/** One wrapped run may take this long before the test calls it hung. */
const RUN_TIMEOUT_MS = 60_000;

let model: ModelServer;
let vouch: VouchServer;
let target: Server;
let targetPort = 0;
const hits: string[] = [];

before(async () => {
  model = await startModelServer({
    rules: [
      { contains: "allowed-dest", reply: allow("the user asked to fetch it") },
      { contains: "denied-dest", reply: deny("scripted deny: unexpected destination") },
    ],
  });
  vouch = await startVouch({ reviewerUrl: model.baseUrl });
  target = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.end("reached\n");
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetPort = (target.address() as AddressInfo).port;
});

after(async () => {
  target?.closeAllConnections();
  await new Promise<void>((resolve) => (target === undefined ? resolve() : target.close(() => resolve())));
  await Promise.all([vouch?.stop(), model?.stop()]);
});

let runs = 0;

/** `vouch-srt -c COMMAND` in a fresh project dir, with a fresh HOME (so no ~/.srt-settings.json). */
async function vouchSrt(command: string, env: Record<string, string>, args: string[] = ["-c", command]): Promise<Finished> {
  runs += 1;
  const home = mkdtempSync(join(tmpdir(), "vouch-srt-home-"));
  const project = mkdtempSync(join(tmpdir(), "vouch-srt-project-"));
  const run = await runToEnd(CLI, args, {
    cwd: project,
    env: { PATH: `${BIN}:${process.env["PATH"] ?? "/usr/bin:/bin"}`, HOME: home, VOUCH_SESSION: `srt-e2e-${runs}`, VOUCH_TURN: "t-1", ...env },
    timeoutMs: RUN_TIMEOUT_MS,
  });
  assert.ok(!run.stdout.includes(vouch.token) && !run.stderr.includes(vouch.token), "the adapter token leaked");
  return run;
}

/** `curl` through the sandbox's proxy (`--noproxy ""` keeps it from bypassing the proxy for loopback). */
function curl(path: string): string {
  return `curl -sS --noproxy "" -m 10 http://127.0.0.1:${targetPort}${path}`;
}

const hitsOf = (prefix: string) => hits.filter((h) => h.startsWith(prefix));
const live = () => ({ VOUCH_URL: vouch.url, VOUCH_TOKEN_FILE: vouch.tokenFile });

describe("vouch-srt with the real sandbox-runtime", () => {
  test("an allowed destination is reached once per grant: two connections, two grants, each consumed once", async () => {
    const [minted, consumed] = [await metric(vouch.url, "vouch_grants_minted_total"), await metric(vouch.url, "vouch_grants_consumed_total")];
    const run = await vouchSrt(`${curl("/allowed-dest/first")}; ${curl("/allowed-dest/second")}`, live());
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(hitsOf("/allowed-dest/"), ["/allowed-dest/first", "/allowed-dest/second"]);
    assert.equal(run.stdout, "reached\nreached\n");
    assert.equal(await metric(vouch.url, "vouch_grants_minted_total"), minted + 2);
    assert.equal(await metric(vouch.url, "vouch_grants_consumed_total"), consumed + 2);
    assert.doesNotMatch(run.stderr, /sandbox_violations/);
  });

  test("a replayed grant is refused: the destination is not reached", async () => {
    const thief = await startPreConsumer(vouch.url);
    try {
      const run = await vouchSrt(curl("/allowed-dest/replayed"), { VOUCH_URL: thief.url, VOUCH_TOKEN_FILE: vouch.tokenFile });
      assert.equal(thief.stolen(), 1);
      assert.deepEqual(hitsOf("/allowed-dest/replayed"), []);
      assert.match(run.stderr, /deny network-outbound 127\.0\.0\.1:\d+ \(.*vouch did not consume the grant/);
    } finally {
      await thief.close();
    }
  });

  test("a denied destination is never reached and the violation carries vouch's reason", async () => {
    const run = await vouchSrt(curl("/denied-dest"), live());
    assert.deepEqual(hitsOf("/denied-dest"), []);
    assert.match(run.stderr, /<sandbox_violations>\ndeny network-outbound 127\.0\.0\.1:\d+ \(Automatic policy denied this action \(not a human\)\..*scripted deny: unexpected destination/);
  });

  test("the proxy is the only way out: a direct connection reaches nothing and asks nothing", async () => {
    const minted = await metric(vouch.url, "vouch_grants_minted_total");
    const run = await vouchSrt(`curl -sS --noproxy '*' -m 5 http://127.0.0.1:${targetPort}/allowed-dest/direct; echo "curl=$?"`, live());
    assert.deepEqual(hitsOf("/allowed-dest/direct"), []);
    assert.match(run.stdout, /curl=[1-9]\d*/);
    assert.equal(await metric(vouch.url, "vouch_grants_minted_total"), minted);
  });

  test("vouch down: not reached, and the violation says why", async () => {
    const run = await vouchSrt(curl("/allowed-dest/down"), { VOUCH_URL: `http://127.0.0.1:${await deadPort()}`, VOUCH_TOKEN: "t" });
    assert.deepEqual(hitsOf("/allowed-dest/down"), []);
    assert.match(run.stderr, /deny network-outbound 127\.0\.0\.1:\d+ \(\[vouch fault: unreachable\] Automatic review could not complete, so vouch blocked this connection \(vouch is unreachable/);
  });

  test("the sandboxed command sees neither the token variables nor vouch's state directory", async () => {
    const state = dirname(vouch.tokenFile);
    const script = [
      'echo "token=${VOUCH_TOKEN:-unset} file=${VOUCH_TOKEN_FILE:-unset}"',
      `cat ${state}/adapter.token || echo no-adapter-token`,
      `cat ${state}/operator.token || echo no-operator-token`,
    ].join("; ");
    for (const env of [live(), { VOUCH_URL: vouch.url, VOUCH_TOKEN: vouch.token, VOUCH_HOME: dirname(state) }]) {
      const run = await vouchSrt(script, env);
      assert.equal(run.stdout, "token=unset file=unset\nno-adapter-token\nno-operator-token\n", run.stderr);
    }
  });

  test("the exit status is the command's; vouch-srt's own failures are 125", async () => {
    assert.equal((await vouchSrt("exit 7", live())).code, 7);
    const argv = await vouchSrt("", live(), ["--", "sh", "-c", "echo \"$1\"; exit 3", "sh", "it's one argument"]);
    assert.deepEqual([argv.code, argv.stdout], [3, "it's one argument\n"]);
    const bad = await vouchSrt("touch ran", { ...live(), VOUCH_TIMEOUT_MS: "soon" });
    assert.equal(bad.code, 125);
    assert.match(bad.stderr, /^vouch-srt: VOUCH_TIMEOUT_MS `soon` must be a whole number of milliseconds/);
    const noToken = await vouchSrt("true", { VOUCH_URL: vouch.url, VOUCH_TOKEN_FILE: "/nonexistent/adapter.token" });
    assert.equal(noToken.code, 125);
    assert.match(noToken.stderr, /cannot read token file `\/nonexistent\/adapter.token` \(from VOUCH_TOKEN_FILE\): ENOENT/);
    const usage = await vouchSrt("", live(), ["--bogus"]);
    assert.equal(usage.code, 125);
    assert.match(usage.stderr, /^vouch-srt: unexpected `--bogus` \(put the command after --\)\nusage: vouch-srt/);
  });
});
