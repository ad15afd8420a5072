/**
 * `vouch-srt`'s command line, and the quoting that turns an argument list
 * into the one command string sandbox-runtime wraps: checked against real
 * bash, which must split it back into exactly the arguments given.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";

import { parseArgs, shellQuote } from "../src/args.ts";

describe("arguments", () => {
  test("-- COMMAND ARG... and -c STRING, with or without -s FILE", () => {
    assert.deepEqual(parseArgs(["--", "curl", "-s", "http://x"]), { kind: "run", settings: undefined, command: { kind: "argv", argv: ["curl", "-s", "http://x"] } });
    assert.deepEqual(parseArgs(["-s", "/etc/srt.json", "-c", "make test"]), { kind: "run", settings: "/etc/srt.json", command: { kind: "string", value: "make test" } });
    assert.deepEqual(parseArgs(["--settings", "f", "--", "-c"]), { kind: "run", settings: "f", command: { kind: "argv", argv: ["-c"] } });
    assert.deepEqual(parseArgs(["-h"]), { kind: "help" });
  });

  test("every malformed line is an error that says what is wrong", () => {
    const message = (argv: string[]) => {
      const args = parseArgs(argv);
      return args.kind === "error" ? args.message : `not an error: ${args.kind}`;
    };
    assert.equal(message([]), "no command given");
    assert.equal(message(["--"]), "no command after --");
    assert.equal(message(["-s"]), "-s needs a file");
    assert.equal(message(["-c"]), "-c needs a command string");
    assert.equal(message(["-c", "  "]), "-c got an empty command");
    assert.equal(message(["-c", "x", "--", "y"]), "give either -c or a command after --, not both");
    assert.equal(message(["curl", "x"]), "unexpected `curl` (put the command after --)");
  });
});

describe("quoting", () => {
  test("bash splits the quoted string back into exactly the arguments", () => {
    const argv = ["printf", "%s\\0", "plain", "", "two words", "it's", "$HOME", "`id`", "a\"b", "!x", "=eq", "tab\there", "new\nline", "*", "~", "ünï", "--x=1", "a;b|c&d"];
    const out = execFileSync("bash", ["-c", shellQuote(argv)], { encoding: "utf8", env: { HOME: "/nowhere", PATH: process.env["PATH"] ?? "" } });
    assert.deepEqual(out.split("\0").slice(0, -1), argv.slice(2));
  });

  test("bare words stay bare", () => {
    assert.equal(shellQuote(["curl", "-sS", "http://127.0.0.1:8080/a", "--data=x"]), "curl -sS http://127.0.0.1:8080/a --data=x");
  });
});
