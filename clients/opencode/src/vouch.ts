/**
 * vouch as an OpenCode plugin: every tool call OpenCode is about to run goes
 * to `vouch hook opencode` first, and the call is blocked unless vouch
 * explicitly allows it or abstains.
 *
 * OpenCode has no command hooks. Its only interception point is a plugin's
 * `tool.execute.before`, which OpenCode awaits with no timeout; a throw there
 * blocks the tool and the model reads the error message verbatim. There is
 * no "allow" a plugin can give: when this plugin returns, OpenCode's own
 * permission rules still decide.
 *
 * Fail closed: vouch missing, a non-zero exit, a reply that is not one of
 * vouch's, or no reply by TIMEOUT_MS all throw. The module itself must never
 * throw while OpenCode loads it (a plugin that fails to load is skipped
 * silently, and every tool then runs unreviewed), so it imports only Node
 * builtins, exports exactly one function (OpenCode calls every export as a
 * plugin and refuses the whole file over one that is not a function), and
 * its factory does no work.
 *
 * Install it with `vouch hook snippet opencode`, which prints this file with
 * the two settings below filled in. Nothing is read from the environment:
 * OpenCode's runtime can load a project's `.env`, which the agent can write.
 */

import { spawn } from "node:child_process";

// vouch:settings-begin (`vouch hook snippet opencode` rewrites these lines)
/** The hook command, run with `/bin/sh -c`. */
const COMMAND: string = "vouch hook opencode";
/** How long one answer may take: a little over the `--timeout` vouch answers within. */
const TIMEOUT_MS: number = 105_000;
// vouch:settings-end

/** Largest reply read from vouch; its replies are well under this. */
const MAX_REPLY_BYTES = 256 * 1024;
/** Calls whose reviewed arguments are kept for the after-the-fact event. */
const MAX_REMEMBERED_CALLS = 1024;

/** What OpenCode passes to `tool.execute.before` / `tool.execute.after`. */
interface ToolInput {
  tool?: unknown;
  sessionID?: unknown;
  callID?: unknown;
  args?: unknown;
}

interface ChatMessageOutput {
  message?: { id?: unknown; agent?: unknown };
}

interface PluginContext {
  directory?: unknown;
  worktree?: unknown;
}

/** The turn of a session: its latest user message, and the agent it went to. */
interface Turn {
  messageID: string;
  agent?: string;
}

/**
 * One exchange with `vouch hook opencode`. `command`: the confined form to
 * run in place of the call (an inert allow).
 */
type Outcome = { kind: "pass"; command?: string } | { kind: "deny"; reason: string } | { kind: "fault"; reason: string };

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function couldNotDecide(why: string): Error {
  return new Error(
    `[vouch fault: unreachable] vouch could not decide on this tool call, so it was blocked (a failure of the reviewer, not a judgement of the action): ${why}`,
  );
}

/** Runs the hook command with `payload` on stdin; never rejects. */
function ask(payload: unknown): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Outcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let child: ReturnType<typeof spawn>;
    try {
      // Its own process group, so that giving up kills vouch and anything it
      // started; `exec`, so that vouch is that group's leader.
      child = spawn("/bin/sh", ["-c", `exec ${COMMAND}`], { stdio: ["pipe", "pipe", "ignore"], detached: true });
    } catch (e) {
      resolve({ kind: "fault", reason: `cannot start \`${COMMAND}\`: ${String(e)}` });
      return;
    }
    const stop = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
      child.stdout?.destroy();
    };
    const timer = setTimeout(() => {
      stop();
      finish({ kind: "fault", reason: `\`${COMMAND}\` gave no answer within ${TIMEOUT_MS} ms` });
    }, TIMEOUT_MS);
    const chunks: Buffer[] = [];
    let size = 0;
    child.on("error", (e) => finish({ kind: "fault", reason: `cannot run \`${COMMAND}\`: ${e.message}` }));
    child.stdout?.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REPLY_BYTES) {
        stop();
        finish({ kind: "fault", reason: `vouch's reply is larger than ${MAX_REPLY_BYTES} bytes` });
        return;
      }
      chunks.push(chunk);
    });
    child.on("close", (code, signal) => {
      if (code !== 0) {
        finish({ kind: "fault", reason: `\`${COMMAND}\` exited with ${code ?? signal} (is vouch installed there?)` });
        return;
      }
      finish(read(Buffer.concat(chunks).toString("utf8")));
    });
    // vouch may exit without reading (a fault it answers at once): ignore EPIPE.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(JSON.stringify(payload));
  });
}

/** Reads vouch's reply strictly: only an explicit allow or abstain lets the call through. */
function read(stdout: string): Outcome {
  let reply: unknown;
  try {
    reply = JSON.parse(stdout);
  } catch {
    return { kind: "fault", reason: "vouch's reply is not JSON" };
  }
  if (typeof reply !== "object" || reply === null) return { kind: "fault", reason: "vouch's reply is not a JSON object" };
  const { decision, reason, command } = reply as { decision?: unknown; reason?: unknown; command?: unknown };
  switch (decision) {
    case "allow":
      // An inert command, allowed only in its confined form: run that.
      if (command !== undefined) {
        return typeof command === "string" && command !== ""
          ? { kind: "pass", command }
          : { kind: "fault", reason: "vouch's reply has a `command` that is not a command line" };
      }
      return { kind: "pass" };
    case "abstain":
      return { kind: "pass" };
    case "deny":
      return { kind: "deny", reason: text(reason) ?? "vouch denied this tool call" };
    default:
      return { kind: "fault", reason: `vouch's reply has no decision this plugin knows (\`${String(decision)}\`)` };
  }
}

export const VouchPlugin = async (ctx: PluginContext) => {
  const turns = new Map<string, Turn>();
  const reviewed = new Map<string, string>();
  const where = { directory: text(ctx?.directory), worktree: text(ctx?.worktree) };
  const base = (event: string, input: ToolInput) => {
    const sessionID = text(input?.sessionID);
    const turn = sessionID === undefined ? undefined : turns.get(sessionID);
    return {
      hook_event_name: event,
      tool: input?.tool,
      sessionID: input?.sessionID,
      callID: input?.callID,
      messageID: turn?.messageID,
      agent: turn?.agent,
      ...where,
    };
  };
  return {
    "chat.message": async (input: { sessionID?: unknown }, output: ChatMessageOutput) => {
      const sessionID = text(input?.sessionID);
      const messageID = text(output?.message?.id);
      if (sessionID === undefined || messageID === undefined) return;
      const agent = text(output?.message?.agent);
      turns.set(sessionID, agent === undefined ? { messageID } : { messageID, agent });
    },
    "tool.execute.before": async (input: ToolInput, output: { args?: unknown }) => {
      // A snapshot: a later plugin may rewrite `output.args` after this returns.
      const args: unknown = output?.args === undefined ? {} : JSON.parse(JSON.stringify(output.args));
      const outcome = await ask({ ...base("tool.execute.before", input), args });
      switch (outcome.kind) {
        case "pass": {
          if (outcome.command !== undefined) {
            // OpenCode runs what `args` say once the hooks return
            // (PROTOCOL.md: verified); vouch allowed only this form.
            if (typeof output?.args !== "object" || output.args === null) {
              throw couldNotDecide("vouch allowed only a confined form, and this call has no arguments to rewrite");
            }
            (output.args as Record<string, unknown>)["command"] = outcome.command;
          }
          const callID = text(input?.callID);
          if (callID !== undefined) {
            if (reviewed.size >= MAX_REMEMBERED_CALLS) {
              const oldest = reviewed.keys().next();
              if (oldest.done !== true) reviewed.delete(oldest.value);
            }
            reviewed.set(callID, JSON.stringify(args));
          }
          return;
        }
        case "deny":
          throw new Error(outcome.reason);
        case "fault":
          throw couldNotDecide(outcome.reason);
      }
    },
    "tool.execute.after": async (input: ToolInput) => {
      // For vouch's audit only (the tool already ran): `input.args` are the
      // arguments that actually ran, which a later plugin may have rewritten.
      try {
        const callID = text(input?.callID);
        const before = callID === undefined ? undefined : reviewed.get(callID);
        if (callID !== undefined) reviewed.delete(callID);
        const payload: Record<string, unknown> = { ...base("tool.execute.after", input), args: input?.args ?? {} };
        if (before !== undefined) payload["reviewed_args"] = JSON.parse(before) as unknown;
        await ask(payload);
      } catch {
        // Nothing to block any more; vouch logs what it could not record.
      }
    },
  };
};
