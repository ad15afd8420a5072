#!/usr/bin/env node
/**
 * `vouch-srt`: runs one command inside Anthropic's sandbox-runtime with vouch
 * as the grant broker for every network destination the sandbox's own lists
 * do not decide.
 *
 *     vouch-srt [-s FILE] -- COMMAND [ARG...]
 *     vouch-srt [-s FILE] -c 'COMMAND STRING'
 *
 * One command per process, so every ask is tied to that command and its
 * cwd; the session and turn come from `VOUCH_SESSION` and `VOUCH_TURN`, set
 * by the harness that starts it. The sandbox's settings file is read exactly
 * as `srt` reads it (`-s FILE`, default `~/.srt-settings.json`). When the
 * command ends, the connections the sandbox blocked are printed on stderr
 * between `<sandbox_violations>` markers, each with vouch's reason. The exit
 * status is the command's (128 + N for a signal), or 125 when vouch-srt
 * itself could not run it.
 */

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { constants, homedir } from "node:os";
import { join } from "node:path";

import { SandboxManager, SandboxRuntimeConfigSchema } from "@anthropic-ai/sandbox-runtime";
import type { SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime";

import { errorCode, readSettings, readToken } from "../../common/vouch.ts";
import type { WrappedCommand } from "./broker.ts";
import { answerAsk, DEFAULT_TIMEOUT_MS } from "./broker.ts";
import { parseArgs, shellQuote, USAGE } from "./args.ts";
import { childEnvironment, vouchStateDirs } from "./protect.ts";

/** Exit status when vouch-srt itself fails (as `env` and `timeout` use it). */
const OWN_FAILURE = 125;

function fail(message: string): never {
  process.stderr.write(`vouch-srt: ${message}\n`);
  process.exit(OWN_FAILURE);
}

/** The sandbox's settings, read and validated as `srt` does. */
function loadSandboxConfig(explicit: string | undefined): SandboxRuntimeConfig {
  const path = explicit ?? join(homedir(), ".srt-settings.json");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    // Only the default file may be missing: the built-in defaults (no
    // domain listed, so every destination is asked about) apply then.
    if (explicit === undefined && errorCode(error) === "ENOENT") {
      return { network: { allowedDomains: [], deniedDomains: [] }, filesystem: { denyRead: [], allowWrite: [], denyWrite: [] } };
    }
    return fail(`cannot read the sandbox settings \`${path}\` (${errorCode(error)})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return fail(`the sandbox settings \`${path}\` are not valid JSON (${errorCode(error)})`);
  }
  const parsed = SandboxRuntimeConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    return fail(`the sandbox settings \`${path}\` are not valid: ${issues}`);
  }
  return parsed.data;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  switch (args.kind) {
    case "help":
      process.stdout.write(USAGE);
      return process.exit(0);
    case "error":
      return fail(`${args.message}\n${USAGE}`);
    case "run":
      break;
  }
  if (process.platform !== "linux" && process.platform !== "darwin") fail(`sandbox-runtime's shell wrapper is not available on ${process.platform}`);
  const command = args.command.kind === "string" ? args.command.value : shellQuote(args.command.argv);
  const sandboxConfig = loadSandboxConfig(args.settings);
  // A misconfigured broker could only deny every ask: say so before running anything.
  const settings = readSettings(process.env, DEFAULT_TIMEOUT_MS);
  if (settings.kind === "fault") fail(settings.reason);
  const token = readToken(settings.value.token);
  if (token.kind === "fault") fail(token.reason);
  const session = process.env["VOUCH_SESSION"]?.trim();
  const turn = process.env["VOUCH_TURN"]?.trim();
  const wrapped: WrappedCommand = {
    sessionId: session === undefined || session === "" ? `vouch-srt-${randomUUID()}` : session,
    turnId: turn === undefined || turn === "" ? undefined : turn,
    command,
    cwd: process.cwd(),
  };
  const protectedConfig: SandboxRuntimeConfig = {
    ...sandboxConfig,
    filesystem: { ...sandboxConfig.filesystem, denyRead: [...sandboxConfig.filesystem.denyRead, ...vouchStateDirs(process.env, settings.value.token)] },
  };
  try {
    await SandboxManager.initialize(protectedConfig, (params) => answerAsk(settings, wrapped, params, `srt-${randomUUID()}`));
  } catch (error) {
    fail(`the sandbox could not start (${errorCode(error)})`);
  }
  let sandboxed: string;
  try {
    sandboxed = await SandboxManager.wrapWithSandbox(command);
  } catch (error) {
    return fail(`the sandbox could not wrap the command (${errorCode(error)})`);
  }
  const child = spawn(sandboxed, { shell: true, stdio: "inherit", env: childEnvironment(process.env) });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, forward);
  child.on("error", (error) => fail(`the command could not start (${errorCode(error)})`));
  child.on("exit", (code, signal) => {
    const violations = SandboxManager.annotateStderrWithSandboxFailures(command, "");
    if (violations !== "") process.stderr.write(`${violations}\n`);
    SandboxManager.cleanupAfterCommand();
    process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
  });
}

main().catch((error: unknown) => fail(`unexpected failure (${errorCode(error)})`));
