/**
 * Real processes for the client tests: the project's test model server
 * (`cargo run --release --example model_server`, BRIEF "Seams" 1) as vouch's
 * reviewer, and a real `vouch serve` on 127.0.0.1:0 with its own temporary
 * `VOUCH_HOME`, pointed at that model server.
 *
 * Both binaries come from the workspace's `target/release/` (build them
 * first: `cargo build --release --bin vouch --example model_server`; `.ci/run`
 * does). `VOUCH_BIN` and `VOUCH_MODEL_SERVER_BIN` override the paths. Every
 * process is started by the test and stopped by it (SIGTERM, then SIGKILL).
 */

import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** How long a child may take to say where it listens. */
const START_TIMEOUT_MS = 30_000;

export function vouchBin(): string {
  return binary(process.env["VOUCH_BIN"], join(REPO, "target", "release", "vouch"));
}

export function modelServerBin(): string {
  return binary(process.env["VOUCH_MODEL_SERVER_BIN"], join(REPO, "target", "release", "examples", "model_server"));
}

function binary(override: string | undefined, fallback: string): string {
  const path = override ?? fallback;
  if (!existsSync(path)) {
    throw new Error(`${path} does not exist; run \`cargo build --release --bin vouch --example model_server\` first`);
  }
  return path;
}

/** A reviewer reply in the model server's script language. */
export type Reply =
  | { verdict: { outcome: "allow" | "deny" | "defer"; risk_level: string; user_authorization: string; rationale: string; suggestion: string | null }; delay_ms?: number }
  | { fault: "status" | "garbage" | "truncate" | "drop" | "slow_drip" | "hang"; status?: number; delay_ms?: number };

export interface Script {
  default?: Reply;
  rules?: Array<{ contains: string; reply: Reply }>;
}

export function allow(rationale = "scripted allow", delayMs = 0): Reply {
  return { verdict: { outcome: "allow", risk_level: "low", user_authorization: "high", rationale, suggestion: null }, delay_ms: delayMs };
}

export function deny(rationale: string, delayMs = 0): Reply {
  return { verdict: { outcome: "deny", risk_level: "medium", user_authorization: "low", rationale, suggestion: null }, delay_ms: delayMs };
}

export function defer(rationale = "scripted defer"): Reply {
  return { verdict: { outcome: "defer", risk_level: "medium", user_authorization: "unknown", rationale, suggestion: null } };
}

/** How long the `slow-…` reviewer reply waits: far past any client deadline a test sets. */
export const SLOW_MS = 20_000;

/**
 * What the outcome tests of both clients need: a model server whose verdict
 * follows a marker in the request (`allowed-<word>` allows,
 * `denied-<word>` denies with `denyRationale`, `slow-<word>` allows after
 * {@link SLOW_MS}, anything else defers), a `vouch serve` reviewing with it,
 * and a second `vouch serve` whose reviewer is unreachable.
 */
export interface ReviewWorld {
  readonly model: ModelServer;
  readonly vouch: VouchServer;
  readonly blindVouch: VouchServer;
  stop(): Promise<void>;
}

export async function startReviewWorld(word: string, denyRationale: string): Promise<ReviewWorld> {
  const model = await startModelServer({
    default: defer(),
    rules: [
      { contains: `allowed-${word}`, reply: allow("the user asked for it") },
      { contains: `denied-${word}`, reply: deny(denyRationale) },
      { contains: `slow-${word}`, reply: allow("too late", SLOW_MS) },
    ],
  });
  const vouch = await startVouch({ reviewerUrl: model.baseUrl });
  const blindVouch = await startVouch({ reviewerUrl: `http://127.0.0.1:${await deadPort()}/v1` });
  return {
    model,
    vouch,
    blindVouch,
    stop: async () => {
      await Promise.all([vouch.stop(), blindVouch.stop(), model.stop()]);
    },
  };
}

/**
 * Starts a {@link ReviewWorld} before the calling test file's tests and stops
 * it after them; the returned function gives it to the tests.
 */
export function useReviewWorld(word: string, denyRationale: string): () => ReviewWorld {
  let world: ReviewWorld | undefined;
  before(async () => {
    world = await startReviewWorld(word, denyRationale);
  });
  after(async () => {
    await world?.stop();
  });
  return () => {
    if (world === undefined) throw new Error("the review world has not started");
    return world;
  };
}

export interface ModelServer {
  /** `reviewer.base_url` for vouch: `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  /** The requests vouch sent to the model so far. */
  requests(): Promise<Array<{ path: string; body: string }>>;
  stop(): Promise<void>;
}

export async function startModelServer(script: Script): Promise<ModelServer> {
  const dir = mkdtempSync(join(tmpdir(), "vouch-model-"));
  const scriptPath = join(dir, "script.json");
  writeFileSync(scriptPath, JSON.stringify(script));
  const child = spawn(modelServerBin(), ["--listen", "127.0.0.1:0", "--script", scriptPath], { stdio: ["pipe", "pipe", "inherit"] });
  const line = await firstLine(child, "stdout", /^listening (http:\/\/127\.0\.0\.1:\d+)$/);
  const origin = line[1] ?? "";
  return {
    baseUrl: `${origin}/v1`,
    requests: async () => (await (await fetch(`${origin}/_requests`)).json()) as Array<{ path: string; body: string }>,
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface VouchServer {
  /** `VOUCH_URL` for the clients. */
  readonly url: string;
  readonly home: string;
  /** The adapter token. */
  readonly token: string;
  readonly tokenFile: string;
  /** Everything vouch wrote on stderr so far. */
  readonly log: string[];
  stop(): Promise<void>;
}

export interface VouchOptions {
  /** `reviewer.base_url`; a dead port makes the reviewer unreachable. */
  reviewerUrl: string;
  /** Extra TOML appended to the config (a `[reviewer]` key needs its own section header). */
  extraToml?: string;
  reviewerTimeoutMs?: number;
}

export async function startVouch(options: VouchOptions): Promise<VouchServer> {
  const home = mkdtempSync(join(tmpdir(), "vouch-home-"));
  writeFileSync(
    join(home, "config.toml"),
    [
      // The tests' commands are `echo <marker>` reads that must reach the
      // scripted model, not vouch's inert stage.
      "[inert]",
      "enabled = false",
      "",
      "[reviewer]",
      'provider = "openai"',
      `base_url = "${options.reviewerUrl}"`,
      'model = "fake-reviewer"',
      'api_key_env = ""',
      `timeout_ms = ${options.reviewerTimeoutMs ?? 30_000}`,
      options.extraToml ?? "",
    ].join("\n"),
  );
  const child = spawn(vouchBin(), ["serve", "--listen", "127.0.0.1:0"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home, VOUCH_HOME: home, RUST_LOG: "warn" },
  });
  const log: string[] = [];
  const line = await firstLine(child, "stderr", /^vouch: listening on (127\.0\.0\.1:\d+)$/, log);
  const tokenFile = join(home, "state", "adapter.token");
  return {
    url: `http://${line[1] ?? ""}`,
    home,
    token: readFileSync(tokenFile, "utf8").trim(),
    tokenFile,
    log,
    stop: async () => {
      await stopChild(child);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A loopback port nothing listens on (bound, then closed). */
export async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Waits for the first line of `stream` matching `pattern`; rejects if the child exits first. */
function firstLine(child: ChildProcess, stream: "stdout" | "stderr", pattern: RegExp, log: string[] = []): Promise<RegExpMatchArray> {
  const source = child[stream];
  if (source === null) return Promise.reject(new Error(`${stream} is not piped`));
  return new Promise((resolveLine, reject) => {
    let found = false;
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${START_TIMEOUT_MS} ms:\n${log.join("\n")}`)), START_TIMEOUT_MS);
    createInterface({ input: source }).on("line", (text) => {
      log.push(text);
      const match = found ? null : text.match(pattern);
      if (match !== null) {
        found = true;
        clearTimeout(timer);
        resolveLine(match);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (!found) reject(new Error(`process exited (${code ?? signal}) before listening:\n${log.join("\n")}`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
