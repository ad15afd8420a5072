/**
 * Finding pi-permission-system's service and joining its authorizer chain,
 * across the versions that differ in where the service lives.
 *
 * - 20.9 to 28 publish one service at
 *   `globalThis[Symbol.for("@gotgenes/pi-permission-system:service")]`.
 * - 27 and later also keep a map of services keyed by Pi session id at
 *   `globalThis[Symbol.for("@gotgenes/pi-permission-system:session-services")]`
 *   (29 drops the single slot), so the service for *this* session is the
 *   map's entry for its id.
 * - Before 20.9 (the registry's 20.7.3) the service exists but has no
 *   `registerAuthorizer`: there is no chain to join.
 *
 * The interface (`registerAuthorizer(name, authorize) => dispose`, throwing
 * on a duplicate name; verdicts `allow` / `deny` with a reason / `defer`) is
 * the one documented in `../shared/harnesses/pi/PROTOCOL.md`; it is declared
 * here rather than imported because the package that has it is not in the
 * registry.
 */

import { errorCode, isRecord } from "../../common/vouch.ts";

export type AuthorizerVerdict = { kind: "allow" } | { kind: "deny"; reason?: string } | { kind: "defer" };
export type Authorize = (details: unknown, query: unknown, log: unknown) => Promise<AuthorizerVerdict>;

/** The name operators list in `authorizerChain`. */
export const AUTHORIZER_NAME = "vouch";

export const SERVICE_KEY = Symbol.for("@gotgenes/pi-permission-system:service");
export const SESSION_SERVICES_KEY = Symbol.for("@gotgenes/pi-permission-system:session-services");

/** What looking for the chain found. */
export type ChainLookup =
  | { kind: "chain"; register: (name: string, authorize: Authorize) => unknown; where: string }
  | { kind: "no_chain"; why: string };

/** The permission system's service for `sessionId`, and whether it has a chain. */
export function findChain(sessionId: string): ChainLookup {
  const slots = globalThis as unknown as Record<symbol, unknown>;
  const perSession = sessionService(slots[SESSION_SERVICES_KEY], sessionId);
  const service = perSession ?? slots[SERVICE_KEY];
  const where = perSession === undefined ? "service" : "session service";
  if (!isRecord(service)) return { kind: "no_chain", why: "pi-permission-system is not loaded (no service published)" };
  const register = service["registerAuthorizer"];
  if (typeof register !== "function") {
    return { kind: "no_chain", why: "this pi-permission-system has no authorizer chain (it arrived in 20.9.0)" };
  }
  return { kind: "chain", register: (name, authorize) => register.call(service, name, authorize), where };
}

function sessionService(map: unknown, sessionId: string): unknown {
  if (map instanceof Map) return map.get(sessionId);
  if (isRecord(map) && typeof map["get"] === "function") {
    try {
      return (map["get"] as (key: string) => unknown).call(map, sessionId);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Registration's outcome: a disposer to call at shutdown, or why it failed. */
export type Joined = { kind: "joined"; dispose: () => void; where: string } | { kind: "not_joined"; why: string };

/** Registers `authorize` as the `vouch` link; never throws. */
export function joinChain(lookup: ChainLookup, authorize: Authorize): Joined {
  switch (lookup.kind) {
    case "no_chain":
      return { kind: "not_joined", why: lookup.why };
    case "chain":
      try {
        const dispose = lookup.register(AUTHORIZER_NAME, authorize);
        const safeDispose = () => {
          try {
            if (typeof dispose === "function") dispose();
          } catch {
            // A disposer that throws leaves nothing for vouch to undo.
          }
        };
        return { kind: "joined", dispose: safeDispose, where: lookup.where };
      } catch (error) {
        return { kind: "not_joined", why: `registering the \`${AUTHORIZER_NAME}\` authorizer failed (${errorCode(error)})` };
      }
  }
}
