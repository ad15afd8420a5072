/**
 * Running a child process to completion for a test: its exit code and
 * everything it wrote, with a hard upper bound after which it is killed (a
 * run that needs the bound has hung, and the test then fails on its output
 * rather than waiting forever).
 */

import { spawn } from "node:child_process";

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runToEnd(command: string, args: readonly string[], options: { cwd?: string; env: Record<string, string>; timeoutMs: number }): Promise<Finished> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
