-- textsOf(texts, state, calls): the tree texts an invocation's state and call records (flat
-- HGETALL replies) refer to, read from the tree's texts hash: a flat list of ref, text (a text gone
-- is left out). A ref in a record's JSON can only be a field: inside a JSON string every quote is
-- escaped (store/tree-texts.ts).
local function textsOf(texts, state, calls)
  local out, seen = {}, {}
  local function add(ref)
    if seen[ref] then return end
    seen[ref] = true
    local text = redis.call('HGET', texts, ref)
    if text then
      table.insert(out, ref)
      table.insert(out, text)
    end
  end
  for i = 1, #state, 2 do
    if state[i] == 'outputRef' or state[i] == 'outputTextRef' then add(state[i + 1]) end
  end
  for i = 2, #calls, 2 do
    for ref in string.gmatch(calls[i], '"contentRef":"(%x+)"') do add(ref) end
  end
  return out
end
