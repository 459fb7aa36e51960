local p = Proto("probe_mfr", "probe mfr")
local f_len = ProtoField.uint16("probe_mfr.len", "len")
local f_hex = ProtoField.bytes("probe_mfr.data", "data")
p.fields = { f_len, f_hex }
function p.dissector(tvb, pinfo, tree)
  local t = tree:add(p, tvb())
  t:add(f_len, tvb:len())
  t:add(f_hex, tvb())
  return tvb:len()
end
DissectorTable.get("btcommon.eir_ad.manufacturer_company_id"):add(0xEC88, p)

local q = Proto("probe_sd", "probe sd")
local g_len = ProtoField.uint16("probe_sd.len", "len")
local g_hex = ProtoField.bytes("probe_sd.data", "data")
q.fields = { g_len, g_hex }
function q.dissector(tvb, pinfo, tree)
  local t = tree:add(q, tvb())
  t:add(g_len, tvb:len())
  t:add(g_hex, tvb())
  return tvb:len()
end
DissectorTable.get("bluetooth.uuid"):add("fcd2", q)
-- Usage (tshark 4.0.17): tshark -X lua_script:probe_tables.lua -r caps/govee-016.btsnoop -T fields -e probe_mfr.len -e probe_mfr.data
--   → "6  00034db26400": the manufacturer table hands over the bytes after the company id.
-- The bluetooth.uuid registration ("fcd2") is never called for AD service data (caps/bthome-082.btsnoop):
-- Wireshark 4.0 has no service-data dissector table; see probe_service_data_postdissector.lua.
