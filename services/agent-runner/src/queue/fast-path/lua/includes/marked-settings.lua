-- markedSettings(argv, mark): the settings the mesh appends to a BullMQ step as its last argument,
-- decoded from JSON, when that argument starts with `mark`; else nil (BullMQ's own callers append
-- nothing).
local function markedSettings(argv, mark)
  local last = argv[#argv]
  if type(last) == 'string' and string.sub(last, 1, #mark) == mark then
    return cjson.decode(string.sub(last, #mark + 1))
  end
  return nil
end
