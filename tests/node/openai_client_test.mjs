// The official openai client against the reference application: a streamed chat, the usage
// chunk, a tool-call round trip and tool_choice must all work as the client expects.
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

const ticketTools = [
  { type: 'function',
    function: { name: 'lookup_ticket', description: 'Look up a ticket by its id.',
                parameters: { type: 'object', properties: { ticket_id: { type: 'string' } } } } },
  { type: 'function',
    function: { name: 'open_ticket', description: 'Open a ticket.',
                parameters: { type: 'object', properties: { summary: { type: 'string' } } } } },
];

// The one tool call of a non-streamed reply, and the same request streamed, joined.
async function toolCallOf(request) {
  const reply = await client.chat.completions.create(request);
  const choice = reply.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.tool_calls.length, 1);
  const call = choice.message.tool_calls[0].function;
  const stream = await client.chat.completions.create({ ...request, stream: true });
  let name = '';
  let args = '';
  for await (const chunk of stream) {
    for (const delta of chunk.choices[0]?.delta?.tool_calls ?? []) {
      name += delta.function?.name ?? '';
      args += delta.function?.arguments ?? '';
    }
  }
  assert.equal(name, call.name);
  assert.deepEqual(JSON.parse(args), JSON.parse(call.arguments));
  return { name: call.name, arguments: JSON.parse(call.arguments) };
}

await test('tool_choice "required" gets a call to an offered tool', async () => {
  const messages = [{ role: 'user', content: 'What is the status of ticket INC-1042?' }];
  const call = await toolCallOf({ model: 'sim-assistant', messages, tools: ticketTools.slice(0, 1),
                                  tool_choice: 'required' });
  assert.deepEqual(call, { name: 'lookup_ticket', arguments: { ticket_id: 'INC-1042' } });
  assert.deepEqual(await toolCallOf({ model: 'sim-assistant', messages, tools: ticketTools,
                                      tool_choice: 'required' }), call);
});

await test('tool_choice naming a function forces it, even for a plain question', async () => {
  const messages = [{ role: 'user', content: 'What is phishing?' }];
  const plain = await client.chat.completions.create({ model: 'sim-assistant', messages,
                                                       tools: ticketTools });
  assert.equal(plain.choices[0].finish_reason, 'stop');
  assert.ok(plain.choices[0].message.content.length > 20);
  const call = await toolCallOf({ model: 'sim-assistant', messages, tools: ticketTools,
                                  tool_choice: { type: 'function', function: { name: 'open_ticket' } } });
  assert.equal(call.name, 'open_ticket');
  assert.equal(call.arguments.summary, 'What is phishing?');
});

await test('tool_choice naming a function that is not offered is a 400', async () => {
  await assert.rejects(
    client.chat.completions.create({
      model: 'sim-assistant', messages: [{ role: 'user', content: 'What is phishing?' }],
      tools: ticketTools, tool_choice: { type: 'function', function: { name: 'get_weather' } } }),
    (error) => error instanceof OpenAI.BadRequestError && error.status === 400 &&
               /get_weather/.test(error.message));
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
