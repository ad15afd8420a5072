/**
 * Forwarding `permissions:decision` broadcasts to `POST /v1/audit/events`:
 * what is sent, what is skipped, and that every way the ingest can be
 * missing or failing ends in at most one log line and never grows a queue.
 * Against loopback servers that answer as the cases need, and against a
 * real `vouch serve`.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";

import { post, readSettings } from "../../common/vouch.ts";
import type { VouchSettings } from "../../common/vouch.ts";
import { AuditForwarder, forwardedEvent } from "../src/audit.ts";
import type { VouchServer } from "../../test-support/vouch.ts";
import { deadPort, startVouch } from "../../test-support/vouch.ts";

/** What the forwarder adds to each broadcast; the rest must arrive as it was. */
function asBroadcast(sent: Record<string, unknown>): Record<string, unknown> {
  const { cwd, home, source, timestamp_ms: at, ...event } = sent;
  assert.deepEqual([cwd, home, source, typeof at], ["/p", homedir(), "pi", "number"]);
  return event;
}

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")) as Record<string, unknown>;
const ASKED = fixture("pps-20.7.3_decision-event_print-mode-ask.json");
const DENIED = fixture("pps-26.3.1_decision-event_link-deny.json");
const ALLOWED = fixture("pps-26.3.1_decision-event_link-allow.json");

interface Ingest {
  url: string;
  /** Each batch received (a JSON array of events). */
  bodies: Array<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

/** A loopback ingest answering `status` (and `reply` for a 2xx) to every batch. */
async function ingest(status: number, reply = '{"events":1,"counted":1,"rejected":[]}'): Promise<Ingest> {
  const bodies: Array<Array<Record<string, unknown>>> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Array<Record<string, unknown>>);
      res.writeHead(status, { "content-type": "application/json" }).end(status < 300 ? reply : '{"error":{"code":"not_implemented","message":"no audit"}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function forwarder(url: string, logs: string[]): AuditForwarder {
  const settings = readSettings({ VOUCH_URL: url, VOUCH_TOKEN: "tok" }, 2000);
  assert.equal(settings.kind, "ok");
  return new AuditForwarder((settings as { value: VouchSettings }).value, () => ({ cwd: "/p" }), (line) => logs.push(line));
}

describe("audit forwarding", () => {
  let vouch: VouchServer;
  before(async () => {
    vouch = await startVouch({ reviewerUrl: `http://127.0.0.1:${await deadPort()}/v1` });
  });
  after(async () => {
    await vouch?.stop();
  });

  test("sends the broadcasts as a JSON array, each with cwd, home, source and time; skips vouch's own link decisions and non-decisions", async () => {
    const server = await ingest(200);
    const logs: string[] = [];
    const audit = forwarder(server.url, logs);
    audit.noteOwnDecision(DENIED["requestId"] as string);
    audit.push(DENIED);
    audit.push({ surface: "bash" });
    audit.push("not an event");
    audit.push(ASKED);
    audit.push(ALLOWED);
    await audit.flush();
    assert.deepEqual(server.bodies.flat().map(asBroadcast), [ASKED, ALLOWED]);
    assert.deepEqual(logs, []);
    await server.close();
  });

  for (const status of [404, 501]) {
    test(`an ingest that does not exist (${status}) turns forwarding off with one line`, async () => {
      const server = await ingest(status);
      const logs: string[] = [];
      const audit = forwarder(server.url, logs);
      for (let i = 0; i < 5; i += 1) {
        audit.push(ASKED);
        await audit.flush();
      }
      assert.equal(server.bodies.length, 1);
      assert.deepEqual(logs, [`audit: this vouch has no audit ingest (${status}); forwarding of permission decisions is off`]);
      await server.close();
    });
  }

  test("a refused batch (400) turns it off too, naming vouch's message", async () => {
    const server = await ingest(400);
    const logs: string[] = [];
    const audit = forwarder(server.url, logs);
    audit.push(ASKED);
    await audit.flush();
    audit.push(ASKED);
    await audit.flush();
    assert.equal(server.bodies.length, 1);
    assert.match(logs.join("\n"), /^audit: vouch refused the request \(400 not_implemented: no audit\); forwarding/);
    await server.close();
  });

  test("events the ingest refuses are reported once, and forwarding goes on", async () => {
    const server = await ingest(200, '{"events":1,"counted":0,"rejected":[{"index":0,"error":"field `result` must be `allow` or `deny`"}]}');
    const logs: string[] = [];
    const audit = forwarder(server.url, logs);
    for (let i = 0; i < 3; i += 1) {
      audit.push(ASKED);
      await audit.flush();
    }
    assert.equal(server.bodies.length, 3);
    assert.deepEqual(logs, ["audit: vouch refused 1 forwarded decision(s) (field `result` must be `allow` or `deny`)"]);
    await server.close();
  });

  test("vouch down: one line, the batch is dropped, forwarding stays on", async () => {
    const logs: string[] = [];
    const audit = forwarder(`http://127.0.0.1:${await deadPort()}`, logs);
    for (let i = 0; i < 3; i += 1) {
      audit.push(ASKED);
      await audit.flush();
    }
    assert.equal(logs.length, 1);
    assert.match(logs[0] ?? "", /^audit: vouch is unreachable .*; these decisions were not forwarded$/);
  });

  test("every captured decision broadcast (20.7.3 without requestId, 26.3.1) is forwarded as it was", async () => {
    const names = readdirSync(new URL("./fixtures/", import.meta.url)).filter((n) => n.includes("decision-event"));
    assert.ok(names.length >= 5);
    const server = await ingest(200);
    const audit = forwarder(server.url, []);
    for (const name of names) audit.push(fixture(name));
    await audit.flush();
    assert.deepEqual(server.bodies.flat().map(asBroadcast), names.map(fixture));
    await server.close();
  });

  test("a burst beyond the queue is dropped and counted, never queued", async () => {
    const server = await ingest(200);
    const logs: string[] = [];
    const audit = forwarder(server.url, logs);
    for (let i = 0; i < 1000; i += 1) audit.push({ ...ASKED, value: `cmd ${i}` });
    await audit.flush();
    const sent = server.bodies.flat().length;
    assert.ok(sent <= 256 + 64, `sent ${sent}`);
    assert.ok(sent > 0);
    assert.match(logs.join("\n"), /decision\(s\) were dropped because the queue was full/);
    await server.close();
  });

  test("against the real vouch serve of this build: ingested, or off with one line where it has no audit", async () => {
    const settings = readSettings({ VOUCH_URL: vouch.url, VOUCH_TOKEN: vouch.token }, 2000);
    assert.equal(settings.kind, "ok");
    const value = (settings as { value: VouchSettings }).value;
    const cwd = mkdtempSync(join(tmpdir(), "vouch-audit-project-"));
    const logs: string[] = [];
    const audit = new AuditForwarder(value, () => ({ cwd }), (line) => logs.push(line));
    const probe = await post(value, "/v1/audit/events", [forwardedEvent(ASKED, cwd, Date.now())], Date.now() + 5000);
    audit.push(DENIED);
    audit.push(ALLOWED);
    await audit.flush();
    if (probe.kind === "refused" && probe.status === 501) {
      assert.deepEqual(logs, ["audit: this vouch has no audit ingest (501); forwarding of permission decisions is off"]);
      return;
    }
    // The ingest takes the forwarded shape whole: every event counted, none refused.
    assert.equal(probe.kind, "ok", JSON.stringify(probe));
    const summary = (probe as { body: { counted?: number; rejected?: unknown[] } }).body;
    assert.deepEqual([summary.counted, summary.rejected], [1, []]);
    assert.deepEqual(logs, []);
  });
});
