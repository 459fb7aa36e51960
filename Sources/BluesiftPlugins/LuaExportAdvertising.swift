import BluesiftWire

/// Advertising plugins as Wireshark Lua (docs/plugin-advertising-design.md §11, checked with
/// tshark 4.0): Manufacturer Specific Data (CSS Part A §1.4) by company id through
/// btcommon's `btcommon.eir_ad.manufacturer_company_id` table, which hands a dissector the
/// bytes after the company id; Service Data (CSS Part A §1.11), for which Wireshark 4.0 has
/// no table, by a postdissector walking `btcommon.eir_ad.entry.service_data` field infos.
/// Rules the table cannot take (`company: any`, `with_company`, `name`/`uuid` filters, a
/// plugin reading `_rssi` or `_name`, which btcommon dissects after the data) go through
/// the postdissector too; the file header says which.
extension LuaGen {
    /// The rule tables and the header lines of an advertising plugin.
    mutating func advertisingTables() throws(PluginError) -> (header: [String], tables: String) {
        // bluesift's order (PluginSet): per target the most specific rule first, then file order.
        let rules = plugin.matches.compactMap(\.advertising)
        let order = rules.indices.sorted { a, b in
            rules[a].specificity != rules[b].specificity ? rules[a].specificity > rules[b].specificity : a < b
        }
        let lateContext = plugin.contextUse.contains("_rssi") || plugin.contextUse.contains("_name")
        func late(_ r: AdvertisingMatch) -> Bool {
            if case .company(nil) = r.target { return true }
            return r.withCompany || r.name != nil || r.uuid != nil || r.also != nil || lateContext
        }
        var rows: [String] = []
        var skipped: [String] = []
        var byCompany: [(UInt16, [Int])] = []
        var any: [Int] = []
        var bySD: [(String, [Int])] = []
        var luaIndex: [Int: Int] = [:]
        for i in order {
            let r = rules[i]
            var parts: [String] = []
            if let s = r.size { parts.append("size = {\(s.lowerBound), \(s.upperBound)}") }
            parts.append("prefix = \(Self.luaBytes(r.prefix))")
            if !r.prefixMask.isEmpty { parts.append("mask = \(Self.luaBytes(r.prefixMask))") }
            parts.append("with_company = \(r.withCompany)")
            if let re = r.name {
                guard let pats = Self.luaPatterns(re) else {
                    skipped.append("the rule \(r.target)\(r.name.map { " name \"\($0)\"" } ?? ""): its name regex has no Lua pattern form, so the rule is not exported")
                    continue
                }
                parts.append("names = {" + pats.map(Self.luaString).joined(separator: ", ") + "}")
            }
            if let u = r.uuid { parts.append("uuid = \(Self.luaString(u.description))") }
            parts.append("ordinal = \(i)") // `_rule`: the rule's index among the plugin's, file order
            if let a = r.also {
                switch a.target {
                case .company(let c?): parts.append("also = {company = \(c), prefix = \(Self.luaBytes(a.prefix))}")
                case .serviceData(let u): parts.append("also = {sd = \(Self.luaString(u.description)), prefix = \(Self.luaBytes(a.prefix))}")
                case .company(nil): break
                }
            }
            rows.append("  {" + parts.joined(separator: ", ") + "},")
            luaIndex[i] = rows.count
            switch r.target {
            case .company(let c?):
                if let k = byCompany.firstIndex(where: { $0.0 == c }) { byCompany[k].1.append(rows.count) } else { byCompany.append((c, [rows.count])) }
            case .company(nil): any.append(rows.count)
            case .serviceData(let u):
                let key = u.description
                if let k = bySD.firstIndex(where: { $0.0 == key }) { bySD[k].1.append(rows.count) } else { bySD.append((key, [rows.count])) }
            }
        }
        // A company id goes to the table unless one of its rules must wait for the whole report.
        var tableIDs: [UInt16] = [], postIDs: [UInt16] = []
        for (c, _) in byCompany {
            let own = order.filter { if case .company(c?) = rules[$0].target, luaIndex[$0] != nil { true } else { false } }
            if own.contains(where: { late(rules[$0]) }) { postIDs.append(c) } else { tableIDs.append(c) }
        }
        func hex(_ c: UInt16) -> String { Hex.fixed(UInt64(c), width: 4) }
        func list(_ l: [Int]) -> String { "{" + l.map(String.init).joined(separator: ", ") + "}" }
        var t = "\n-- Advertising rules (bluesift's order: most specific first, then file order).\n"
        t += "local RULES = {\n" + rows.joined(separator: "\n") + "\n}\n"
        t += "local ADV_COMPANY = {" + byCompany.map { "[\(hex($0.0))] = \(list($0.1))" }.joined(separator: ", ") + "}\n"
        t += "local ADV_ANY = \(list(any))\n"
        t += "local ADV_SD = {" + bySD.map { "[\(Self.luaString($0.0))] = \(list($0.1))" }.joined(separator: ", ") + "}\n"
        t += "local TABLE_IDS = {" + tableIDs.map(hex).joined(separator: ", ") + "}\n"
        t += "local POST_COMPANY = {" + postIDs.map { "[\(hex($0))] = true" }.joined(separator: ", ") + "}\n"
        t += "local HAS_POST_COMPANY = \(!postIDs.isEmpty || !any.isEmpty)\n"
        t += "local HAS_SD = \(!bySD.isEmpty)\n"
        t += "local NEEDS_NAMES = \(rules.contains { $0.name != nil } || plugin.contextUse.contains("_name"))\n"
        t += "local PLUGIN_NAME = \(Self.luaString(plugin.name))\n"

        var h: [String] = []
        let errorField = fieldIndex["\(proto).error"]?.index == 3 ? "\(proto).error" : "\(proto)._error"
        h.append("Advertising data: fields \(proto).message (message name), \(errorField) (why a payload is")
        h.append("malformed, also expert info); top-level fields as \(proto).FIELD, a message's fields as")
        h.append("\(proto).MESSAGE.FIELD (bit fields and flattened object lists lifted to that level, as bluesift")
        h.append("shows them; a name bluesift numbers, button_1, button_2, is one field occurring several times).")
        h.append("Scaled numbers are doubles with their decimals and the unit in the label; a sentinel (na) or")
        h.append("a value failing `valid:` is an \"n/a\" text item without a field value; context, computed and")
        h.append("joined values are generated items.")
        if !tableIDs.isEmpty {
            h.append("Manufacturer data of company \(tableIDs.map(hex).joined(separator: ", ")): registered on")
            h.append("btcommon.eir_ad.manufacturer_company_id (\"Decode As\" works).")
        }
        var after: [String] = []
        if !bySD.isEmpty { after.append("service data " + bySD.map(\.0).joined(separator: ", ") + " (Wireshark 4.0 has no service-data table)") }
        if !any.isEmpty { after.append("manufacturer data of any company (company: any has no table entry)") }
        if !postIDs.isEmpty {
            let why = lateContext ? "the plugin reads _rssi or _name, dissected after the data" : "a rule needs with_company or a name/uuid filter"
            after.append("company \(postIDs.map(hex).joined(separator: ", ")) (\(why))")
        }
        if !after.isEmpty {
            h.append("Dissected after the fact by the postdissector \(proto)._after (display filters on the")
            h.append("fields work; \"Decode As\" does not): " + after.joined(separator: "; ") + ".")
        }
        if rules.contains(where: { $0.name != nil }) {
            h.append("name: filters are checked as Lua patterns translated from the regex, against the report's")
            h.append("local name, else the last one the address advertised earlier in the capture.")
        }
        if rules.contains(where: { $0.uuid != nil }) {
            h.append("uuid: filters are checked against the service UUID lists of the same packet.")
        }
        for s in skipped { h.append("Not exported: " + s + ".") }
        if plugin.types.contains(where: { $0.fields.contains { if case .real(let k, _) = $0.kind, case .ieee(let w) = k, w < 8 { true } else { false } } }) {
            h.append("IEEE 754 half/single values are shown with 7 significant digits.")
        }
        for n in notes { h.append(n) }
        h.append("")
        return (h, t)
    }

    /// A regex (anchored, whole name) as Lua patterns, one per alternative: literals, `.`,
    /// classes, `\d \w \s`, `* + ?` on one character, groups of alternatives without
    /// quantifiers. nil: not expressible (the rule is then left out and the header says so).
    static func luaPatterns(_ re: String) -> [String]? {
        var chars = Array(re)
        // (?i) in front: case-insensitive, each letter a class of both cases.
        var fold = false
        if chars.starts(with: Array("(?i)")) { fold = true; chars.removeFirst(4) }
        if chars.first == "^" { chars.removeFirst() }
        if chars.last == "$", chars.count >= 2, chars[chars.count - 2] != "\\" { chars.removeLast() }
        var i = 0
        let magic: Set<Character> = ["^", "$", "(", ")", "%", ".", "[", "]", "*", "+", "-", "?"]
        func escape(_ c: Character) -> String {
            if fold, c.isLetter, c.isASCII, c.lowercased() != c.uppercased() { return "[" + c.lowercased() + c.uppercased() + "]" }
            return magic.contains(c) ? "%" + String(c) : String(c)
        }
        func esc(_ c: Character) -> String? {
            switch c {
            case "d": "%d"
            case "D": "%D"
            case "s": "%s"
            case "S": "%S"
            case "w": "[%w_]"
            case "W": "[^%w_]"
            default: c.isLetter || c.isNumber ? nil : escape(c)
            }
        }
        func alternatives() -> [String]? {
            var out: [String] = []
            guard var cur = sequence() else { return nil }
            out.append(contentsOf: cur)
            while i < chars.count, chars[i] == "|" {
                i += 1
                guard let next = sequence() else { return nil }
                cur = next
                out.append(contentsOf: cur)
            }
            return out.count <= 64 ? out : nil
        }
        func sequence() -> [String]? {
            var acc = [""]
            while i < chars.count, chars[i] != "|", chars[i] != ")" {
                var opts: [String]
                var single = true
                let c = chars[i]
                i += 1
                switch c {
                case "(":
                    if i + 1 < chars.count, chars[i] == "?", chars[i + 1] == ":" { i += 2 }
                    guard let inner = alternatives(), i < chars.count, chars[i] == ")" else { return nil }
                    i += 1
                    opts = inner
                    single = false
                case "[":
                    var cls = "["
                    if i < chars.count, chars[i] == "^" { cls += "^"; i += 1 }
                    var first = true
                    while i < chars.count, chars[i] != "]" || first {
                        let d = chars[i]
                        i += 1
                        first = false
                        if d == "\\" {
                            guard i < chars.count, let e = esc(chars[i]) else { return nil }
                            i += 1
                            cls += e.hasPrefix("[") ? String(e.dropFirst().dropLast()) : e
                        } else if fold, d.isLetter, d.isASCII, i + 1 < chars.count, chars[i] == "-", chars[i + 1].isLetter, chars[i + 1].isASCII {
                            // a range folded: both cases' ranges
                            let hi = chars[i + 1]
                            i += 2
                            cls += d.lowercased() + "-" + hi.lowercased() + d.uppercased() + "-" + hi.uppercased()
                        } else if d == "-" {
                            cls += "-"
                        } else if d == "[" {
                            return nil
                        } else {
                            if fold, d.isLetter, d.isASCII { cls += d.lowercased() + d.uppercased() } else { cls += d.isLetter || d.isNumber ? String(d) : "%" + String(d) }
                        }
                    }
                    guard i < chars.count else { return nil }
                    i += 1
                    opts = [cls + "]"]
                case "\\":
                    guard i < chars.count, let e = esc(chars[i]) else { return nil }
                    i += 1
                    opts = [e]
                case ".": opts = ["."]
                case "*", "+", "?", "{", "}", "^", "$": return nil
                default: opts = [escape(c)]
                }
                if i < chars.count, "*+?{".contains(chars[i]) {
                    guard single, chars[i] != "{" else { return nil }
                    if i + 1 < chars.count, "?+".contains(chars[i + 1]) { return nil } // lazy, possessive
                    opts = opts.map { $0 + String(chars[i]) }
                    i += 1
                }
                var next: [String] = []
                for a in acc { for o in opts { next.append(a + o) } }
                guard next.count <= 64 else { return nil }
                acc = next
            }
            return acc
        }
        guard let alts = alternatives(), i == chars.count else { return nil }
        return alts.map { "^" + $0 + "$" }
    }

    /// Registration and dispatch of advertising payloads.
    static let advertisingDissector = #"""

        -- The advertising report around a payload (Core 5.4 Vol 4 Part E §7.7.65.2 LE Advertising
        -- Report, §7.7.65.13 LE Extended Advertising Report; a sniffed PDU's AdvA).
        local function field(name) local ok, f = pcall(Field.new, name); if ok then return f end return nil end
        local function all(f) if f == nil then return {} end return {f()} end
        local f_company = field("btcommon.eir_ad.entry.company_id")
        local f_name = field("btcommon.eir_ad.entry.device_name")
        local f_u16, f_u32, f_u128 = field("btcommon.eir_ad.entry.uuid_16"), field("btcommon.eir_ad.entry.uuid_32"), field("btcommon.eir_ad.entry.uuid_128")
        local f_cu32, f_cu128 = field("btcommon.eir_ad.entry.custom_uuid_32"), field("btcommon.eir_ad.entry.custom_uuid_128")
        local f_type = field("btcommon.eir_ad.entry.type")
        local f_addr, f_le_addr = field("bthci_evt.bd_addr"), field("btle.advertising_address")
        local f_rssi, f_addr_type = field("bthci_evt.rssi"), field("bthci_evt.le_peer_address_type")
        local f_rf_rssi, f_nordic_rssi = field("btle_rf.signal_dbm"), field("nordic_ble.rssi")
        local f_evt_type, f_subevent = field("bthci_evt.le_advts_event_type"), field("bthci_evt.le_meta_subevent")

        local function before(list, at)
          local best
          for _, fi in ipairs(list) do if fi.offset < at and (best == nil or fi.offset > best.offset) then best = fi end end
          return best
        end
        local function after(list, at)
          local best
          for _, fi in ipairs(list) do if fi.offset > at and (best == nil or fi.offset < best.offset) then best = fi end end
          return best
        end
        local function address_of(fi)
          local v = 0
          for i = 5, 0, -1 do v = v * 256 + fi.range(i, 1):uint() end   -- little endian on the wire
          return v
        end

        -- Local names by address (first pass), and the name each frame used, for name: filters
        -- and _name when a report has none (bluesift remembers the last one too).
        local names, frame_names = {}, {}
        local claimed_frame, claimed = -1, {}
        function P.init()
          names, frame_names = {}, {}
          claimed_frame, claimed = -1, {}
        end

        local function context(pinfo, at, company)
          local ctx = {company = company}
          local a = before(all(f_addr), at) or before(all(f_le_addr), at)
          if a then ctx.address = address_of(a) end
          local sub = all(f_subevent)
          sub = sub[#sub]
          local legacy = sub ~= nil and sub.value == 2
          -- A legacy report's RSSI follows its data; an extended report's precedes it.
          local rssi = legacy and after(all(f_rssi), at) or before(all(f_rssi), at)
            or before(all(f_rf_rssi), at) or before(all(f_nordic_rssi), at)   -- a sniffer's header
          if rssi then ctx.rssi = rssi.value end
          local t = before(all(f_addr_type), at)
          if t then ctx.address_type = t.value end
          if legacy then
            local e = before(all(f_evt_type), at)
            if e then ctx.pdu = e.value end
          elseif sub ~= nil and sub.value == 13 then
            ctx.pdu = 5
          end
          local own = all(f_name)
          own = own[#own]
          if own then
            ctx.name = own.value
            if ctx.address and not pinfo.visited then names[ctx.address] = ctx.name end
          else
            if not pinfo.visited then frame_names[pinfo.number] = ctx.address and names[ctx.address] or false end
            ctx.name = frame_names[pinfo.number] or nil
          end
          return ctx
        end

        local function uuid_key(range)
          local w = range:len()
          if w == 2 then return string.format("%04x", range:le_uint()) end
          if w == 4 then return string.format("%08x", range:le_uint()) end
          local h = {}
          for i = w - 1, 0, -1 do h[#h + 1] = string.format("%02x", range(i, 1):uint()) end
          local s = table.concat(h)
          if #s ~= 32 then return s end
          if s:sub(9) == "00001000800000805f9b34fb" then
            local v = tonumber(s:sub(1, 8), 16)
            return v <= 0xFFFF and string.format("%04x", v) or s:sub(1, 8)
          end
          return s:sub(1, 8) .. "-" .. s:sub(9, 12) .. "-" .. s:sub(13, 16) .. "-" .. s:sub(17, 20) .. "-" .. s:sub(21, 32)
        end

        -- The service UUID lists (AD types 0x02-0x07, CSS Part A §1.1), not service data's UUIDs.
        local function listed(uuid)
          local types = all(f_type)
          local function in_list(fi) local t = before(types, fi.offset); return t ~= nil and t.value >= 2 and t.value <= 7 end
          for _, fi in ipairs(all(f_u16)) do if in_list(fi) and string.format("%04x", fi.value) == uuid then return true end end
          for _, f in ipairs({f_u32, f_cu32}) do
            for _, fi in ipairs(all(f)) do if in_list(fi) and string.format("%08x", fi.value) == uuid then return true end end
          end
          for _, f in ipairs({f_u128, f_cu128}) do
            for _, fi in ipairs(all(f)) do if in_list(fi) and uuid_key(fi.range) == uuid then return true end end
          end
          return false
        end

        -- `also:`: another structure of the packet (one report per event in practice) with that
        -- company id or service data UUID, its payload starting with the prefix.
        local function carries(tvb, also)
          local function starts(off, n)
            return n >= #also.prefix and (#also.prefix == 0 or tvb(off, #also.prefix):raw() == also.prefix)
          end
          for _, fi in ipairs(all(f_type)) do
            local t, at = fi.value, fi.offset
            if at >= 1 and tvb(at, 1):uint() == t then
              local len = tvb(at - 1, 1):uint()
              if also.company and t == 0xFF and len >= 3 and tvb(at + 1, 2):le_uint() == also.company then
                if starts(at + 3, len - 3) then return true end
              elseif also.sd and (t == 0x16 or t == 0x20 or t == 0x21) then
                local w = t == 0x16 and 2 or t == 0x20 and 4 or 16
                if len >= 1 + w and uuid_key(tvb(at + 1, w)) == also.sd and starts(at + 1 + w, len - 1 - w) then return true end
              end
            end
          end
          return false
        end

        -- The rule's filters (docs/plugin-advertising-design.md §1): size (after the company id),
        -- prefix, name, uuid. False lets the next rule try.
        local function applies(rule, ptvb, ctx)
          local n = ptvb:len() - (rule.with_company and 2 or 0)
          if rule.size and (n < rule.size[1] or n > rule.size[2]) then return false end
          if #rule.prefix > 0 and (ptvb:len() < #rule.prefix or (not rule.mask and ptvb(0, #rule.prefix):raw() ~= rule.prefix)) then return false end
          if rule.mask then   -- `??` bytes of the prefix: compared as (byte & mask) == prefix byte
            for i = 1, #rule.prefix do
              if bit32.band(ptvb(i - 1, 1):uint(), rule.mask:byte(i)) ~= rule.prefix:byte(i) then return false end
            end
          end
          if rule.names then
            if ctx.name == nil then return false end
            local ok = false
            for _, p in ipairs(rule.names) do if ctx.name:match(p) then ok = true; break end end
            if not ok then return false end
          end
          if rule.uuid and not listed(rule.uuid) then return false end
          if rule.also and not (ctx.frame and carries(ctx.frame, rule.also)) then return false end
          return true
        end

        local function show(ptvb, tree, ctx, pinfo)
          local root = tree:add(P, ptvb())
          local msg = decode(ptvb, root, ctx)
          pinfo.cols.info:append(" " .. PROTO .. " " .. msg)
        end

        local function try(list, ptvb_of, tree, ctx, pinfo)
          for _, i in ipairs(list) do
            local rule = RULES[i]
            local ptvb = ptvb_of(rule.with_company)
            if ptvb and applies(rule, ptvb, ctx) then
              ctx.rule = rule.ordinal
              show(ptvb, tree, ctx, pinfo)
              return true
            end
          end
          return false
        end

        -- Manufacturer data by company id: btcommon hands over the bytes after the company id.
        function P.dissector(tvb, pinfo, tree)
          local at = tvb:offset()
          local company
          for _, fi in ipairs(all(f_company)) do if fi.offset + 2 == at then company = fi.value end end
          local list = company and ADV_COMPANY[company]
          if list == nil or POST_COMPANY[company] then return 0 end
          local ctx = context(pinfo, at, company)
          if try(list, function(with_company) if not with_company then return tvb end end, tree, ctx, pinfo) then
            if claimed_frame ~= pinfo.number then claimed_frame, claimed = pinfo.number, {} end
            claimed[at] = true
            return tvb:len()
          end
          return 0
        end

        -- After the fact: service data (no table in Wireshark 4.0), manufacturer data of rules the
        -- table cannot take, and company: any.
        local Q = Proto(PROTO .. "._after", PLUGIN_NAME .. " (advertising data found after the fact)")
        function Q.dissector(tvb, pinfo, tree)
          if NEEDS_NAMES and not pinfo.visited then
            -- Every local name, also from reports without a payload of ours (scan responses).
            for _, fi in ipairs(all(f_name)) do
              local a = before(all(f_addr), fi.offset) or before(all(f_le_addr), fi.offset)
              if a then names[address_of(a)] = fi.value end
            end
          end
          if HAS_POST_COMPANY then
            for _, fi in ipairs(all(f_company)) do
              -- CSS Part A §1.4: length, type 0xFF, company id (2, little endian), payload.
              local off = fi.offset
              if off >= 2 and off + 2 <= tvb:len() and tvb(off - 1, 1):uint() == 0xFF then
                local n = tvb(off - 2, 1):uint() - 3
                local company = fi.value
                if n >= 0 and off + 2 + n <= tvb:len() and not (claimed_frame == pinfo.number and claimed[off + 2]) then
                  -- (an empty payload too: bluesift decodes it, as malformed when it needs bytes)
                  local list = {}
                  if POST_COMPANY[company] then for _, i in ipairs(ADV_COMPANY[company]) do list[#list + 1] = i end end
                  for _, i in ipairs(ADV_ANY) do list[#list + 1] = i end
                  if #list > 0 then
                    local ctx = context(pinfo, off + 2, company)
                    ctx.frame = tvb
                    try(list, function(with_company)
                      if with_company then return tvb(off, n + 2):tvb() end
                      return tvb(off + 2, n):tvb()
                    end, tree, ctx, pinfo)
                  end
                end
              end
            end
          end
          if HAS_SD then
            -- By AD type, not by btcommon.eir_ad.entry.service_data, which an empty payload lacks.
            for _, fi in ipairs(all(f_type)) do
              -- CSS Part A §1.11: length, type 0x16/0x20/0x21, UUID (2/4/16, little endian), data.
              local t = fi.value
              local w = t == 0x16 and 2 or t == 0x20 and 4 or t == 0x21 and 16 or nil
              local at = fi.offset
              if w and at >= 1 and at + 1 + w <= tvb:len() and tvb(at, 1):uint() == t then
                local n = tvb(at - 1, 1):uint() - 1 - w
                local off = at + 1 + w
                local list = n >= 0 and off + n <= tvb:len() and ADV_SD[uuid_key(tvb(at + 1, w))]
                if list then
                  local ctx = context(pinfo, off, -1)   -- bluesift's _company for service data
                  ctx.frame = tvb
                  try(list, function(with_company) if not with_company then return tvb(off, n):tvb() end end, tree, ctx, pinfo)
                end
              end
            end
          end
        end
        if HAS_POST_COMPANY or HAS_SD or NEEDS_NAMES then register_postdissector(Q) end

        local ok, mt = pcall(DissectorTable.get, "btcommon.eir_ad.manufacturer_company_id")
        if ok and mt then for _, c in ipairs(TABLE_IDS) do mt:add(c, P) end end

        """#
}
