local q = Proto("probe_sdpost", "probe sd post")
local g_uuid = ProtoField.uint16("probe_sdpost.uuid", "uuid", base.HEX)
local g_hex = ProtoField.bytes("probe_sdpost.data", "data")
q.fields = { g_uuid, g_hex }
local f_type = Field.new("btcommon.eir_ad.entry.type")
local f_u16 = Field.new("btcommon.eir_ad.entry.uuid_16")
local f_sd = Field.new("btcommon.eir_ad.entry.service_data")
function q.dissector(tvb, pinfo, tree)
  local sds = { f_sd() }
  for _, fi in ipairs(sds) do
    -- the 2 bytes before the service data are its 16-bit UUID (AD type 0x16)
    local r = fi.range
    local off = r:offset()
    local u = tvb(off - 2, 2):le_uint()
    if u == 0xfcd2 then
      local t = tree:add(q, r)
      t:add_le(g_uuid, tvb(off - 2, 2))
      t:add(g_hex, r)
    end
  end
end
register_postdissector(q)
-- Usage (tshark 4.0.17): tshark -X lua_script:probe_service_data_postdissector.lua -r caps/bthome.btsnoop -Y probe_sdpost -T fields -e frame.number -e probe_sdpost.data
--   → every BTHome v2 (0xFCD2) service data payload, found after the fact (126 frames).
