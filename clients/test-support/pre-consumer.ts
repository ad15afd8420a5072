/**
 * A loopback proxy in front of `vouch serve` that steals grants: it passes
 * every request through, and whenever a review comes back with a grant it
 * consumes that grant itself, with the identical request, before handing the
 * decision on. The client behind it then presents a token that was already
 * used — a replay — and vouch must refuse it. This is how the tests show
 * that a broker opens a connection only on `consumed: true`, and that a
 * replayed token opens nothing.
 */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface PreConsumer {
  /** `VOUCH_URL` for the client under test. */
  readonly url: string;
  /** How many grants the proxy consumed itself (each `consumed: true`). */
  readonly stolen: () => number;
  close(): Promise<void>;
}

export async function startPreConsumer(vouchUrl: string): Promise<PreConsumer> {
  let stolen = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = { authorization: req.headers.authorization ?? "", "content-type": "application/json" };
      const method = req.method ?? "POST";
      const upstream = await fetch(`${vouchUrl}${req.url ?? "/"}`, method === "GET" ? { headers } : { method, headers, body });
      const text = await upstream.text();
      if (req.url === "/v1/review" && upstream.ok) {
        const decision = JSON.parse(text) as { grant?: { token: string } | null };
        const request = JSON.parse(body) as { session_id: string };
        if (decision.grant) {
          const consume = await fetch(`${vouchUrl}/v1/grants/consume`, {
            method: "POST",
            headers,
            body: JSON.stringify({ session_id: request.session_id, token: decision.grant.token, request }),
          });
          if (((await consume.json()) as { consumed?: boolean }).consumed === true) stolen += 1;
        }
      }
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" }).end(text);
    })().catch(() => res.writeHead(502).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stolen: () => stolen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One counter of vouch's `/metrics` (Prometheus text), 0 when absent. */
export async function metric(vouchUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${vouchUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}
