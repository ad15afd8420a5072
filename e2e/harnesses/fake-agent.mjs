// A scripted fake *agent* model API on loopback for the harness end-to-end
// suite: it speaks Anthropic Messages (SSE), OpenAI Responses (SSE), Gemini
// streamGenerateContent (SSE) and OpenAI Chat Completions (SSE, under
// `/<harness>/v1`) well enough to drive Claude Code, Codex, Gemini CLI,
// GitHub Copilot CLI, Qwen Code and OpenCode headless. It never decides anything about vouch; it plays
// the agent's model:
//
// - The user prompt carries the command to run as `RUN<<<command>>>`.
// - The first call of a turn answers with one shell tool call running it.
// - A call that carries the tool's result answers with a short text, and the
//   result text (what the harness told its model: output, or a hook's deny
//   reason) is recorded.
// - Any other call (titles, quota probes, token counts) gets a short text.
//
// Usage: node fake-agent.mjs  → first stdout line `listening http://127.0.0.1:PORT`.
// GET /_log returns the recorded tool results as a JSON array; the process
// exits when stdin closes, so a dying parent takes it along.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

// FAKE_AGENT_DUMP=DIR writes every request body there (for debugging a harness).
const dump = process.env.FAKE_AGENT_DUMP;
let dumped = 0;

const results = [];
let calls = 0;

function commandIn(text) {
  const m = /RUN<<<([\s\S]*?)>>>/.exec(text);
  return m ? m[1] : null;
}

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [name, data] of events) {
    if (name) res.write(`event: ${name}\n`);
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

// ---------------------------------------------------------------- Anthropic

function anthropic(req, body, res) {
  // Claude Code appends system-role context after the user's turn: the
  // latest *user* message is what counts.
  const users = (body.messages || []).filter((m) => m && m.role === 'user');
  const last = users[users.length - 1] || {};
  const blocks = Array.isArray(last.content) ? last.content : [];
  const toolResult = blocks.find((b) => b && b.type === 'tool_result');
  const hasBash = (body.tools || []).some((t) => t.name === 'Bash');
  const flat = JSON.stringify(last);
  const command = hasBash && !toolResult ? commandIn(flat) : null;
  if (toolResult) {
    const c = toolResult.content;
    const text = typeof c === 'string' ? c : (c || []).map((x) => x.text || '').join('\n');
    results.push({ harness: 'claude-code', is_error: !!toolResult.is_error, text });
  }
  const usage = { input_tokens: 10, output_tokens: 5 };
  const content = command
    ? [{ type: 'tool_use', id: `toolu_e2e_${++calls}`, name: 'Bash', input: { command, description: 'e2e marker' } }]
    : [{ type: 'text', text: 'done' }];
  const stop = command ? 'tool_use' : 'end_turn';
  if (!body.stream) {
    return json(res, 200, { id: `msg_${calls}`, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stop, stop_sequence: null, usage });
  }
  const events = [['message_start', { type: 'message_start', message: { id: `msg_${++calls}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } }]];
  content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  sse(res, events);
}

// ---------------------------------------------------------------- OpenAI Responses

function responses(req, body, res) {
  const input = Array.isArray(body.input) ? body.input : [];
  const output = input.filter((i) => i && (i.type === 'function_call_output' || i.type === 'custom_tool_call_output'));
  const id = `resp_${++calls}`;
  let item;
  if (output.length > 0) {
    const o = output[output.length - 1].output;
    const text = typeof o === 'string' ? o : JSON.stringify(o);
    results.push({ harness: 'codex', text });
    item = { type: 'message', role: 'assistant', id: `msg_${calls}`, status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] };
  } else {
    const users = input.filter((i) => i && i.role === 'user');
    const command = commandIn(JSON.stringify(users[users.length - 1] || {}));
    const tools = (body.tools || []).map((t) => t.name);
    if (command && tools.includes('exec_command')) {
      item = { type: 'function_call', id: `fc_${calls}`, call_id: `call_e2e_${calls}`, name: 'exec_command', arguments: JSON.stringify({ cmd: command }), status: 'completed' };
    } else if (command && tools.includes('shell')) {
      item = { type: 'function_call', id: `fc_${calls}`, call_id: `call_e2e_${calls}`, name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', command] }), status: 'completed' };
    } else {
      item = { type: 'message', role: 'assistant', id: `msg_${calls}`, status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] };
    }
  }
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  sse(res, [
    ['response.created', { type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } }],
    ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }],
    ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
    ['response.completed', { type: 'response.completed', response: { id, object: 'response', status: 'completed', output: [item], usage } }],
  ]);
}

// ---------------------------------------------------------------- Gemini

function gemini(req, body, res) {
  const contents = body.contents || [];
  const last = contents[contents.length - 1] || {};
  const parts = last.parts || [];
  const fr = parts.find((p) => p.functionResponse);
  let part;
  if (fr) {
    results.push({ harness: 'gemini', text: JSON.stringify(fr.functionResponse.response) });
    part = { text: 'done' };
  } else {
    const command = commandIn(JSON.stringify(last));
    part = command ? { functionCall: { name: 'run_shell_command', args: { command, description: 'e2e marker' } } } : { text: 'done' };
  }
  const chunk = {
    candidates: [{ content: { parts: [part], role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'gemini-2.5-flash',
  };
  if ((req.url || '').includes(':streamGenerateContent')) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    return res.end();
  }
  json(res, 200, chunk);
}

// ---------------------------------------------------------------- OpenAI Chat Completions

// GitHub Copilot CLI, Qwen Code and OpenCode speak chat completions. The
// base URL names the harness (`/<harness>/v1`), so the log can say whose
// tool result it recorded.
function chat(req, body, res, harness) {
  const messages = body.messages || [];
  const last = messages[messages.length - 1] || {};
  const id = `chatcmpl_${++calls}`;
  let delta;
  if (last.role === 'tool') {
    const c = last.content;
    const text = typeof c === 'string' ? c : (c || []).map((x) => x.text || '').join('\n');
    results.push({ harness, text });
    delta = { role: 'assistant', content: 'done' };
  } else {
    const users = messages.filter((m) => m && m.role === 'user');
    const command = commandIn(JSON.stringify(users[users.length - 1] || {}));
    const shell = (body.tools || []).map((t) => t.function || {}).find((f) => ['bash', 'run_shell_command'].includes(f.name));
    if (command && shell) {
      // Only the arguments the tool declares: some harnesses reject others.
      const props = (shell.parameters && shell.parameters.properties) || {};
      const args = { command };
      if ('description' in props) args.description = 'e2e marker';
      delta = { role: 'assistant', content: null, tool_calls: [{ index: 0, id: `call_e2e_${calls}`, type: 'function', function: { name: shell.name, arguments: JSON.stringify(args) } }] };
    } else {
      delta = { role: 'assistant', content: 'done' };
    }
  }
  const finish = delta.tool_calls ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model || 'fake-model' };
  if (!body.stream) {
    return json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message: delta, finish_reason: finish }], usage });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`);
  res.write('data: [DONE]\n\n');
  res.end();
}

// ---------------------------------------------------------------- server

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = req.url || '';
    if (req.method === 'GET' && url === '/_log') return json(res, 200, results);
    if (dump) fs.writeFileSync(path.join(dump, `${String(++dumped).padStart(3, '0')}.json`), JSON.stringify({ url, body: Buffer.concat(chunks).toString('utf8') }));
    let body = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
    } catch {
      return json(res, 400, { error: { message: 'not JSON' } });
    }
    if (req.method === 'POST' && url.startsWith('/v1/messages/count_tokens')) return json(res, 200, { input_tokens: 10 });
    if (req.method === 'POST' && url.startsWith('/v1/messages')) return anthropic(req, body, res);
    if (req.method === 'POST' && url.startsWith('/v1/responses')) return responses(req, body, res);
    if (req.method === 'POST' && url.includes(':streamGenerateContent')) return gemini(req, body, res);
    if (req.method === 'POST' && url.includes(':generateContent')) return gemini(req, body, res);
    if (req.method === 'POST' && url.includes(':countTokens')) return json(res, 200, { totalTokens: 10 });
    const routed = /^\/([a-z-]+)\/v1\/chat\/completions/.exec(url);
    if (req.method === 'POST' && routed) return chat(req, body, res, routed[1]);
    if (req.method === 'GET' && /^(\/[a-z-]+)?\/v1\/models/.test(url)) return json(res, 200, { object: 'list', data: [], models: [] });
    json(res, 404, { error: { message: `fake agent API: no route ${req.method} ${url}` } });
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
