#!/usr/bin/env python3
"""Extract the test-suite commands of two peer command guards, as test inputs.

Reads destructive_command_guard (DCG) and cc-safety-net (CCSN) from a
checkout or a bare git directory (as `fetch` brings them), and prints one
JSON line per command:

    {"peer": "dcg", "source": "src/packs/core/filesystem.rs:711",
     "command": "rm -rf /", "peer_says": "block"}

Only the commands and the peers' expected verdicts are taken: no code is
copied, and nothing here is committed from either repository. Usage:

    scripts/peer_commands.py --dcg PATH --ccsn PATH > target/peer-commands.jsonl
    cargo run --release --example peer_compare -- target/peer-commands.jsonl

(see docs/peers.md).
"""

import argparse
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path


class Repo:
    """A checkout or a bare git directory, read at HEAD."""

    def __init__(self, path: str):
        self.path = Path(path)
        self.bare = not (self.path / ".git").exists() and (self.path / "HEAD").exists()

    def files(self) -> list[str]:
        if self.bare:
            out = subprocess.run(
                ["git", f"--git-dir={self.path}", "ls-tree", "-r", "--name-only", "HEAD"],
                check=True, capture_output=True, text=True).stdout
            return out.splitlines()
        return [str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file()
                and ".git" not in p.parts]

    def read(self, name: str) -> str:
        if self.bare:
            return subprocess.run(
                ["git", f"--git-dir={self.path}", "show", f"HEAD:{name}"],
                check=True, capture_output=True).stdout.decode("utf-8", "replace")
        return (self.path / name).read_text("utf-8", "replace")


SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'",
                  '"': '"', "`": "`", "$": "$"}


def unescape(body: str) -> str | None:
    """Rust / JavaScript string escapes; None for what we cannot decode."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt == "x" and re.match(r"[0-9a-fA-F]{2}", body[i + 2:i + 4]):
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif nxt == "u" and body[i + 2:i + 3] == "{":
            end = body.index("}", i)
            out.append(chr(int(body[i + 3:end], 16)))
            i = end + 1
        elif nxt == "u" and re.match(r"[0-9a-fA-F]{4}", body[i + 2:i + 6]):
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif nxt == "\n":
            # Rust line continuation: skip the newline and leading blanks.
            i += 2
            while i < len(body) and body[i] in " \t":
                i += 1
        else:
            return None
    return "".join(out)


# A string literal: Rust "…" / r#"…"#, JavaScript '…' / "…" / `…`.
STRING = r'''(?P<lit>r(?P<h>#*)"(?P<raw>.*?)"(?P=h)|"(?P<dq>(?:[^"\\]|\\.)*)"|'(?P<sq>(?:[^'\\]|\\.)*)'|`(?P<bq>(?:[^`\\]|\\.)*)`)'''


def literal(m: re.Match) -> str | None:
    if m.group("raw") is not None:
        return m.group("raw")
    for key in ("dq", "sq"):
        if m.group(key) is not None:
            return unescape(m.group(key))
    if m.group("bq") is not None:
        body = m.group("bq")
        return None if "${" in body else unescape(body)
    return None


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def dcg(repo: Repo):
    call = re.compile(r"assert_(?P<kind>blocks|allows)[a-z_]*\(\s*(?:&?[\w.]+\s*,\s*)?" + STRING, re.S)
    for name in repo.files():
        if name.endswith(".rs") and (name.startswith("src/") or name.startswith("tests/")):
            text = repo.read(name)
            for m in call.finditer(text):
                cmd = literal(m)
                if cmd is not None:
                    yield name, line_of(text, m.start()), cmd, "block" if m["kind"] == "blocks" else "allow"
        elif name.startswith("tests/corpus/") and name.endswith(".toml"):
            data = tomllib.loads(repo.read(name))
            for i, case in enumerate(data.get("case", [])):
                says = {"deny": "block", "allow": "allow"}.get(case.get("expected"))
                if says and isinstance(case.get("command"), str):
                    yield f"{name}#case{i + 1}", None, case["command"], says
        elif name in ("tests/fixtures/destructive_commands.yaml", "tests/fixtures/safe_commands.yaml"):
            says = "block" if "destructive" in name else "allow"
            text = repo.read(name)
            for m in re.finditer(r"^\s*-\s*command:\s*" + STRING + r"\s*$", text, re.M):
                cmd = literal(m)
                if cmd is not None:
                    yield name, line_of(text, m.start()), cmd, says
        elif name in ("tests/e2e/fixtures/commands/dangerous.txt", "tests/e2e/fixtures/commands/safe.txt"):
            says = "block" if "dangerous" in name else "allow"
            for n, line in enumerate(repo.read(name).splitlines(), 1):
                if line.strip() and not line.lstrip().startswith("#"):
                    yield name, n, line, says


def ccsn(repo: Repo):
    call = re.compile(r"assert(?P<kind>Blocked|Allowed|StrictBlocked)\(\s*" + STRING, re.S)
    for name in repo.files():
        if not (name.startswith("tests/") and name.endswith(".ts")):
            continue
        text = repo.read(name)
        for m in call.finditer(text):
            if m["kind"] == "StrictBlocked":
                continue  # blocked only in their opt-in strict mode
            cmd = literal(m)
            if cmd is not None:
                yield name, line_of(text, m.start()), cmd, "block" if m["kind"] == "Blocked" else "allow"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dcg", help="destructive_command_guard checkout or git dir")
    ap.add_argument("--ccsn", help="cc-safety-net checkout or git dir")
    args = ap.parse_args()
    seen = set()
    for peer, path, extract in (("dcg", args.dcg, dcg), ("cc-safety-net", args.ccsn, ccsn)):
        if not path:
            continue
        for source, line, cmd, says in extract(Repo(path)):
            key = (peer, cmd, says)
            if key in seen or not cmd.strip():
                continue
            seen.add(key)
            where = f"{source}:{line}" if line else source
            print(json.dumps({"peer": peer, "source": where, "command": cmd, "peer_says": says},
                             ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
