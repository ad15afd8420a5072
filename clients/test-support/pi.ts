/**
 * Running the real Pi agent (`@earendil-works/pi-coding-agent`, from the
 * workspace's devDependencies) headless, in print mode, against the scripted
 * agent model, with a temporary HOME and agent directory so nothing touches
 * the real home.
 */

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import type { Finished } from "./process.ts";
import { runToEnd } from "./process.ts";

const CLIENTS = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The `node_modules/.bin` holding `pi` and the registry's Node (>= 22.19), first on PATH. */
export const BIN = join(CLIENTS, "node_modules", ".bin");
/** Upper bound for one headless run; a run that needs it has hung. */
const RUN_TIMEOUT_MS = 90_000;

export interface PiWorld {
  /** The temporary HOME. */
  readonly home: string;
  /** `PI_CODING_AGENT_DIR`. */
  readonly agentDir: string;
  /** The project directory Pi runs in. */
  readonly project: string;
}

/** A fresh HOME, agent dir (with `models.json` naming the scripted model) and project dir. */
export function piWorld(agentModelUrl: string): PiWorld {
  const home = mkdtempSync(join(tmpdir(), "vouch-pi-home-"));
  const agentDir = join(home, ".pi", "agent");
  const project = join(home, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        fake: {
          baseUrl: agentModelUrl,
          api: "openai-completions",
          apiKey: "test-key",
          models: [{ id: "fake-agent", name: "fake-agent", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
        },
      },
    }),
  );
  return { home, agentDir, project };
}

/** Writes pi-permission-system's global config in the world's agent dir. */
export function writePermissionConfig(world: PiWorld, config: unknown): void {
  const dir = join(world.agentDir, "extensions", "pi-permission-system");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify(config, null, 2));
}

export type PiRun = Finished;

/** `pi -p --offline --no-session` with `extensions` loaded by `-e`, in the world's project dir. */
export function runPi(world: PiWorld, extensions: readonly string[], prompt: string, env: Record<string, string>): Promise<PiRun> {
  const args = ["-p", "--offline", "--no-session", "--model", "fake/fake-agent", ...extensions.flatMap((e) => ["-e", e]), prompt];
  return runToEnd(join(BIN, "pi"), args, {
    cwd: world.project,
    env: { PATH: `${BIN}:${process.env["PATH"] ?? "/usr/bin:/bin"}`, HOME: world.home, PI_CODING_AGENT_DIR: world.agentDir, ...env },
    timeoutMs: RUN_TIMEOUT_MS,
  });
}
