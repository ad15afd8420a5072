// Browser test of vouch's operator console (issue 29).
//
// Starts the test model server and a real `vouch serve` in a temporary
// VOUCH_HOME/HOME, then drives Debian's chromium (never a downloaded
// browser) through every view: login with the operator token, a model
// denial appearing in the live feed without a reload, and a decision of a
// separate `vouch hook` process sharing the state directory, approve exact retry
// (the exact retry is allowed, a changed one is not), break glass for a
// critical denial with the typed phrase, a `<script>` and a secret-shaped
// token rendered as inert redacted text, and requests without the cookie or
// with a wrong CSRF token refused. Screenshots go to docs/console/.
//
//   VOUCH_BIN            default target/release/vouch
//   VOUCH_MODEL_SERVER   default target/release/examples/model_server
//   CHROMIUM             default /usr/bin/chromium
//   VOUCH_CONSOLE_SHOTS  where the screenshots go, default docs/console
//
// Exits non-zero on any failure.

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const VOUCH_BIN = process.env.VOUCH_BIN || join(root, 'target/release/vouch');
const MODEL_SERVER = process.env.VOUCH_MODEL_SERVER || join(root, 'target/release/examples/model_server');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOTS = process.env.VOUCH_CONSOLE_SHOTS || join(root, 'docs/console');
const SECRET = 'ghp_' + 'Zq7Xw2Lm9Pk4Rt8Vb3Nc6Hd1Jf5Gs0Ya2Ue7';
const STEP_TIMEOUT = 15000;

const children = [];
const home = mkdtempSync(join(tmpdir(), 'vouch-console-'));
let browser = null;

function cleanup() {
  for (const c of children) { try { c.kill('SIGTERM'); } catch (_) { /* gone */ } }
  rmSync(home, { recursive: true, force: true });
}

function log(step) { console.log(`console-e2e: ${step}`); }

/** Spawns `cmd` and resolves with the first line on `stream` matching `re`. */
function startProcess(cmd, args, env, stream, re) {
  const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  const lines = [];
  return new Promise((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} did not start:\n${lines.join('\n')}`)), 30000);
    const rl = createInterface({ input: child[stream] });
    rl.on('line', (line) => {
      lines.push(line);
      const m = line.match(re);
      if (m) { clearTimeout(timer); resolveLine({ child, match: m }); }
    });
    const other = stream === 'stdout' ? child.stderr : child.stdout;
    other.on('data', (d) => { if (process.env.CONSOLE_E2E_VERBOSE) process.stderr.write(d); });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${cmd} exited ${code}:\n${lines.join('\n')}`)); });
  });
}

const verdict = (outcome, risk, rationale, suggestion = null) => ({
  verdict: { outcome, risk_level: risk, user_authorization: 'unknown', rationale, suggestion },
});

async function main() {
  // The model's script: first matching rule wins. An approved exact retry
  // carries the operator's override as trusted context; the model allows it.
  const script = {
    default: verdict('allow', 'low', 'routine'),
    rules: [
      { contains: 'Trusted override from a human operator', reply: verdict('allow', 'low', 'the operator approved this exact retry') },
      { contains: 'console-approve-me', reply: verdict('deny', 'medium', 'deploys to production without a ticket', 'deploy to staging first') },
      { contains: 'console-critical', reply: verdict('deny', 'critical', 'wipes the production database') },
      { contains: 'console-xss', reply: verdict('deny', 'high', 'sends a token <img src=x onerror="window.__pwned=2"> to a third party') },
      { contains: 'console-ask', reply: verdict('defer', 'medium', 'unclear intent; ask the user') },
    ],
  };
  const scriptPath = join(home, 'model-script.json');
  writeFileSync(scriptPath, JSON.stringify(script));
  const env = { PATH: process.env.PATH, HOME: home, VOUCH_HOME: home, RUST_LOG: 'info', VOUCH_REVIEWER_API_KEY: 'test-key' };
  const model = await startProcess(MODEL_SERVER, ['--listen', '127.0.0.1:0', '--script', scriptPath], env, 'stdout', /^listening (http:\/\/\S+)/);
  const modelUrl = model.match[1];
  const configPath = join(home, 'config.toml');
  writeFileSync(configPath, `[reviewer]\nprovider = "openai"\nbase_url = "${modelUrl}/v1"\ntimeout_ms = 10000\n`);
  const serve = await startProcess(VOUCH_BIN, ['serve', '--listen', '127.0.0.1:0', '--config', configPath], env, 'stderr', /^vouch: listening on (\S+)/);
  const base = `http://${serve.match[1]}`;
  const token = (name) => readFileSync(join(home, 'state', `${name}.token`), 'utf8').trim();
  const ADAPTER = token('adapter');
  const OPERATOR = token('operator');
  log(`vouch serve at ${base}, model at ${modelUrl}`);

  const project = join(home, 'project');
  mkdirSync(join(project, '.git'), { recursive: true });
  const review = async (session, command, turn = 'turn-1') => {
    const r = await fetch(`${base}/v1/review`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADAPTER}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ session_id: session, turn_id: turn, source: 'claude-code', agent: 'main', surface: 'bash', command, cwd: project }),
    });
    assert.equal(r.status, 200, `review ${command}`);
    return r.json();
  };

  // Audit history for the charts: a week of pi decisions in the project.
  const day = 24 * 3600 * 1000;
  const events = [];
  for (let d = 0; d < 7; d++) {
    for (let i = 0; i <= d % 3; i++) {
      events.push({ requestId: `gs-${d}-${i}`, surface: 'bash', value: 'git status', result: 'allow', resolution: 'user_approved', origin: null, agentName: 'main', matchedPattern: null, cwd: project, source: 'pi', timestamp_ms: Date.now() - d * day });
    }
    events.push({ requestId: `np-${d}`, surface: 'bash', value: 'npm publish', result: 'deny', resolution: 'user_denied', origin: null, agentName: 'main', matchedPattern: null, cwd: project, source: 'pi', timestamp_ms: Date.now() - d * day });
  }
  const ingest = await fetch(`${base}/v1/audit/events`, { method: 'POST', headers: { Authorization: `Bearer ${ADAPTER}`, 'Content-Type': 'application/json' }, body: JSON.stringify(events) });
  assert.equal(ingest.status, 200, await ingest.text());

  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', timezoneId: 'Europe/Berlin' });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  // The refusals this test provokes log "Failed to load resource"; anything
  // else at error level (a CSP violation, a script error) fails the test.
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(m.text()); });
  page.setDefaultTimeout(STEP_TIMEOUT);

  // 1. Login: a wrong token is refused, the operator token lets in.
  await page.goto(`${base}/console`);
  await page.screenshot({ path: join(SHOTS, 'login.png') });
  await page.fill('#token', ADAPTER);
  await page.click('button[type=submit]');
  await page.waitForSelector('.error');
  assert.match(await page.textContent('.error'), /adapter token/);
  await page.fill('#token', 'not-the-token');
  const refused = page.waitForResponse((r) => r.url().endsWith('/console/login'));
  await page.click('button[type=submit]');
  assert.equal((await refused).status(), 401);
  await page.fill('#token', OPERATOR);
  await page.click('button[type=submit]');
  await page.waitForSelector('#tab-live');
  const cookies = await context.cookies();
  const cookie = cookies.find((c) => c.name === 'vouch_console');
  assert.ok(cookie, 'console cookie set');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.path, '/console');
  assert.ok(!cookie.value.includes(OPERATOR), 'the cookie is not the token');
  assert.ok(!(await page.content()).includes(OPERATOR), 'the token is not in the page');
  log('login ok');

  // 2. A model denial made by a test request appears live, without a reload.
  await page.click('#tab-live');
  await page.waitForFunction(() => document.getElementById('live-state').textContent === 'Connected.');
  const denied = await review('agent-alpha', './deploy.sh console-approve-me');
  assert.equal(denied.decision, 'deny');
  assert.equal(denied.stage, 'reviewer');
  const hash = denied.request_hash;
  await page.waitForSelector(`#live-list .feed-item[data-hash="${hash}"]`);
  // Some allowed traffic for a realistic feed.
  await review('agent-beta', './build.sh --release', 'turn-7');
  await review('agent-gamma', './scripts/lint.sh', 'turn-2');
  const asked = await review('agent-beta', './migrate.sh console-ask', 'turn-7');
  assert.equal(asked.decision, 'defer');
  await page.waitForSelector(`#live-list .feed-item[data-hash="${asked.request_hash}"]`);
  // A decision of a `vouch hook` process on this machine (it shares the
  // state directory, not the service) appears in Live too.
  const hookInput = JSON.stringify({
    session_id: 'hook-session', transcript_path: join(home, 'absent.jsonl'), cwd: project,
    prompt_id: 'p-1', permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash',
    tool_input: { command: 'rm -rf / # console-hook-decision' }, tool_use_id: 'toolu_hook_1',
  });
  const hookReply = await new Promise((resolveHook, reject) => {
    const hook = spawn(VOUCH_BIN, ['hook', 'claude-code', '--home', home, '--timeout', '30'], { env: { PATH: process.env.PATH, HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    hook.stdout.on('data', (d) => { out += d; });
    hook.on('error', reject);
    hook.on('exit', (code) => (code === 0 ? resolveHook(out) : reject(new Error(`vouch hook exited ${code}`))));
    hook.stdin.end(hookInput);
  });
  assert.equal(JSON.parse(hookReply).hookSpecificOutput.permissionDecision, 'deny', hookReply);
  await page.waitForFunction(() => [...document.querySelectorAll('#live-list .feed-item')]
    .some((n) => n.textContent.includes('console-hook-decision') && n.textContent.includes('hook-session')));
  await page.screenshot({ path: join(SHOTS, 'live.png') });
  log('live feed ok (the service\'s decisions and a `vouch hook` process\'s)');

  // 3. Approve exact retry: the exact retry is allowed, a changed one is not.
  await page.click('#tab-pending');
  const card = `#pending-list .card[data-hash="${hash}"]`;
  await page.waitForSelector(`${card} button.approve`);
  await page.screenshot({ path: join(SHOTS, 'pending.png') });
  await page.click(`${card} button.approve`);
  await page.waitForFunction((sel) => /Approved|approved/.test(document.querySelector(sel)?.textContent || ''), card);
  const changed = await review('agent-alpha', './deploy.sh console-approve-me --now');
  assert.equal(changed.decision, 'deny', 'a changed retry is not allowed');
  const retried = await review('agent-alpha', './deploy.sh console-approve-me');
  assert.equal(retried.decision, 'allow', JSON.stringify(retried));
  assert.equal(retried.stage, 'override');
  const again = await review('agent-alpha', './deploy.sh console-approve-me');
  assert.equal(again.decision, 'deny', 'the approval is spent after one retry');
  log('approve exact retry ok');

  // 4. Break glass for a critical denial: the phrase typed in the page.
  const critical = await review('agent-gamma', './db.sh drop console-critical', 'turn-2');
  assert.equal(critical.decision, 'deny');
  assert.equal(critical.risk_level, 'critical');
  const ccard = `#pending-list .card[data-hash="${critical.request_hash}"]`;
  await page.waitForSelector(`${ccard} button.break-glass`);
  assert.equal(await page.$(`${ccard} button.approve`), null, 'no exact-retry approval for a critical denial');
  await page.click(`${ccard} button.break-glass`);
  await page.waitForSelector('#glass[open]');
  const phrase = (await page.textContent('#glass-phrase')).trim();
  assert.match(phrase, /^BREAK-GLASS [A-Z2-9]{8}$/);
  await page.keyboard.type(phrase);
  await page.screenshot({ path: join(SHOTS, 'break-glass.png') });
  await page.keyboard.press('Enter');
  await page.waitForSelector('#glass', { state: 'hidden' });
  const glassed = await review('agent-gamma', './db.sh drop console-critical', 'turn-2');
  assert.equal(glassed.decision, 'allow', JSON.stringify(glassed));
  assert.equal(glassed.stage, 'break_glass');
  const glassedAgain = await review('agent-gamma', './db.sh drop console-critical', 'turn-2');
  assert.equal(glassedAgain.decision, 'deny', 'break glass is one use');
  log('break glass ok');

  // 5. Hostile text renders inert and redacted.
  const hostile = `./send.sh console-xss '<script>window.__pwned=1</script>' ${SECRET}`;
  const xss = await review('agent-delta', hostile, 'turn-3');
  assert.equal(xss.decision, 'deny');
  await page.click('#tab-live');
  const item = `#live-list .feed-item[data-hash="${xss.request_hash}"]`;
  await page.waitForSelector(item);
  await page.click('#tab-pending');
  await page.waitForSelector(`#pending-list .card[data-hash="${xss.request_hash}"]`);
  const itemText = await page.textContent(item);
  assert.ok(itemText.includes('<script>window.__pwned=1</script>'), 'the script tag shows as text');
  assert.ok(itemText.includes('<img src=x'), 'the rationale shows as text');
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no injected script ran');
  assert.equal(await page.$$eval('#live-list script, #live-list img, #pending-list script, #pending-list img', (n) => n.length), 0);
  const html = await page.content();
  assert.ok(!html.includes(SECRET), 'the secret is absent from the page');
  assert.ok(!html.includes(SECRET.slice(4)), 'no part of the secret is in the page');
  log('inert and redacted ok');

  // 6. Without the cookie, or with a wrong CSRF token: refused.
  const bare = await fetch(`${base}/console/api/overview`);
  assert.equal(bare.status, 401);
  const cookieHeader = `vouch_console=${cookie.value}`;
  const withCookie = await fetch(`${base}/console/api/overview`, { headers: { Cookie: cookieHeader } });
  assert.equal(withCookie.status, 200);
  const body = JSON.stringify({ session_id: 'agent-alpha', request_hash: hash });
  const wrongCsrf = await fetch(`${base}/console/api/approve`, { method: 'POST', headers: { Cookie: cookieHeader, 'X-CSRF-Token': 'wrong', 'Content-Type': 'application/json' }, body });
  assert.equal(wrongCsrf.status, 403);
  const noCsrf = await fetch(`${base}/console/api/approve`, { method: 'POST', headers: { Cookie: cookieHeader, 'Content-Type': 'application/json' }, body });
  assert.equal(noCsrf.status, 403);
  const noCookie = await fetch(`${base}/console/api/approve`, { method: 'POST', headers: { 'X-CSRF-Token': await page.getAttribute('meta[name=csrf-token]', 'content'), 'Content-Type': 'application/json' }, body });
  assert.equal(noCookie.status, 401);
  // The page's own fetch with a tampered token is refused too.
  const tampered = await page.evaluate(async (b) => (await fetch('/console/api/approve', { method: 'POST', headers: { 'X-CSRF-Token': 'x', 'Content-Type': 'application/json' }, body: b })).status, body);
  assert.equal(tampered, 403);
  const headers = withCookie.headers;
  assert.match(headers.get('content-security-policy'), /default-src 'none'; script-src 'self'/);
  assert.equal(headers.get('x-content-type-options'), 'nosniff');
  assert.equal(headers.get('cache-control'), 'no-store');
  log('refusals ok');

  // 7. Sessions and audit views; keyboard use; narrow and dark. Three
  // model denials in a row open one turn's breaker; the view shows it.
  for (const n of [1, 2, 3]) {
    const d = await review('agent-epsilon', `./deploy.sh console-approve-me --region ${n}`, 'turn-4');
    assert.equal(d.decision, 'deny');
  }
  const tripped = await review('agent-epsilon', './deploy.sh --region 4', 'turn-4');
  assert.equal(tripped.stage, 'breaker', JSON.stringify(tripped));

  // Then the views.
  await page.focus('#tab-pending');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.getAttribute('#tab-sessions', 'aria-selected'), 'true', 'arrow keys move between views');
  await page.waitForSelector('#sessions-table tbody tr[data-session="agent-epsilon"] .open');
  await page.screenshot({ path: join(SHOTS, 'sessions.png') });
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector('#chart-days svg rect');
  await page.selectOption('#audit-target', 'pi');
  await page.click('#audit-form button[type=submit]');
  await page.waitForFunction(() => /git status/.test(document.getElementById('rules-snippet').textContent));
  await page.waitForSelector('#chart-sources svg rect');
  await page.screenshot({ path: join(SHOTS, 'audit.png'), fullPage: true });
  log('sessions and audit ok');

  await page.setViewportSize({ width: 420, height: 860 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.click('#tab-pending');
  await page.screenshot({ path: join(SHOTS, 'narrow-dark.png') });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `no horizontal scrolling on a narrow window (${overflow} px)`);

  assert.deepEqual(consoleErrors, [], 'no script errors or CSP violations');
  await browser.close();
  browser = null;
  log('all steps passed');
}

main().then(() => { cleanup(); process.exit(0); }, async (e) => {
  console.error('console-e2e: FAILED:', e && e.stack ? e.stack : e);
  if (browser) await browser.close().catch(() => {});
  cleanup();
  process.exit(1);
});
