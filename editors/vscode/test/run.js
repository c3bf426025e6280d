// Tests of the extension without VS Code: the TextMate grammar tokenized by
// VS Code's own engine (vscode-textmate + the Oniguruma wasm) on an example,
// and the client started with a stand-in `vscode` module to see what it runs.
// Usage: node test/run.js   (ctest runs `npm ci` first)
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const Module = require('module');
const oniguruma = require('vscode-oniguruma');
const textmate = require('vscode-textmate');

const root = path.join(__dirname, '..');

async function grammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => textmate.parseRawGrammar(
      fs.readFileSync(path.join(root, 'syntaxes/dfl.tmLanguage.json'), 'utf8'), 'dfl.tmLanguage.json'),
  });
  const g = await registry.loadGrammar('source.dfl');
  // The scopes of each token of a line, as "text:scope" for the innermost scope.
  let stack = textmate.INITIAL;
  const scopes = (line) => {
    const r = g.tokenizeLine(line, stack);
    stack = r.ruleStack;
    return r.tokens.map((t) => `${line.slice(t.startIndex, t.endIndex)}:${t.scopes[t.scopes.length - 1]}`);
  };
  const has = (line, token) => assert.ok(scopes(line).includes(token), `${line}: ${JSON.stringify(scopes(line))} lacks ${token}`);
  has('schedule for quicknet on quick_node {', 'schedule:keyword.other.declaration.dfl');
  has('schedule for quicknet on quick_node {', 'quicknet:entity.name.type.dfl');
  has('  layer conv1 {', 'layer:keyword.other.dfl');
  has('      tensor ifm [N=1, C=3, Xi=3, Yi=1];', 'tensor:keyword.control.directive.dfl');
  has('      tensor ifm [N=1, C=3, Xi=3, Yi=1];', 'ifm:variable.language.role.dfl');
  has('      tensor ifm [N=1, C=3, Xi=3, Yi=1];', 'Xi:variable.parameter.dimension.dfl');
  // A schedule on a cluster/core DSA.
  has('  subgraph sg0 = conv1, pool1 {', 'subgraph:keyword.other.dfl');
  has('    split X by 56;', 'split:keyword.control.directive.dfl');
  has('  order dfs;', 'dfs:constant.language.dfl');
  has('  instance sg0[*] {', 'instance:keyword.other.dfl');
  has('    scope GB;', 'GB:constant.language.dfl');
  has('      stack Yo += 1, Yi += 1 repl 8;', 'repl:keyword.control.directive.dfl');
  has('  level REGF { capacity = 64 B; }', 'REGF:entity.name.section.dfl');
  has('  level REGF { capacity = 64 B; }', 'B:keyword.other.unit.dfl');
  has('  conv1 = conv(data, K=64, R=3, S=3, pad=1);', 'conv1:entity.name.function.dfl');
  has('  conv1 = conv(data, K=64, R=3, S=3, pad=1);', 'conv:support.function.dfl');
  has('  // a comment', '// a comment:comment.line.double-slash.dfl');
  has('import "net.dfl";', 'import:keyword.other.dfl');
  // Every line of the examples tokenizes (no grammar error on real files).
  for (const file of ['quickstart/schedule.dfl', 'quickstart/hw.dfl', 'quickstart/net.dfl', 'mistakes/mistakes.dfl']) {
    stack = textmate.INITIAL;
    for (const line of fs.readFileSync(path.join(root, '../../examples', file), 'utf8').split('\n')) scopes(line);
  }
}

async function client() {
  let started;
  const fakeVscode = {
    workspace: {
      getConfiguration: () => ({ get: (key, def) => def }),
      createFileSystemWatcher: (glob) => ({ glob }),
    },
  };
  class LanguageClient {
    constructor(id, name, server, options) { started = { id, server, options }; }
    start() { return Promise.resolve(); }
    stop() { return Promise.resolve(); }
    dispose() {}
  }
  const load = Module._load;
  Module._load = function (request, ...rest) {
    if (request === 'vscode') return fakeVscode;
    if (request === 'vscode-languageclient/node') return { LanguageClient };
    return load.call(this, request, ...rest);
  };
  try {
    const ext = require(path.join(root, 'extension.js'));
    const subscriptions = [];
    await ext.activate({ subscriptions });
    assert.deepStrictEqual(started.server, { command: 'dflc', args: ['lsp'] });
    assert.deepStrictEqual(started.options.documentSelector[0], { scheme: 'file', language: 'dfl' });
    assert.strictEqual(started.options.synchronize.fileEvents.glob, '**/*.dfl');
    assert.strictEqual(started.options.synchronize.configurationSection, 'dfl');
    // The settings go to the server at start, with the manifest's defaults.
    assert.deepStrictEqual(started.options.initializationOptions,
      { train: false, includePaths: [], solver: 'kapla', objective: 'energy' });
    assert.strictEqual(subscriptions.length, 1);
  } finally {
    Module._load = load;
  }
  // The manifest ties .dfl to the grammar and the language configuration.
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.deepStrictEqual(manifest.contributes.languages[0].extensions, ['.dfl']);
  const settings = manifest.contributes.configuration.properties;
  assert.strictEqual(settings['dfl.train'].default, false);
  assert.deepStrictEqual(settings['dfl.includePaths'].default, []);
  assert.ok(fs.existsSync(path.join(root, manifest.contributes.grammars[0].path)));
  assert.ok(fs.existsSync(path.join(root, manifest.contributes.languages[0].configuration)));
}

grammar().then(client).then(() => console.log('editors/vscode: ok')).catch((e) => {
  console.error(e);
  process.exit(1);
});
