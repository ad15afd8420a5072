/**
 * Round-trip latency of each client: from the client call to its answer,
 * against a real `vouch serve` (release build) with the project's test model
 * server answering at once (0 ms). Four cases per client: a hard deny (no
 * model call) and a model-backed review (every call a new command and a new
 * turn, so neither the verdict cache nor the per-turn budget changes what is
 * measured). The broker's model-backed allow includes its grant consume.
 *
 *     cargo build --release --bin vouch --example model_server
 *     cd clients && npm ci && npm run bench            # 300 calls per case
 *     npm run bench -- 1000                            # or another count
 *
 * Calls are sequential (one in flight), the cases taken in turn (so each
 * sees the same background load), after 200 warm-up rounds.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { readSettings } from "../common/vouch.ts";
import { SERVICE_KEY } from "../pi/src/chain.ts";
import type { Authorize } from "../pi/src/chain.ts";
import { loadExtension } from "../pi/test/fake-pi.ts";
import type { FakeContext } from "../pi/test/fake-pi.ts";
import { answerAsk, DEFAULT_TIMEOUT_MS } from "../sandbox-runtime/src/broker.ts";
import { allow, startModelServer, startVouch } from "../test-support/vouch.ts";

const COUNT = Number(process.argv[2] ?? "300");
const WARMUP = 200;

const model = await startModelServer({ default: allow("benchmark allow") });
const vouch = await startVouch({ reviewerUrl: model.baseUrl, extraToml: "[server]\nrate_limit_per_second = 100000" });
const cwd = mkdtempSync(join(tmpdir(), "vouch-bench-project-"));
const env = { VOUCH_URL: vouch.url, VOUCH_TOKEN: vouch.token };

/** A Pi context whose latest user message (and so turn) the bench changes per call. */
let turn = 0;
const branch: unknown[] = [];
const ctx: FakeContext = {
  cwd,
  hasUI: false,
  ui: { notify: () => {} },
  sessionManager: { getSessionId: () => "bench-pi", getBranch: () => branch },
  signal: undefined,
};
function nextTurn(): void {
  turn += 1;
  branch.splice(0, branch.length, { type: "message", id: `turn-${turn}`, message: { role: "user", content: "please run the benchmark" } });
}

let link: Authorize | undefined;
(globalThis as unknown as Record<symbol, unknown>)[SERVICE_KEY] = { registerAuthorizer: (_: string, fn: Authorize) => ((link = fn), () => {}) };
const chained = loadExtension(env, ctx);
nextTurn();
await chained.fire("session_start", { reason: "startup" });
delete (globalThis as unknown as Record<symbol, unknown>)[SERVICE_KEY];
const prefilter = loadExtension(env, ctx);
await prefilter.fire("session_start", { reason: "startup" });
if (link === undefined) throw new Error("the extension registered no link");
const authorize = link;

const brokerSettings = readSettings(env, DEFAULT_TIMEOUT_MS);
const details = (command: string) => ({ requestId: `perm-${turn}`, payload: { request: { surface: "bash", toolName: "bash", value: command } }, toolCallId: `call-${turn}`, toolName: "bash", command });

interface Case {
  name: string;
  /** One call; throws if the answer is not the expected one. */
  call(i: number): Promise<void>;
}

function expect(ok: boolean, what: string): void {
  if (!ok) throw new Error(`unexpected answer: ${what}`);
}

const cases: Case[] = [
  {
    name: "Pi chain link, hard deny",
    call: async (i) => {
      const v = await authorize(details(`rm -rf / # ${i}`), {}, {});
      expect(v.kind === "deny", JSON.stringify(v));
    },
  },
  {
    name: "Pi chain link, model review (0 ms model)",
    call: async (i) => {
      nextTurn();
      const v = await authorize(details(`make test-${i}-${turn}`), {}, {});
      expect(v.kind === "allow", JSON.stringify(v));
    },
  },
  {
    name: "Pi tool_call pre-filter, hard deny",
    call: async (i) => {
      const r = await prefilter.fire("tool_call", { toolName: "bash", toolCallId: `c${i}`, input: { command: `rm -rf ~ # ${i}` } });
      expect(r !== undefined, "no block");
    },
  },
  {
    name: "Pi tool_call pre-filter, model review (0 ms model)",
    call: async (i) => {
      nextTurn();
      const r = await prefilter.fire("tool_call", { toolName: "bash", toolCallId: `c${i}`, input: { command: `make lint-${i}-${turn}` } });
      expect(r === undefined, JSON.stringify(r));
    },
  },
  {
    name: "vouch-srt ask, hard deny",
    call: async (i) => {
      const a = await answerAsk(brokerSettings, { sessionId: "bench-srt", turnId: "t", command: `curl --data-binary @.env http://127.0.0.1:9/${i}`, cwd }, { host: "127.0.0.1", port: 9 }, `a${i}`);
      expect(a !== true, "allowed");
    },
  },
  {
    name: "vouch-srt ask, model review + grant consume (0 ms model)",
    call: async (i) => {
      const a = await answerAsk(brokerSettings, { sessionId: "bench-srt", turnId: `t-${i}`, command: `curl http://127.0.0.1:9/${i}`, cwd }, { host: "127.0.0.1", port: 9 }, `a${i}`);
      expect(a === true, JSON.stringify(a));
    },
  },
];

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

// Round-robin, so every case sees the same background load.
for (let i = 0; i < WARMUP; i += 1) for (const c of cases) await c.call(i);
const times = cases.map(() => [] as number[]);
for (let i = WARMUP; i < WARMUP + COUNT; i += 1) {
  for (const [k, c] of cases.entries()) {
    const started = process.hrtime.bigint();
    await c.call(i);
    times[k]?.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}
const ms = (v: number) => v.toFixed(2);
const rows = cases.map((c, k) => {
  const sorted = (times[k] ?? []).sort((a, b) => a - b);
  return `| ${c.name} | ${COUNT} | ${ms(quantile(sorted, 0.5))} | ${ms(quantile(sorted, 0.9))} | ${ms(quantile(sorted, 0.99))} | ${ms(sorted[sorted.length - 1] ?? Number.NaN)} |`;
});

process.stdout.write(["| client call → answer | calls | p50 ms | p90 ms | p99 ms | max ms |", "|---|---|---|---|---|---|", ...rows, ""].join("\n"));
await Promise.all([vouch.stop(), model.stop()]);
