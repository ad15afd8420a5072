/**
 * The smallest stand-in for Pi's `ExtensionAPI` that lets a test load the
 * extension in-process and call its handlers directly: it records
 * `pi.on(...)` handlers and runs an event bus. What it stands in for is only
 * the wiring; the extension's own code, vouch and the model are all real.
 * The real Pi agent drives the same extension in `pi-agent.test.ts`.
 */

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

import vouchForPi, { TOKEN_SLOT } from "../src/index.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;

export interface FakeContext {
  cwd: string;
  hasUI: false;
  ui: { notify(message: string, level?: string): void };
  sessionManager: { getSessionId(): string; getBranch(): unknown[] };
  signal: AbortSignal | undefined;
}

export interface LoadedExtension {
  /** Runs every handler registered for a Pi event; returns the last result. */
  fire(event: string, payload: unknown): Promise<unknown>;
  /** Emits on the shared event bus (what other extensions see). */
  emit(channel: string, data: unknown): void;
  ctx: FakeContext;
}

/** A session whose latest user message is `userText` (a fresh turn id per call). */
export function session(sessionId: string, cwd: string, userText: string, turnId = "turn-1"): FakeContext {
  const branch = [
    { type: "message", id: "sys-1", message: { role: "system", content: "" } },
    { type: "message", id: turnId, message: { role: "user", content: [{ type: "text", text: userText }] } },
  ];
  return {
    cwd,
    hasUI: false,
    ui: { notify: () => {} },
    sessionManager: { getSessionId: () => sessionId, getBranch: () => branch },
    signal: undefined,
  };
}

/**
 * Loads the extension with `env` as its environment — as a fresh Pi
 * process would, unless `reload` (as `/reload` does, in the same process).
 */
export function loadExtension(env: Record<string, string>, ctx: FakeContext, reload = false): LoadedExtension {
  if (!reload) delete (globalThis as unknown as Record<symbol, unknown>)[TOKEN_SLOT];
  const handlers = new Map<string, Handler[]>();
  const bus = new Map<string, Array<(data: unknown) => void>>();
  const api = {
    on(event: string, handler: Handler) {
      handlers.set(event, [...(handlers.get(event) ?? []), handler]);
      return () => {};
    },
    events: {
      on(channel: string, handler: (data: unknown) => void) {
        bus.set(channel, [...(bus.get(channel) ?? []), handler]);
        return () => {};
      },
      emit(channel: string, data: unknown) {
        for (const handler of bus.get(channel) ?? []) handler(data);
      },
    },
  };
  const saved = { ...process.env };
  const inherited = Object.fromEntries(Object.entries(saved).filter(([key]) => !key.startsWith("VOUCH_")));
  process.env = { ...inherited, ...env };
  try {
    vouchForPi(api as unknown as ExtensionAPI);
  } finally {
    process.env = saved;
  }
  return {
    ctx,
    async fire(event, payload) {
      let result: unknown;
      for (const handler of handlers.get(event) ?? []) result = await handler(payload, ctx);
      return result;
    },
    emit: (channel, data) => api.events.emit(channel, data),
  };
}
