-- Minimal Neovim (0.7+) config for `dflc lsp`; tests/nvim/test.lua runs with it
-- and docs/lsp.md shows it. DFLC is the dflc binary (default: `dflc` on PATH).
vim.cmd([[autocmd BufRead,BufNewFile *.dfl setfiletype dfl]])
vim.cmd([[autocmd FileType dfl lua DflcAttach()]])

local dflc_client_id = nil
function DflcAttach()
  local buf = vim.api.nvim_get_current_buf()
  if dflc_client_id == nil then
    local file = vim.api.nvim_buf_get_name(buf)
    dflc_client_id = vim.lsp.start_client({
      name = 'dflc',
      cmd = { os.getenv('DFLC') or 'dflc', 'lsp' },
      root_dir = vim.fn.fnamemodify(file, ':p:h'),
    })
  end
  vim.lsp.buf_attach_client(buf, dflc_client_id)
end
