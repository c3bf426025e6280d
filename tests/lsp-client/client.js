// End-to-end test of `dflc lsp` with a real LSP client library
// (vscode-languageserver-protocol, what VS Code's client is built on).
// Usage: node client.js path/to/dflc
// Opens invalid-schedule.dfl (REGF holds 28 B of tensors in 16 B), waits for
// diagnostics, checks their range, code and related information, edits the
// schedule valid with incremental changes, and checks they clear. Then asks
// the solver (code action) to complete a partial schedule and applies it.
'use strict';
const assert = require('assert');
const cp = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const lsp = require('vscode-languageserver-protocol/node');

const dflc = process.argv[2];
if (!dflc) {
  console.error('usage: node client.js DFLC');
  process.exit(2);
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dflc-lsp-client-'));
  const file = path.join(dir, 'schedule.dfl');
  const text = fs.readFileSync(path.join(__dirname, 'invalid-schedule.dfl'), 'utf8');
  fs.writeFileSync(file, text);
  const uri = 'file://' + file;

  const server = cp.spawn(dflc, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const connection = lsp.createProtocolConnection(
    new lsp.StreamMessageReader(server.stdout), new lsp.StreamMessageWriter(server.stdin));
  const waiting = [];
  connection.onNotification(lsp.PublishDiagnosticsNotification.type, (params) => {
    if (params.uri !== uri) return;
    const w = waiting.shift();
    if (w) w(params);
  });
  const nextDiagnostics = () => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no publishDiagnostics within 20 s')), 20000);
    waiting.push((p) => { clearTimeout(timer); resolve(p); });
  });
  connection.listen();

  const init = await connection.sendRequest(lsp.InitializeRequest.type,
    { processId: process.pid, rootUri: 'file://' + dir, capabilities: {} });
  assert.strictEqual(init.capabilities.textDocumentSync.change, lsp.TextDocumentSyncKind.Incremental);
  assert.strictEqual(init.capabilities.hoverProvider, true);
  await connection.sendNotification(lsp.InitializedNotification.type, {});

  let published = nextDiagnostics();
  await connection.sendNotification(lsp.DidOpenTextDocumentNotification.type,
    { textDocument: { uri, languageId: 'dfl', version: 1, text } });
  let p = await published;
  // The REGF block of layer f, `REGF {` on line 18 through its `}` on line 22
  // (0-based 17:4 to 21:5): ifm [C=4] 4 words + wgt [K=2, C=4] 8 + ofm [K=2] 2
  // = 14 words x 2 B = 28 B against REGF's 16 B.
  assert.strictEqual(p.version, 1);
  assert.strictEqual(p.diagnostics.length, 1, JSON.stringify(p.diagnostics));
  const d = p.diagnostics[0];
  assert.strictEqual(d.code, 'E0801');
  assert.strictEqual(d.severity, lsp.DiagnosticSeverity.Error);
  assert.deepStrictEqual(d.range, { start: { line: 17, character: 4 }, end: { line: 21, character: 5 } });
  assert.match(d.message, /28 B of 16 B/);
  // The note points at the capacity: `capacity = 16 B;` on line 11, bytes 16-31.
  assert.strictEqual(d.relatedInformation.length, 1);
  assert.strictEqual(d.relatedInformation[0].location.uri, uri);
  assert.deepStrictEqual(d.relatedInformation[0].location.range,
    { start: { line: 10, character: 15 }, end: { line: 10, character: 31 } });

  // Make it valid: halve C in REGF (2 + 4 + 2 = 8 words = 16 B, exactly the
  // capacity) and walk C in two steps. Three incremental changes, in order:
  // the 4 of `      tensor ifm [C=4];` is character 6 + 14 = 20, that of
  // `      tensor wgt [K=2, C=4];` 6 + 19 = 25.
  published = nextDiagnostics();
  await connection.sendNotification(lsp.DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: [
      { range: { start: { line: 18, character: 20 }, end: { line: 18, character: 21 } }, text: '2' },
      { range: { start: { line: 19, character: 25 }, end: { line: 19, character: 26 } }, text: '2' },
      { range: { start: { line: 21, character: 0 }, end: { line: 21, character: 0 } }, text: '      update C += 2;\n' },
    ],
  });
  p = await published;
  assert.strictEqual(p.version, 2);
  assert.deepStrictEqual(p.diagnostics, []);

  // Hover on the REGF block now shows it full: 16 B of 16 B.
  const hover = await connection.sendRequest(lsp.HoverRequest.type,
    { textDocument: { uri }, position: { line: 17, character: 5 } });
  assert.match(hover.contents.value, /occupancy: 16 B of 16 B \(100\.0%\)/);

  // Code action on a partial schedule (GBUF left out): the solver runs off the
  // server's main loop; applying its one edit (the GBUF block inserted) leaves no diagnostics.
  const partialText = text.replace(/    GBUF \{[^}]*\}\n/, '').replace('capacity = 16 B', 'capacity = 64 B')
    .replace('tensor ifm [C=4];', 'tensor ifm [C=2];').replace('tensor wgt [K=2, C=4];', 'tensor wgt [K=2, C=2];')
    .replace('      tensor ofm [K=2];\n    }', '      tensor ofm [K=2];\n      update C += 2;\n    }');
  const partialUri = 'file://' + path.join(dir, 'partial.dfl');
  const partialWaiters = [];
  connection.onNotification(lsp.PublishDiagnosticsNotification.type, (params) => {
    const w = params.uri === partialUri && partialWaiters.shift();
    if (w) w(params);
  });
  let waitPartial = new Promise((resolve) => partialWaiters.push(resolve));
  await connection.sendNotification(lsp.DidOpenTextDocumentNotification.type,
    { textDocument: { uri: partialUri, languageId: 'dfl', version: 1, text: partialText } });
  p = await waitPartial;
  assert.deepStrictEqual(p.diagnostics.map((x) => x.code), ['W0830']);
  const actions = await connection.sendRequest(lsp.CodeActionRequest.type, {
    textDocument: { uri: partialUri }, range: p.diagnostics[0].range, context: { diagnostics: p.diagnostics } });
  const fill = actions.find((a) => a.title.startsWith('Fill in missing directives ('));
  assert.ok(fill, JSON.stringify(actions));
  assert.strictEqual(fill.edit.changes[partialUri].length, 1);
  waitPartial = new Promise((resolve) => partialWaiters.push(resolve));
  const edit = fill.edit.changes[partialUri][0];
  await connection.sendNotification(lsp.DidChangeTextDocumentNotification.type,
    { textDocument: { uri: partialUri, version: 2 }, contentChanges: [{ range: edit.range, text: edit.newText }] });
  p = await waitPartial;
  assert.strictEqual(p.version, 2);
  assert.deepStrictEqual(p.diagnostics, []);

  await connection.sendRequest(lsp.ShutdownRequest.type);
  const exited = new Promise((resolve) => server.on('exit', resolve));
  await connection.sendNotification(lsp.ExitNotification.type);
  assert.strictEqual(await exited, 0);
  connection.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log('lsp-client: ok');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
