// Latency of `dflc lsp`: time from a didChange to the publishDiagnostics for
// that version, over stdio as an editor sees it. Each edit appends or removes
// a space at the end of the document (so every check is a full re-check of a
// valid schedule), and waits for its diagnostics before the next.
// Then a burst: N edits back to back, timed to the last version's diagnostics.
// Usage: node bench/lsp_latency.js DFLC SCHEDULE.dfl [EDITS]   (bench/run_lsp_bench.sh)
'use strict';
const cp = require('child_process');
const fs = require('fs');
const path = require('path');

const [dflc, file, editsArg] = process.argv.slice(2);
const edits = Number(editsArg || 50);
const text = fs.readFileSync(file, 'utf8');
const uri = 'file://' + path.resolve(file);
const lines = text.split('\n');
const lastLine = lines.length - 1;   // the empty string after the final newline

const server = cp.spawn(dflc, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
let buffer = Buffer.alloc(0);
const waiters = new Map();   // version -> resolve
let initDone;
server.stdout.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const header = buffer.indexOf('\r\n\r\n');
    if (header < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.slice(0, header).toString())[1]);
    if (buffer.length < header + 4 + length) return;
    const msg = JSON.parse(buffer.slice(header + 4, header + 4 + length).toString());
    buffer = buffer.slice(header + 4 + length);
    if (msg.id === 0) initDone();
    if (msg.method === 'textDocument/publishDiagnostics' && msg.params.uri === uri) {
      if (msg.params.diagnostics.some((d) => d.severity === 1))
        throw new Error('the schedule is not valid: ' + JSON.stringify(msg.params.diagnostics[0]));
      const w = waiters.get(msg.params.version);
      if (w) { waiters.delete(msg.params.version); w(); }
    }
  }
});
function send(msg) {
  const body = JSON.stringify(Object.assign({ jsonrpc: '2.0' }, msg));
  server.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}
const published = (version) => new Promise((resolve) => waiters.set(version, resolve));
function change(version) {
  // Odd versions add a space on the last line, even ones remove it.
  const range = version % 2
    ? { start: { line: lastLine, character: 0 }, end: { line: lastLine, character: 0 } }
    : { start: { line: lastLine, character: 0 }, end: { line: lastLine, character: 1 } };
  send({ method: 'textDocument/didChange',
         params: { textDocument: { uri, version }, contentChanges: [{ range, text: version % 2 ? ' ' : '' }] } });
}
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];

async function main() {
  send({ id: 0, method: 'initialize', params: { capabilities: {} } });
  await new Promise((resolve) => { initDone = resolve; });
  send({ method: 'initialized', params: {} });
  let t = process.hrtime.bigint();
  let p = published(0);
  send({ method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'dfl', version: 0, text } } });
  await p;
  const openMs = Number(process.hrtime.bigint() - t) / 1e6;
  const times = [];
  for (let v = 1; v <= edits; ++v) {
    p = published(v);
    t = process.hrtime.bigint();
    change(v);
    await p;
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const burst = 20;
  const last = edits + burst + (edits + burst) % 2;   // an even version: the space removed again
  p = published(last);
  t = process.hrtime.bigint();
  for (let v = edits + 1; v <= last; ++v) change(v);
  await p;
  const burstMs = Number(process.hrtime.bigint() - t) / 1e6;
  console.log(`| document | edits | didOpen → diagnostics | didChange → diagnostics median | p95 | max | burst of ${last - edits} edits → last diagnostics |`);
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  console.log(`| ${path.basename(file)} (${lines.length} lines) | ${edits} | ` +
              `${openMs.toFixed(1)} ms | ${pct(times, 0.5).toFixed(1)} ms | ${pct(times, 0.95).toFixed(1)} ms | ` +
              `${times[times.length - 1].toFixed(1)} ms | ${burstMs.toFixed(1)} ms |`);
  send({ id: 1, method: 'shutdown' });
  send({ method: 'exit' });
}
main().catch((e) => { console.error(e); process.exit(1); });
