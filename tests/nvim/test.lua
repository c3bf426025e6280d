-- The real Neovim client against `dflc lsp` (issue 5). Run by ctest as
--   DFLC=build/tools/dflc nvim --headless --clean -u tests/nvim/init.lua \
--     -c 'luafile tests/nvim/test.lua'   (DFL_INVALID=tests/lsp-client/invalid-schedule.dfl)
-- Diagnostics = dflc check's, edit to valid, hover, docs/lsp.md shows init.lua verbatim, formatting = dflc fmt's.
-- It exits 0 (qall!) on success, 1 (cquit 1) with a message on failure.
local dflc = os.getenv('DFLC') or 'dflc'
local src = os.getenv('DFL_INVALID') -- tests/lsp-client/invalid-schedule.dfl

local function fail(msg)
  io.stderr:write('nvim-client: FAIL: ' .. msg .. '\n')
  vim.cmd('cquit 1')
end

-- Overall guard: never hang, whatever the server does.
local guard = vim.loop.new_timer()
guard:start(90000, 0, vim.schedule_wrap(function() fail('overall timeout (90 s)') end))

local function check(cond, msg) if not cond then fail(msg) end end

local ok, err = xpcall(function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local path = dir .. '/invalid-schedule.dfl'
  vim.fn.writefile(vim.fn.readfile(src), path)

  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == 'dfl', 'filetype is not dfl')

  local function clients() return vim.lsp.buf_get_clients(buf) end
  check(vim.wait(20000, function() return #vim.tbl_values(clients()) > 0 end, 50), 'no LSP client attached')

  -- 1. Diagnostics of the invalid file.
  check(vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 50),
    'no diagnostics within 20 s')
  local diags = vim.diagnostic.get(buf)
  check(#diags == 1, 'expected 1 diagnostic, got ' .. #diags)
  local d = diags[1]
  -- REGF of layer f holds ifm [C=4] + wgt [K=2, C=4] + ofm [K=2] = 4 + 8 + 2
  -- = 14 words = 28 B > capacity 16 B: E0801 on the REGF block, from `REGF {`
  -- on line 18 (1-based; network 1-5, blank, hardware 7-14, blank, `schedule`
  -- 16, `layer f {` 17), column 5 (after 4 spaces) to its `}` on line 22,
  -- column 5 (exclusive end column 6). 0-based: (17, 4) .. (21, 5).
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  check(code == 'E0801', 'code ' .. tostring(code) .. ' ~= E0801')
  check(d.lnum == 17 and d.col == 4 and d.end_lnum == 21 and d.end_col == 5,
    string.format('range (%d,%d)..(%d,%d) ~= (17,4)..(21,5)', d.lnum, d.col, d.end_lnum, d.end_col))
  check(d.severity == vim.diagnostic.severity.ERROR, 'not an error')

  -- The same as `dflc check --format json` (1-based line/column there).
  local out = vim.fn.system({ dflc, 'check', '--format', 'json', path })
  local cli = vim.fn.json_decode(out).diagnostics
  check(#cli == #diags, 'dflc check reports ' .. #cli .. ' diagnostics, the client ' .. #diags)
  for i, c in ipairs(cli) do
    local n = diags[i]
    local ncode = n.code or (n.user_data and n.user_data.lsp and n.user_data.lsp.code)
    check(c.code == ncode and c.range.start.line - 1 == n.lnum and c.range.start.column - 1 == n.col
      and c.range['end'].line - 1 == n.end_lnum and c.range['end'].column - 1 == n.end_col,
      'differs from dflc check: ' .. out)
  end

  -- 2. Make it valid: C=2 in REGF's ifm and wgt (2 + 4 + 2 = 8 words = 16 B,
  -- exactly the capacity) and step C by 2. Lines 19-20 (1-based) replaced,
  -- the update inserted before the `}` on line 22.
  vim.api.nvim_buf_set_lines(buf, 18, 20, true,
    { '      tensor ifm [C=2];', '      tensor wgt [K=2, C=2];' })
  vim.api.nvim_buf_set_lines(buf, 21, 21, true, { '      update C += 2;' })
  check(vim.wait(20000, function() return #vim.diagnostic.get(buf) == 0 end, 50),
    'diagnostics did not clear: ' .. vim.inspect(vim.diagnostic.get(buf)))

  -- 3. Hover on the layer name `f` of `  f = fc(d, K=2);` (line 4, 0-based 3,
  -- character 2): fc from C=4 to K=2 with batch 1 is 4 x 2 = 8 MACs.
  local params = { textDocument = vim.lsp.util.make_text_document_params(buf),
                   position = { line = 3, character = 2 } }
  local res = vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, 20000)
  check(res ~= nil, 'hover timed out')
  local text = ''
  for _, r in pairs(res) do
    if r.result and r.result.contents then
      local c = r.result.contents
      text = text .. (type(c) == 'table' and (c.value or vim.inspect(c)) or c)
    end
  end
  check(text:find('MACs: 8 ', 1, true) ~= nil, 'hover lacks "MACs: 8 ": ' .. text)

  -- 4. docs/lsp.md shows this init.lua verbatim (so the documented config is the tested one).
  local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
  local init = table.concat(vim.fn.readfile(here .. '/init.lua'), '\n')
  local docs = table.concat(vim.fn.readfile(here .. '/../../docs/lsp.md'), '\n')
  check(docs:find('```lua\n' .. init .. '\n```', 1, true) ~= nil,
    'docs/lsp.md does not show tests/nvim/init.lua verbatim in a ```lua block')

  -- 5. Formatting a non-canonical buffer gives what `dflc fmt` prints.
  local ugly = { 'network  small{', 'batch N=1;', '  input d [C=4,X=1,Y=1];', ' f = fc(d,K=2);}' }
  local upath = dir .. '/ugly.dfl'
  vim.fn.writefile(ugly, upath)
  local expected = vim.fn.systemlist({ dflc, 'fmt', upath })
  check(vim.v.shell_error == 0, 'dflc fmt failed')
  check(not vim.deep_equal(expected, ugly), 'dflc fmt left the input as it was; the test proves nothing')
  vim.cmd('edit ' .. vim.fn.fnameescape(upath))
  local ubuf = vim.api.nvim_get_current_buf()
  check(vim.wait(20000, function() return #vim.lsp.buf_get_clients(ubuf) > 0 end, 50), 'no client on ugly.dfl')
  vim.lsp.buf.formatting_sync(nil, 20000) -- 0.7's API (vim.lsp.buf.format is 0.8+)
  local got = vim.api.nvim_buf_get_lines(ubuf, 0, -1, true)
  check(vim.deep_equal(got, expected),
    'formatted buffer:\n' .. table.concat(got, '\n') .. '\n~= dflc fmt:\n' .. table.concat(expected, '\n'))
end, debug.traceback)

if not ok then fail(tostring(err)) end
io.stdout:write('nvim-client: OK\n')
vim.cmd('qall!')
