/**
 * `vouch-srt`'s command line, parsed by hand (Node's standard library only):
 * an optional `-s FILE` / `--settings FILE`, then either `-c STRING` or `--`
 * followed by the command and its arguments. Anything else is an error that
 * says what was wrong, never a guess.
 */

export const USAGE = `usage: vouch-srt [-s FILE] -- COMMAND [ARG...]
       vouch-srt [-s FILE] -c 'COMMAND STRING'

Runs COMMAND inside sandbox-runtime; every network destination the sandbox
settings do not decide is reviewed by vouch and allowed once per grant.

  -s, --settings FILE   sandbox-runtime settings (default ~/.srt-settings.json)
  -c STRING             run STRING with the shell instead of an argument list
  -h, --help            this text

Environment: VOUCH_URL, VOUCH_TOKEN or VOUCH_TOKEN_FILE, VOUCH_TIMEOUT_MS,
VOUCH_SESSION, VOUCH_TURN.
`;

export type Command = { kind: "argv"; argv: string[] } | { kind: "string"; value: string };

export type Args =
  | { kind: "run"; settings: string | undefined; command: Command }
  | { kind: "help" }
  | { kind: "error"; message: string };

export function parseArgs(argv: readonly string[]): Args {
  let settings: string | undefined;
  let inline: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? "";
    const value = argv[i + 1];
    switch (arg) {
      case "-h":
      case "--help":
        return { kind: "help" };
      case "-s":
      case "--settings":
        if (value === undefined) return { kind: "error", message: `${arg} needs a file` };
        settings = value;
        i += 1;
        break;
      case "-c":
        if (value === undefined) return { kind: "error", message: "-c needs a command string" };
        inline = value;
        i += 1;
        break;
      case "--": {
        const rest = argv.slice(i + 1);
        if (inline !== undefined) return { kind: "error", message: "give either -c or a command after --, not both" };
        if (rest.length === 0) return { kind: "error", message: "no command after --" };
        return { kind: "run", settings, command: { kind: "argv", argv: rest } };
      }
      default:
        return { kind: "error", message: `unexpected \`${arg}\` (put the command after --)` };
    }
  }
  if (inline === undefined) return { kind: "error", message: "no command given" };
  if (inline.trim() === "") return { kind: "error", message: "-c got an empty command" };
  return { kind: "run", settings, command: { kind: "string", value: inline } };
}

/**
 * Joins an argument list into one string a POSIX shell splits back into
 * exactly those arguments: bare words as they are, everything else in
 * single quotes (inside which every byte is literal), a quote as `'"'"'`.
 */
export function shellQuote(argv: readonly string[]): string {
  return argv
    .map((arg) => {
      if (arg === "") return "''";
      if (/^[A-Za-z0-9_./:@+,-][A-Za-z0-9_./:=@+,-]*$/.test(arg)) return arg;
      return `'${arg.replace(/'/g, `'"'"'`)}'`;
    })
    .join(" ");
}
