// The DFL extension's client: starts `dflc lsp` on stdio for .dfl files and
// lets vscode-languageclient do the rest (every feature is the server's).
'use strict';
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration('dfl.server');
  const command = config.get('path', 'dflc');
  const args = ['lsp', ...config.get('extraArgs', [])];
  client = new LanguageClient('dfl', 'DFL language server', { command, args }, {
    documentSelector: [{ scheme: 'file', language: 'dfl' }, { scheme: 'untitled', language: 'dfl' }],
    // Imported files changed outside the editor re-check the schedules that import them.
    // `dfl.solver` and `dfl.objective` reach the server as workspace/didChangeConfiguration.
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/*.dfl'), configurationSection: 'dfl' },
  });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
