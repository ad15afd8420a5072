/**
 * Keeping vouch's own secrets away from the command `vouch-srt` sandboxes.
 *
 * The sandboxed command is the agent's: if it could read the adapter token
 * it could talk to vouch as the broker does, and the operator token in the
 * same directory would let it approve its own denials. So the command's
 * environment loses `VOUCH_TOKEN` and `VOUCH_TOKEN_FILE`, and vouch's state
 * directories (where the tokens, the HMAC key and the databases live) are
 * added to the sandbox's `denyRead`.
 */

import { realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

import type { TokenSource } from "../../common/vouch.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** Variables the sandboxed command never sees. */
const SECRET_VARIABLES = ["VOUCH_TOKEN", "VOUCH_TOKEN_FILE"] as const;

/** The environment for the sandboxed command. */
export function childEnvironment(env: Env): Record<string, string> {
  const child: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !(SECRET_VARIABLES as readonly string[]).includes(key)) child[key] = value;
  }
  return child;
}

/**
 * vouch's state directories that exist, as given and symlink-resolved: the
 * token file's directory, `$VOUCH_HOME/state`, `$XDG_STATE_HOME/vouch` and
 * `~/.local/state/vouch` (vouch's own lookup order).
 */
export function vouchStateDirs(env: Env, token: TokenSource): string[] {
  const candidates: string[] = [];
  if (token.kind === "file") candidates.push(dirname(token.path));
  const home = env["VOUCH_HOME"];
  if (home !== undefined && home !== "") candidates.push(join(home, "state"));
  const xdg = env["XDG_STATE_HOME"];
  if (xdg !== undefined && xdg.startsWith("/")) candidates.push(join(xdg, "vouch"));
  candidates.push(join(env["HOME"] ?? homedir(), ".local", "state", "vouch"));
  const found = new Set<string>();
  for (const path of candidates) {
    try {
      if (!statSync(path).isDirectory()) continue;
      found.add(path);
      found.add(realpathSync(path));
    } catch {
      // Not there: nothing to protect.
    }
  }
  return [...found];
}
