-- storeTexts(texts, root, argv, from): stores a step's tree texts (store/tree-texts.ts) in the
-- tree's texts hash, each once: argv from `from` holds their count, then ref, text pairs. While the
-- root lives the hash lives as long as the root's hash (deadline + retention from its creation);
-- finish extends it once the root ended. Returns the index of the argument after them.
local function storeTexts(texts, root, argv, from)
  local n = tonumber(argv[from] or '0')
  for i = from + 1, from + 2 * n, 2 do redis.call('HSETNX', texts, argv[i], argv[i + 1]) end
  if n > 0 then
    local want = redis.call('PTTL', root)
    if want > redis.call('PTTL', texts) then redis.call('PEXPIRE', texts, want) end
  end
  return from + 1 + 2 * n
end
