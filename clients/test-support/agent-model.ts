/**
 * A scripted *agent* model for driving the real Pi agent headless: an
 * OpenAI-compatible `POST /v1/chat/completions` server on 127.0.0.1:0 that
 * streams (server-sent events, as Pi asks for) exactly what a real provider
 * streams for a tool call or a text answer.
 *
 * The script is the conversation itself, so a test reads like a user:
 * a user message `Please run: <command>` gets one `bash` tool call with that
 * command; once the conversation ends in a tool result, the model answers
 * with text and the turn ends. Every request body is recorded, so a test
 * can read what the agent was shown (the tool result carrying vouch's
 * message). This is the agent's model, not vouch's reviewer — the reviewer
 * is the project's own test model server.
 */

import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The prompt prefix that makes the model call `bash`. */
export const RUN_PREFIX = "Please run: ";

export interface AgentModel {
  /** Base URL for Pi's `models.json` (`…/v1`). */
  readonly baseUrl: string;
  /** Every chat-completions request body received, oldest first. */
  readonly requests: unknown[];
  close(): Promise<void>;
}

export async function startAgentModel(): Promise<AgentModel> {
  const requests: unknown[] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    void handle(req, res, requests, () => (calls += 1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, requests: unknown[], nextCall: () => number): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (req.method !== "POST" || !(req.url ?? "").endsWith("/chat/completions")) {
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
    return;
  }
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { messages?: Array<Record<string, unknown>> };
  requests.push(body);
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1];
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const id = `chatcmpl-${nextCall()}`;
  const send = (delta: Record<string, unknown>, finish: string | null) =>
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "fake-agent", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  const command = last?.["role"] === "user" ? runRequest(last["content"]) : undefined;
  if (command !== undefined) {
    send({ role: "assistant", content: null, tool_calls: [{ index: 0, id: `call_${id}`, type: "function", function: { name: "bash", arguments: "" } }] }, null);
    send({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ command }) } }] }, null);
    send({}, "tool_calls");
  } else {
    send({ role: "assistant", content: "Done." }, null);
    send({}, "stop");
  }
  res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "fake-agent", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`);
  res.end("data: [DONE]\n\n");
}

/** The command of a `Please run: …` user message (string or text blocks). */
function runRequest(content: unknown): string | undefined {
  const text = typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((b: unknown) => (typeof b === "object" && b !== null && "text" in b ? String((b as { text: unknown }).text) : "")).join("")
      : "";
  const at = text.indexOf(RUN_PREFIX);
  return at < 0 ? undefined : text.slice(at + RUN_PREFIX.length).trim();
}

/** The tool-result messages the agent model was shown, in order (what the agent "sees"). */
export function toolResults(requests: readonly unknown[]): string[] {
  const last = requests[requests.length - 1] as { messages?: Array<Record<string, unknown>> } | undefined;
  return (last?.messages ?? [])
    .filter((m) => m["role"] === "tool")
    .map((m) => (typeof m["content"] === "string" ? m["content"] : JSON.stringify(m["content"])));
}
