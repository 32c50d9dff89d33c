// The official openai client against the reference application: a streamed chat, the usage
// chunk, and a tool-call round trip must all complete without error.
// Usage: node openai_client_test.mjs /path/to/stagegate   (run by ctest from the source tree)

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const binary = process.argv[2];
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const sim = spawn(binary, ['sim', '--port', '0', '--profile', 'fast', '--corpus',
                           path.join(root, 'corpus/service-desk')], { stdio: ['ignore', 'pipe', 'inherit'] });
let stdout = '';
const baseURL = await new Promise((resolve, reject) => {
  sim.stdout.on('data', (data) => {
    stdout += data;
    const match = stdout.match(/listening on (http:\/\/[0-9.]+:[0-9]+)/);
    if (match) resolve(match[1] + '/v1');
  });
  sim.on('exit', (code) => reject(new Error(`stagegate sim exited with ${code}: ${stdout}`)));
  setTimeout(() => reject(new Error('stagegate sim did not start within 5 s')), 5000);
});

const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
let passed = 0;
let failed = 0;
async function test(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok - ${name}\n${error.stack}`);
  }
}

await test('a streamed chat completes, with a usage chunk', async () => {
  const stream = await client.chat.completions.create({
    model: 'sim-assistant',
    messages: [{ role: 'user', content: 'What is phishing?' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage = null;
  let finish = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      text += choice.delta?.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
  }
  assert.ok(text.length > 20, `answer too short: ${text}`);
  assert.equal(finish, 'stop');
  assert.ok(usage, 'no usage chunk');
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.equal(usage.completion_tokens, chunks - 3);  // role chunk, finish chunk, usage chunk
});

await test('a tool call round trip: tool_calls, then an answer from the tool result', async () => {
  const tools = [{
    type: 'function',
    function: { name: 'open_ticket', description: 'Open a ticket.',
                parameters: { type: 'object', properties: { summary: { type: 'string' } } } },
  }];
  const messages = [{ role: 'user', content: 'My VPN keeps dropping. Can you open a ticket for me?' }];
  const first = await client.chat.completions.create({ model: 'sim-assistant', messages, tools });
  const choice = first.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  const call = choice.message.tool_calls[0];
  assert.equal(call.function.name, 'open_ticket');
  assert.ok(JSON.parse(call.function.arguments).summary);

  // The same call streamed: the arguments arrive in fragments and join into the same JSON.
  const stream = await client.chat.completions.create({ model: 'sim-assistant', messages, tools, stream: true });
  let name = '';
  let args = '';
  for await (const chunk of stream) {
    for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
      name += delta.function?.name ?? '';
      args += delta.function?.arguments ?? '';
    }
  }
  assert.equal(name, 'open_ticket');
  assert.deepEqual(JSON.parse(args), JSON.parse(call.function.arguments));

  messages.push(choice.message);
  messages.push({ role: 'tool', tool_call_id: call.id,
                  content: JSON.stringify({ ticket_id: 'INC-777123', queue: 'it', status: 'open' }) });
  const second = await client.chat.completions.create({ model: 'sim-assistant', messages, tools });
  assert.match(second.choices[0].message.content, /INC-777123/);
});

await test('errors surface as the client library\'s typed errors', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'sim-assistant', messages: [] }),
    (error) => error instanceof OpenAI.BadRequestError && error.status === 400);
});

sim.kill('SIGINT');
const [code] = await once(sim, 'exit');
await test('stagegate sim stops cleanly on SIGINT', async () => assert.equal(code, 0));

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
