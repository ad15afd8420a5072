/**
 * A host double for pi-permission-system >= 20.9, loaded into the real Pi
 * agent as an extension: it implements the documented authorizer-chain
 * interface (`../shared/harnesses/pi/PROTOCOL.md`) exactly, because the real
 * package that has it is not in the registry.
 *
 * - At `session_start` it publishes a service with
 *   `registerAuthorizer(name, authorize) => dispose` (a duplicate name
 *   throws) — in the single slot (`CHAIN_HOST_VARIANT=single`, 20.9–28) or
 *   only in the per-session map keyed by session id (`per-session`, 29+) —
 *   then emits `permissions:ready`.
 * - Every `bash`, `write` or `read` call is an ask (policy `*` = ask). The
 *   links named in `CHAIN_HOST_CHAIN` (comma-separated, the operator's
 *   `authorizerChain`) run in order with the permission request as the
 *   upstream package passes it; `defer` passes on; `allow` on `path` and
 *   `external_directory` is downgraded to `defer`; a throw blocks the call
 *   (`gate_error`); the end of the chain headless is a deny with resolution
 *   `confirmation_unavailable`. There is no timeout: a link that hangs is
 *   waited for, as upstream does.
 * - Each resolution is broadcast on `permissions:decision`, a link's answer
 *   reported as `user_approved` / `user_denied` (as 26.x does).
 */

import { randomUUID } from "node:crypto";

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

type Verdict = { kind: "allow" } | { kind: "deny"; reason?: string } | { kind: "defer" };
type Authorize = (details: unknown, query: unknown, log: unknown) => Promise<Verdict>;

const SERVICE_KEY = Symbol.for("@gotgenes/pi-permission-system:service");
const SESSION_SERVICES_KEY = Symbol.for("@gotgenes/pi-permission-system:session-services");
const CAPPED = new Set(["path", "external_directory"]);

export default function chainHost(pi: ExtensionAPI): void {
  const chain = (process.env["CHAIN_HOST_CHAIN"] ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  const variant = process.env["CHAIN_HOST_VARIANT"] === "per-session" ? "per-session" : "single";
  const links = new Map<string, Authorize>();
  const slots = globalThis as unknown as Record<symbol, unknown>;

  pi.on("session_start", (_event, ctx) => {
    const service = {
      registerAuthorizer(name: string, authorize: Authorize): () => void {
        if (links.has(name)) throw new Error(`authorizer "${name}" is already registered`);
        links.set(name, authorize);
        return () => {
          if (links.get(name) === authorize) links.delete(name);
        };
      },
      checkPermission: (_surface: string, _value?: string) => ({ state: "ask", matchedPattern: "*", source: "default", origin: "global" }),
    };
    if (variant === "single") {
      slots[SERVICE_KEY] = service;
    } else {
      const map = (slots[SESSION_SERVICES_KEY] as Map<string, unknown> | undefined) ?? new Map<string, unknown>();
      map.set(ctx.sessionManager.getSessionId(), service);
      slots[SESSION_SERVICES_KEY] = map;
    }
    pi.events.emit("permissions:ready", {});
  });

  pi.on("tool_call", async (event) => {
    const input = event.input as unknown as Record<string, unknown>;
    const isBash = event.toolName === "bash";
    const value = String(isBash ? input["command"] : input["path"]);
    const surface = isBash ? "bash" : event.toolName;
    const requestId = `perm-${randomUUID()}`;
    const details = {
      requestId,
      payload: {
        kind: surface,
        request: { requester: { agentName: null, forwarded: false, sessionId: null }, surface, toolName: event.toolName, invokedToolName: null, value, matchedPattern: "*", commandContext: null, executedUnit: null },
        evidence: [],
        annotations: [],
      },
      source: "tool_call",
      agentName: null,
      toolCallId: event.toolCallId,
      toolName: event.toolName,
      ...(isBash ? { command: value } : { path: value }),
      origin: "global",
      accessIntent: { surface, matchValues: [value], boundaryValue: null },
      sessionApproval: { surface, patterns: [`${value.split(" ")[0] ?? ""} *`] },
    };
    const decide = (result: "allow" | "deny", resolution: string) =>
      pi.events.emit("permissions:decision", { requestId, surface, value, result, resolution, origin: "global", agentName: null, matchedPattern: "*" });
    for (const name of chain) {
      const link = links.get(name);
      if (link === undefined) continue;
      let verdict: Verdict;
      try {
        verdict = await link(details, { checkPermission: () => ({ state: "ask" }) }, { debug: () => {} });
      } catch {
        decide("deny", "gate_error");
        return { block: true, reason: `[pi-permission-system] The authorizer '${name}' failed; the call was blocked.` };
      }
      if (verdict.kind === "allow" && CAPPED.has(surface)) verdict = { kind: "defer" };
      switch (verdict.kind) {
        case "allow":
          decide("allow", "user_approved");
          return undefined;
        case "deny":
          decide("deny", "user_denied");
          return { block: true, reason: `[pi-permission-system] The user denied this '${event.toolName}' call (rule '*'). Reason: ${verdict.reason ?? "none given"}.` };
        case "defer":
          continue;
      }
    }
    decide("deny", "confirmation_unavailable");
    return { block: true, reason: `[pi-permission-system] '${event.toolName}' needs confirmation, and no one can be asked in this mode.` };
  });
}
