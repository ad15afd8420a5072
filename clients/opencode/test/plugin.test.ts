/**
 * The OpenCode plugin as OpenCode runs it: the file `vouch hook snippet
 * opencode` prints (the real `vouch` binary from `VOUCH_BIN`, reviewing with
 * the project's test model server), imported and called the way OpenCode
 * calls a plugin — the factory with the plugin context, then its hooks with
 * OpenCode's `(input, output)` shapes (`shared/harnesses/opencode/`). A throw
 * from `tool.execute.before` is OpenCode's block, and its message is what
 * the model reads.
 *
 * The fault cases use the plugin source with another hook command written
 * in, exactly where the snippet writes vouch's.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { allow, defer, deny, startModelServer, vouchBin } from "../../test-support/vouch.ts";
import type { ModelServer } from "../../test-support/vouch.ts";

type Hook = (input: Record<string, unknown>, output: Record<string, unknown>) => Promise<void>;
type Hooks = Record<string, Hook>;

const SOURCE = readFileSync(new URL("../src/vouch.ts", import.meta.url), "utf8");
const scratch = mkdtempSync(join(tmpdir(), "vouch-opencode-"));
/** The project OpenCode runs in: not an ancestor of vouch's home. */
const project = mkdtempSync(join(tmpdir(), "vouch-opencode-project-"));
let loaded = 0;

/** Imports a plugin file as OpenCode does and returns its hooks. */
async function plugin(text: string): Promise<Hooks> {
  const file = join(scratch, `plugin-${++loaded}.ts`);
  writeFileSync(file, text);
  const module = (await import(file)) as Record<string, unknown>;
  const exports = Object.values(module);
  // OpenCode calls every export as a plugin and refuses a file with any other.
  assert.equal(exports.length, 1);
  const factory = exports[0] as (ctx: unknown) => Promise<Hooks>;
  return factory({ directory: project, worktree: project });
}

/** The plugin source running the shell script `script` as its hook command, with `timeoutMs`. */
function withCommand(script: string, timeoutMs = 10_000): string {
  const path = join(scratch, `hook-${++loaded}.sh`);
  writeFileSync(path, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  return SOURCE.replace(/^const COMMAND: string = .*$/m, `const COMMAND: string = ${JSON.stringify(path)};`).replace(
    /^const TIMEOUT_MS: number = .*$/m,
    `const TIMEOUT_MS: number = ${timeoutMs};`,
  );
}

let callCount = 0;
function bash(command: string): [Record<string, unknown>, { args: Record<string, unknown> }] {
  return [{ tool: "bash", sessionID: "ses_test", callID: `call_${++callCount}` }, { args: { command } }];
}

async function blockedWith(hooks: Hooks, command: string): Promise<string> {
  const [input, output] = bash(command);
  const hook = hooks["tool.execute.before"];
  assert.ok(hook);
  try {
    await hook(input, output);
  } catch (e) {
    assert.ok(e instanceof Error);
    return e.message;
  }
  assert.fail(`\`${command}\` was not blocked`);
}

async function passes(hooks: Hooks, command: string): Promise<void> {
  const [input, output] = bash(command);
  await hooks["tool.execute.before"]?.(input, output);
}

describe("with vouch's snippet", () => {
  let model: ModelServer;
  let home: string;
  let hooks: Hooks;
  before(async () => {
    model = await startModelServer({
      default: defer("a person should look at this"),
      rules: [
        { contains: "allowed-oc", reply: allow("the user asked for it") },
        { contains: "denied-oc", reply: deny("OC-DENY-REASON nobody asked for this") },
      ],
    });
    home = mkdtempSync(join(tmpdir(), "vouch-home-"));
    writeFileSync(
      join(home, "config.toml"),
      ["[inert]", "enabled = false", "", "[reviewer]", 'provider = "openai"', `base_url = "${model.baseUrl}"`, 'model = "fake"', 'api_key_env = ""', "timeout_ms = 10000", ""].join("\n"),
    );
    const snippet = spawnSync(vouchBin(), ["hook", "snippet", "opencode"], { env: { HOME: home, VOUCH_HOME: home }, encoding: "utf8" });
    assert.equal(snippet.status, 0, snippet.stderr);
    assert.match(snippet.stderr, /plugins\/vouch\.ts/);
    hooks = await plugin(snippet.stdout);
  });
  after(async () => {
    await model.stop();
    rmSync(home, { recursive: true, force: true });
  });

  test("a reviewer allow lets the call through", async () => {
    await passes(hooks, "touch allowed-oc");
  });

  test("a reviewer deny blocks with vouch's reason, which the model reads", async () => {
    const message = await blockedWith(hooks, "touch denied-oc");
    assert.match(message, /OC-DENY-REASON nobody asked for this/);
  });

  test("a defer blocks: nobody can be asked from a plugin", async () => {
    assert.match(await blockedWith(hooks, "touch unsure-oc"), /a human must approve/);
  });

  test("a hard deny blocks without asking the reviewer", async () => {
    const before = (await model.requests()).length;
    assert.match(await blockedWith(hooks, "rm -rf ~/"), /Do not retry/);
    assert.match(await blockedWith(hooks, "echo x > .opencode/plugins/x.ts"), /Do not retry/);
    assert.equal((await model.requests()).length, before);
  });

  test("the after event is answered and never throws", async () => {
    const [input, output] = bash("touch allowed-oc");
    await hooks["tool.execute.before"]?.(input, output);
    await hooks["tool.execute.after"]?.({ ...input, args: { command: "touch other" } }, { output: "" });
  });
});

describe("faults block the call", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["vouch is missing", "exec /nonexistent/vouch hook opencode", /exited with 127/],
    ["a non-zero exit", "exit 3", /exited with 3/],
    ["a reply that is not JSON", "echo hello", /not JSON/],
    ["a reply without a known decision", `echo '{"decision":"ask"}'`, /no decision this plugin knows/],
    ["an empty object", "echo '{}'", /no decision this plugin knows/],
    ["a JSON array", "echo '[]'", /no decision this plugin knows/],
  ];
  for (const [name, command, pattern] of cases) {
    test(name, async () => {
      const hooks = await plugin(withCommand(`cat > /dev/null; ${command}`));
      const message = await blockedWith(hooks, "touch x");
      assert.match(message, /^\[vouch fault: unreachable\] vouch could not decide on this tool call, so it was blocked/);
      assert.match(message, pattern);
    });
  }

  test("no answer by the plugin's own timeout", async () => {
    const hooks = await plugin(withCommand("sleep 30", 300));
    const started = Date.now();
    assert.match(await blockedWith(hooks, "touch x"), /no answer within 300 ms/);
    assert.ok(Date.now() - started < 5_000);
  });

  test("an explicit allow or abstain passes", async () => {
    await passes(await plugin(withCommand(`cat > /dev/null; echo '{"decision":"abstain"}'`)), "touch x");
    await passes(await plugin(withCommand(`cat > /dev/null; echo '{"decision":"allow","reason":"ok"}'`)), "touch x");
  });
});

describe("what the plugin sends", () => {
  test("the turn, the call, the reviewed arguments and what ran", async () => {
    const log = join(scratch, "payloads.jsonl");
    const hooks = await plugin(withCommand(`cat >> ${log}; echo >> ${log}; echo '{"decision":"allow"}'`));
    await hooks["chat.message"]?.({ sessionID: "ses_test" }, { message: { id: "msg_1", agent: "build" }, parts: [] });
    const [input, output] = bash("touch ran-1");
    await hooks["tool.execute.before"]?.(input, output);
    // A later plugin rewrites the arguments; OpenCode runs the rewritten ones.
    output.args["command"] = "touch ran-by-project-plugin";
    await hooks["tool.execute.after"]?.({ ...input, args: output.args }, { output: "" });
    const [sent, ran] = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(sent, {
      hook_event_name: "tool.execute.before",
      tool: "bash",
      sessionID: "ses_test",
      callID: input["callID"],
      messageID: "msg_1",
      agent: "build",
      directory: project,
      worktree: project,
      args: { command: "touch ran-1" },
    });
    assert.equal(ran?.["hook_event_name"], "tool.execute.after");
    assert.deepEqual(ran?.["args"], { command: "touch ran-by-project-plugin" });
    assert.deepEqual(ran?.["reviewed_args"], { command: "touch ran-1" });
  });

  test("the factory tolerates a context without fields", async () => {
    const module = (await import(join(scratch, "plugin-1.ts"))) as { VouchPlugin: (ctx: unknown) => Promise<Hooks> };
    const hooks = await module.VouchPlugin(undefined);
    assert.deepEqual(Object.keys(hooks).sort(), ["chat.message", "tool.execute.after", "tool.execute.before"]);
  });
});

after(() => {
  rmSync(scratch, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
});
