extension MeshStats {
    /// The report's Mesh view (JavaScript run in the page, reading `S.mesh`, docs/stats.md):
    /// problems first, then the nodes, the traffic per source → destination with its message
    /// names, the provisioning sessions step by step, and the secure network beacons as one
    /// lane per network (IV index and flags over time).
    public static var reportView: String? {
        #"""
          // ---------- Mesh ----------
          // Nodes, traffic per source → destination, provisioning sessions, secure beacons (stats' mesh).
          var M=S.mesh;
          if(M){
            count('mesh-nodes',M.nodes.length,'mesh nodes');
            addView('mesh','Mesh',function(sec){
              function addr(a){var s=hex4(a);if(a>=0xfffb)s+=' ('+['all-ipt-border-routers','all-proxies','all-friends','all-relays','all-nodes'][a-0xfffb]+')';
                else if(a>=0xc000)s+=' (group)';else if(a>=0x8000)s+=' (virtual)';else if(a===0)s+=' (unassigned)';return s;}
              function table(id,cols){var t=el('table',{id:id}),h=el('tr');cols.forEach(function(c){h.appendChild(el('th',null,c));});t.appendChild(h);return t;}
              function row(t,attrs){var tr=el('tr',attrs);t.appendChild(tr);return function(v,cls){var d=el('td',{'class':cls||''},v==null?'':v);tr.appendChild(d);return d;};}
              sec.appendChild(el('p',{'class':'mut',id:'mesh-counts'},M.pdus.toLocaleString('en')+' mesh PDUs · '+M.beacons+' beacons · '+M.network_pdus+' network PDUs ('+M.decrypted+' decrypted, '+M.net_mic_bad+' NetMIC bad, '+M.not_decrypted+' without key) · '+M.access_messages+' access and '+M.control_messages+' control messages · IV index '+(M.iv_indexes.length?M.iv_indexes.join(' → '):'unknown')+' · segmented '+M.segmented_started+' started, '+M.segmented_completed+' completed, '+M.segment_acks+' acknowledgments · relayed '+M.relayed+', repeated '+M.repeated+'. Each PDU is in dump --protocol mesh.'));

              // Problems: what needs a look, from the mesh member's counts and lists.
              var probs=[];
              M.replays.forEach(function(r){probs.push({kind:'mesh_seq_backwards',frame:r.frame,text:'source '+hex4(r.src)+' sent SEQ '+r.seq+' after '+r.previous_seq+': a replay, or a node that lost its sequence number'});});
              if(M.segmented_incomplete)probs.push({kind:'segmented_incomplete',text:M.segmented_incomplete+' segmented message'+(M.segmented_incomplete>1?'s':'')+' never completed'});
              if(M.net_mic_bad)probs.push({kind:'net_mic_bad',text:M.net_mic_bad+' network PDUs failed their NetMIC with the NetKey given'});
              if(M.trans_mic_bad)probs.push({kind:'trans_mic_bad',text:M.trans_mic_bad+' upper transport PDUs failed their TransMIC'});
              M.networks.forEach(function(n){if(n.authenticated===false)probs.push({kind:'beacon_not_authenticated',text:'network '+n.network_id+': a secure beacon failed its authentication value'});});
              if(M.not_decrypted)probs.push({kind:'not_decrypted',info:1,text:M.not_decrypted+' network PDUs stayed encrypted: give the network key with --mesh-keys FILE'});
              sec.appendChild(el('h3',null,'Problems'));
              if(!probs.length)sec.appendChild(el('p',{'class':'ok',id:'mesh-problems'},'No mesh problems: no SEQ went backwards, every segmented message completed, every MIC checked out.'));
              else{var ul=el('ul',{id:'mesh-problems'});probs.forEach(function(p){var li=el('li',{'data-kind':p.kind,'class':p.info?'mut':'err'});
                if(p.frame!=null){li.setAttribute('data-frame',p.frame);li.appendChild(frameLink(p.frame));li.appendChild(document.createTextNode(' '));}
                li.appendChild(document.createTextNode(p.kind.replace(/_/g,' ')+': '+p.text));ul.appendChild(li);});sec.appendChild(ul);}

              sec.appendChild(el('h3',null,'Nodes ('+M.nodes.length+')'));
              if(!M.nodes.length)sec.appendChild(el('p',{'class':'mut'},'No node heard: network PDUs are needed, decrypted with --mesh-keys.'));
              else{var t=table('mesh-nodes',['address','elements','messages sent','heard over','first frame','composition']);
                M.nodes.forEach(function(n){var td=row(t,{'data-address':n.address});td(hex4(n.address),'mono');td(n.elements!=null?n.elements:'—','n');td(n.messages,'n');
                  td(n.bearers.map(function(b){return b==='adv'?'advertising':b==='gatt'?'GATT proxy':b==='proxy-identity'?'proxy node identity':b;}).join(', '));td('').appendChild(frameLink(n.first_frame));
                  td(n.cid!=null?'CID '+hex4(n.cid)+' PID '+hex4(n.pid)+' VID '+hex4(n.vid)+(n.features!=null?' features '+hex4(n.features):''):'','mono');});
                sec.appendChild(t);}

              // Traffic: a row per source → destination, its messages as a bar, the names they carried.
              sec.appendChild(el('h3',null,'Traffic ('+M.traffic.length+' source → destination pairs)'));
              if(M.traffic.length){var most=Math.max.apply(null,M.traffic.map(function(f){return f.messages;}));
                var t=table('mesh-traffic',['source','destination','network PDUs','','messages']);
                M.traffic.forEach(function(f){var td=row(t,{'data-src':f.src,'data-dst':f.dst,'data-messages':f.messages});td(addr(f.src),'mono nw');td(addr(f.dst),'mono nw');td(f.messages,'n');
                  var bar=td('');bar.style.width='160px';bar.appendChild(el('div',{style:'height:10px;margin-top:4px;border-radius:2px;background:var(--host);width:'+Math.max(2,Math.round(f.messages*150/most))+'px'}));
                  var names=td('');f.by_opcode.forEach(function(o,k){var s=el('span',{'class':'mesh-op','data-name':o.name,'data-messages':o.messages},(k?', ':'')+o.messages+' × '+o.name);names.appendChild(s);});
                  if(!f.by_opcode.length)names.appendChild(el('span',{'class':'mut'},'segments and acknowledgments only'));});
                sec.appendChild(t);}

              sec.appendChild(el('h3',null,'Provisioning ('+M.provisioning.length+' session'+(M.provisioning.length===1?'':'s')+')'));
              if(M.provisioning.length){var pv=el('div',{id:'mesh-provisioning'});
                M.provisioning.forEach(function(p){var ok=p.outcome==='complete',bad=/^(failed|closed)/.test(p.outcome);
                  var box=el('div',{'class':'sensor-card mesh-session','data-link':p.link,'data-outcome':p.outcome,'data-pdus':p.pdus,style:'margin:6px 0'});
                  var head=el('div',{'class':'sensor-title'},p.link+(p.device_uuid?' · device '+p.device_uuid:'')+' · '+p.pdus+' provisioning PDUs · ');
                  head.appendChild(el('span',{'class':ok?'ok':bad?'err':'mut'},p.outcome));box.appendChild(head);
                  var chain=el('div',{'class':'mesh-steps',style:'display:flex;flex-wrap:wrap;gap:4px;margin-top:4px'});
                  (p.steps||[]).forEach(function(s,k){var c=el('span',{'class':'mesh-step'+(/Failed|Link Close \((?!Success)/.test(s.name)?' err':''),'data-frame':s.frame,'data-name':s.name,
                      style:'border:1px solid var(--line);border-radius:4px;padding:1px 6px;background:var(--alt)'});
                    c.appendChild(document.createTextNode((k?'→ ':'')+s.name+' '));var a=frameLink(s.frame);a.textContent='#'+s.frame;c.appendChild(a);chain.appendChild(c);});
                  box.appendChild(chain);pv.appendChild(box);});
                sec.appendChild(pv);}

              // Secure network beacons: a lane per network, a segment per run of beacons saying the same.
              var runs=M.secure_beacons||[];
              sec.appendChild(el('h3',null,'Secure network beacons ('+runs.reduce(function(a,r){return a+r.beacons;},0)+')'));
              if(runs.length){var nets=[];runs.forEach(function(r){if(nets.indexOf(r.network_id)<0)nets.push(r.network_id);});
                var t0=Infinity,t1=-Infinity;runs.forEach(function(r){if(r.first_us!=null){t0=Math.min(t0,r.first_us);t1=Math.max(t1,r.last_us);}});
                if(S.first_us!=null){t0=Math.min(t0,S.first_us);t1=Math.max(t1,S.last_us);}if(!(t0<t1))t1=t0+1;
                var W=1200,L=170,R=12,LH=34,T=6,H=T+nets.length*LH+20;function x(t){return L+(t-t0)/(t1-t0)*(W-L-R);}
                var g=svg('svg',{viewBox:'0 0 '+W+' '+H,width:'100%',id:'mesh-beacon-lanes'});
                [t0,(t0+t1)/2,t1].forEach(function(t,k){g.appendChild(svg('text',{x:x(t),y:H-4,'text-anchor':['start','middle','end'][k],'font-size':10,fill:'#667085'},fmtTime(t).slice(0,12)));});
                nets.forEach(function(id,i){var y=T+i*LH;g.appendChild(svg('text',{x:4,y:y+16,'font-size':11,fill:'#1d2330','class':'mono'},id));
                  g.appendChild(svg('line',{x1:L,x2:W-R,y1:y+12,y2:y+12,stroke:'#eaecf0'}));
                  runs.forEach(function(r){if(r.network_id!==id||r.first_us==null)return;var xa=x(r.first_us),xb=Math.max(xa+6,x(r.last_us));
                    var fill=r.authenticated===false?'#fda29b':r.authenticated?'#32d583':'#98a2b3';
                    var rc=svg('rect',{x:xa.toFixed(1),y:y+4,width:(xb-xa).toFixed(1),height:16,rx:2,fill:fill,'class':'mesh-beacon-run','data-iv-index':r.iv_index,'data-beacons':r.beacons,'data-first-frame':r.first_frame});
                    rc.appendChild(svg('title',{},'IV index '+r.iv_index+(r.iv_update?', IV update in progress':'')+(r.key_refresh?', key refresh':'')+' · '+r.beacons+' beacons, frames '+r.first_frame+'…'+r.last_frame+(r.authenticated==null?' · not authenticated (no NetKey)':r.authenticated?' · authenticated':' · authentication FAILED')));g.appendChild(rc);
                    var lab='IV '+r.iv_index+(r.iv_update?' IVU':'')+(r.key_refresh?' KR':'');g.appendChild(svg('text',{x:xa+3,y:y+32,'font-size':10,fill:'#344054'},lab));});});
                sec.appendChild(g);
                var t=table('mesh-beacons',['network','IV index','flags','authenticated','beacons','frames','from','to']);
                runs.forEach(function(r){var td=row(t,{'data-network':r.network_id,'data-iv-index':r.iv_index,'data-beacons':r.beacons});td(r.network_id,'mono');td(r.iv_index,'n');
                  td([r.iv_update?'IV update':'',r.key_refresh?'key refresh':''].filter(Boolean).join(', ')||'normal');td(r.authenticated==null?'no NetKey':r.authenticated?'yes':'FAILED',r.authenticated===false?'err':'');
                  td(r.beacons,'n');var f=td('');f.appendChild(frameLink(r.first_frame));if(r.last_frame!==r.first_frame){f.appendChild(document.createTextNode(' … '));f.appendChild(frameLink(r.last_frame));}
                  td(r.first_us!=null?fmtTime(r.first_us).slice(0,15):'','mono');td(r.last_us!=null?fmtTime(r.last_us).slice(0,15):'','mono');});
                sec.appendChild(t);}
              else sec.appendChild(el('p',{'class':'mut'},'No secure network beacon in this capture.'));
            });}
        """#
    }
}
