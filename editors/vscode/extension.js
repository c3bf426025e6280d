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
  // The server's settings (docs/lsp.md, "Configuration"), at start and on every change.
  const dfl = vscode.workspace.getConfiguration('dfl');
  const initializationOptions = {
    train: dfl.get('train', false),
    includePaths: dfl.get('includePaths', []),
    solver: dfl.get('solver', 'kapla'),
    objective: dfl.get('objective', 'energy'),
  };
  client = new LanguageClient('dfl', 'DFL language server', { command, args }, {
    documentSelector: [{ scheme: 'file', language: 'dfl' }, { scheme: 'untitled', language: 'dfl' }],
    // Imported files changed outside the editor re-check the schedules that import them.
    // Changed settings reach the server as workspace/didChangeConfiguration.
    initializationOptions,
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/*.dfl'), configurationSection: 'dfl' },
  });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
