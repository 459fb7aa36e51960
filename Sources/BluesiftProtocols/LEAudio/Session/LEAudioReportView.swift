extension LEAudioStats {
    /// The report's LE Audio view (JavaScript run in the page, reading `S`, the stats JSON):
    /// one lane per ASE with its states over time and the operation that caused each step,
    /// the CISes and their ASEs, per CIS/BIS direction an SDU chart (rate, loss by sequence,
    /// packet status flags, jitter) from the stream's `series`, and the broadcasts seen.
    public static var reportView: String? {
        #"""
          // ---------- LE Audio ----------
          // ASE state lanes, CIS binding, per-stream SDU charts, broadcast sources, broadcasts (stats' le_audio_*).
          var LA={ases:S.le_audio_ases||[],cises:S.le_audio_cises||[],streams:S.le_audio_streams||[],bc:S.le_audio_broadcasts||[]};
          if(LA.ases.length||LA.streams.length||LA.bc.length){
            if(LA.streams.length)count('iso-streams',LA.streams.length,'ISO streams');
            addView('le_audio','LE Audio',function(sec){var k=S.counts;
              sec.appendChild(el('p',{'class':'mut',id:'le-audio-counts'},LA.ases.length+' ASEs · '+LA.cises.length+' CISes · '+LA.streams.length+' ISO streams · '+(k.iso_packets||0).toLocaleString('en')+' ISO packets, '+(k.iso_sdus||0).toLocaleString('en')+' SDUs · '+(k.le_audio_values||0)+' PACS/ASCS/BASS values · '+(k.le_audio_hci_messages||0)+' isochronous HCI messages. Each PDU is in the Sequence view and in dump --protocol le-audio.'));
              var COL={'Idle':'#d0d5dd','Codec Configured':'#b2ddff','QoS Configured':'#84adff','Enabling':'#fec84b','Streaming':'#32d583','Disabling':'#fdb022','Releasing':'#fda29b'};
              function laTime(us){return us==null?'':fmtTime(us).slice(0,15);}
              // The span the lanes and charts share: first ASE step or SDU to the capture's end.
              var a0=Infinity,a1=-Infinity;
              LA.ases.forEach(function(a){a.steps.forEach(function(s){if(s.us!=null){a0=Math.min(a0,s.us);a1=Math.max(a1,s.us);}});});
              LA.streams.forEach(function(s){var r=s.series;if(r){a0=Math.min(a0,r.t0_us);a1=Math.max(a1,r.t0_us+r.b.length*r.bucket_us);}});
              if(S.last_us!=null&&a0<Infinity)a1=Math.max(a1,S.last_us);
              if(!(a0<a1)){a0=S.first_us||0;a1=Math.max(S.last_us||0,a0+1);}
              var pad0=(a1-a0)*0.01;a0-=pad0;a1+=pad0;
              function axis(g,x,L,R,W,yTop,yBot,t0,t1){if(t0===undefined){t0=a0;t1=a1;}var span=t1-t0,steps=[1e3,2e3,5e3,1e4,2e4,5e4,1e5,2e5,5e5,1e6,2e6,5e6,1e7,3e7,6e7,12e7,3e8,6e8,18e8,36e8],st=steps[steps.length-1];
                for(var i=0;i<steps.length;i++){if(span/steps[i]<=7){st=steps[i];break;}}var cut=st<1e6?12:8,right=-1e9;
                for(var t=Math.ceil((t0+OFF)/st)*st-OFF;t<=t1;t+=st){var X=x(t);g.appendChild(svg('line',{x1:X,x2:X,y1:yTop,y2:yBot,stroke:'#eaecf0'}));
                  var lab=fmtTime(t).slice(0,cut),lw=lab.length*5.6;if(X-lw/2<right+6||X+lw/2>W)continue;right=X+lw/2;
                  g.appendChild(svg('text',{x:X,y:yBot+12,'text-anchor':'middle','font-size':10,fill:'#667085'},lab));}}

              // ASE state lanes: a segment per state, from the notification that entered it to the next.
              if(LA.ases.length){sec.appendChild(el('h3',null,'ASE state machines'));
                var leg=el('p',{'class':'mut',id:'ase-legend'});Object.keys(COL).forEach(function(n){var sw=el('span',{style:'display:inline-block;width:10px;height:10px;margin:0 4px 0 10px;border-radius:2px;background:'+COL[n]});leg.appendChild(sw);leg.appendChild(document.createTextNode(n));});
                leg.appendChild(document.createTextNode('  ·  the operation that caused a step is under its start; ✕ a refused control point operation.'));sec.appendChild(leg);
                var W=1200,L=190,R=12,LH=56,T=8,H=T+LA.ases.length*LH+18;
                function x(t){return L+(t-a0)/(a1-a0)*(W-L-R);}
                var g=svg('svg',{viewBox:'0 0 '+W+' '+H,width:'100%',id:'ase-lanes'});axis(g,x,L,R,W,T,H-18);
                LA.ases.forEach(function(a,i){var y=T+i*LH,lane=svg('g',{'class':'ase-lane','data-ase':a.ase_id,'data-conn-handle':a.conn_handle});
                  var lab=svg('text',{x:4,y:y+17,'font-size':12,fill:'#1d2330','font-weight':600},'ASE '+a.ase_id+(a.direction?' ('+a.direction+')':''));lane.appendChild(lab);
                  // The connection's name in the tooltip: the label column stays clear of the lane.
                  var sub=svg('text',{x:4,y:y+32,'font-size':10,fill:'#667085'},'ACL '+hex4(a.conn_handle)+(a.cig_id!=null?' · CIG '+a.cig_id+' CIS '+a.cis_id:''));
                  if(a.connection!=null)sub.appendChild(svg('title',{},connLabel(a.connection)));lane.appendChild(sub);
                  var right=[-1e9,-1e9];   // where each of the two rows of causes is taken up to
                  a.steps.forEach(function(s,k){if(s.us==null)return;var nx=k+1<a.steps.length&&a.steps[k+1].us!=null?a.steps[k+1].us:a1,xa=x(s.us),xb=Math.max(xa+2,x(nx));
                    var r=svg('rect',{x:xa.toFixed(1),y:y+6,width:(xb-xa).toFixed(1),height:16,rx:2,fill:COL[s.state]||'#98a2b3',stroke:'#fff','class':'ase-step','data-frame':s.frame,'data-state':s.state,'data-cause':s.cause||''});
                    r.appendChild(svg('title',{},s.state+(s.cause?' ← '+s.cause:' (server on its own)')+' · frame '+s.frame+' · '+laTime(s.us)+' · for '+fmtDur(Math.round(nx-s.us))));lane.appendChild(r);
                    var short=s.state;if(short.length*6.2>xb-xa-4)short=s.state.split(' ').map(function(w){return w[0];}).join('');
                    if(short.length*6.2<=xb-xa-4)lane.appendChild(svg('text',{x:xa+3,y:y+18,'font-size':10,fill:'#1d2330','pointer-events':'none'},short));
                    if(s.cause){var row=xa>right[0]+4?0:xa>right[1]+4?1:-1;if(row>=0){lane.appendChild(svg('text',{x:xa,y:y+34+row*12,'font-size':10,fill:'#344054','class':'ase-cause'},'↑ '+s.cause));right[row]=xa+(s.cause.length+2)*5.6;}}});
                  a.errors.forEach(function(e){if(e.us==null)return;var m=svg('text',{x:x(e.us)-4,y:y+5,'font-size':12,fill:'#d92d20','class':'ase-error','data-frame':e.frame},'✕');
                    m.appendChild(svg('title',{},'frame '+e.frame+': '+e.opcode+' refused: '+e.response+(e.reason?' ('+e.reason_name+')':'')));lane.appendChild(m);});
                  g.appendChild(lane);});
                sec.appendChild(g);
                var t=el('table',{id:'ase-steps'}),h=el('tr');['conn','ASE','frame','time','state','caused by'].forEach(function(c){h.appendChild(el('th',null,c));});t.appendChild(h);
                LA.ases.forEach(function(a){var rows=a.steps.map(function(s){return {f:s.frame,s:s};}).concat(a.errors.map(function(e){return {f:e.frame,e:e};})).sort(function(p,q){return p.f-q.f;});
                  rows.forEach(function(r){var tr=el('tr',{'data-ase':a.ase_id,'data-frame':r.f,'class':r.e?'err':''});function td(v,cls){var d=el('td',{'class':cls||''},v);tr.appendChild(d);return d;}
                    td(a.connection!=null?connLabel(a.connection):hex4(a.conn_handle),'nw');td(a.ase_id+(a.direction?' '+a.direction:''),'nw');td('').appendChild(frameLink(r.f));
                    td(laTime(r.s?r.s.us:r.e.us),'mono');
                    if(r.s){td(r.s.state);td(r.s.cause||'— (server)','mut');}else{td('✕ '+r.e.response+(r.e.reason?' ('+r.e.reason_name+')':''),'err');td(r.e.opcode);}t.appendChild(tr);});});
                sec.appendChild(t);}

              if(LA.cises.length){sec.appendChild(el('h3',null,'CISes'));var t=el('table',{id:'le-audio-cises'}),h=el('tr');
                ['CIS handle','CIG','CIS','ACL','status','SDU interval C→P','SDU interval P→C','ASEs'].forEach(function(c){h.appendChild(el('th',null,c));});t.appendChild(h);
                LA.cises.forEach(function(c){var tr=el('tr',{'data-handle':c.handle});function td(v,cls){tr.appendChild(el('td',{'class':cls||''},v==null?'':v));}
                  td(hex4(c.handle),'mono');td(c.cig_id,'n');td(c.cis_id,'n');td(c.acl_handle!=null?hex4(c.acl_handle):'','mono');td(c.status==null?'':c.status===0?'established':'failed (0x'+pad(c.status.toString(16),2)+')',c.status?'err':'');
                  td(c.sdu_interval_c_to_p_us!=null?c.sdu_interval_c_to_p_us+' µs':'','n');td(c.sdu_interval_p_to_c_us!=null?c.sdu_interval_p_to_c_us+' µs':'','n');td(c.ases.join(', '));t.appendChild(tr);});sec.appendChild(t);}

              // Per stream: SDUs per bucket (valid, possibly invalid, flagged lost) with the SDUs
              // missing by sequence stacked above, and the bucket's largest jitter below.
              if(LA.streams.length){sec.appendChild(el('h3',null,'ISO streams'));
                // The charts share the streams' span (first SDU to the end of the last bucket).
                var s0=Infinity,s1=-Infinity;LA.streams.forEach(function(s){var r=s.series;if(r){s0=Math.min(s0,r.t0_us);s1=Math.max(s1,r.t0_us+r.b.length*r.bucket_us);}});
                if(!(s0<s1)){s0=a0;s1=a1;}var sp=(s1-s0)*0.02;s0-=sp;s1+=sp;
                sec.appendChild(el('p',{'class':'mut'},'One chart per CIS/BIS handle and direction, all on the span of the streams. Bars: SDUs in each time bucket (green valid, orange possibly invalid, red flagged lost by the controller), dark red above: SDUs missing by sequence number. Dots: the bucket\'s largest jitter (|Δ time stamp − SDU interval × Δ sequence|).'));
                var grid=el('div',{'class':'sensor-grid'});
                LA.streams.forEach(function(s){var lost=s.lost_by_sequence+s.status_lost,tot=s.sdus+s.lost_by_sequence;
                  var card=el('div',{'class':'sensor-card la-stream','data-handle':s.handle,'data-direction':s.direction,'data-sdus':s.sdus,'data-lost':s.lost_by_sequence,'data-status-lost':s.status_lost,'data-possibly-invalid':s.status_possibly_invalid});
                  card.appendChild(el('div',{'class':'sensor-title'},'ISO '+hex4(s.handle)+' '+s.direction));
                  card.appendChild(el('div',{'class':'mut la-sum'},s.sdus+' SDUs, '+s.bytes.toLocaleString('en')+' bytes · '+s.lost_by_sequence+' missing by sequence · valid '+s.status_valid+' / possibly invalid '+s.status_possibly_invalid+' / lost '+s.status_lost+(s.jitter_mean_us!=null?' · jitter mean '+s.jitter_mean_us+' µs, max '+s.jitter_max_us+' µs':'')+(s.reassembly_errors?' · '+s.reassembly_errors+' reassembly errors':'')));
                  if(tot&&lost)card.appendChild(el('div',{'class':lost/tot>0.01?'err':'mut'},lost+' of '+tot+' SDUs lost ('+(lost*100/tot).toFixed(1)+' %)'));
                  var r=s.series;if(!r||!r.b.length){grid.appendChild(card);return;}
                  var W=560,H=190,L=44,R=10,T=8,HB=110,JT=HB+18,HJ=40,B=H-16;
                  function x(t){return L+(t-s0)/(s1-s0)*(W-L-R);}
                  var mx=1,jm=0;r.b.forEach(function(b){mx=Math.max(mx,b[0]+b[2]);if(b[5]!=null)jm=Math.max(jm,b[5]);});
                  var g=svg('svg',{viewBox:'0 0 '+W+' '+H,width:W,height:H,'class':'sensor-chart la-chart'});axis(g,x,L,R,W,T,B,s0,s1);
                  g.appendChild(svg('text',{x:L-4,y:T+8,'text-anchor':'end','font-size':10,fill:'#667085'},mx));g.appendChild(svg('text',{x:L-4,y:T+HB,'text-anchor':'end','font-size':10,fill:'#667085'},'0'));
                  g.appendChild(svg('text',{x:2,y:T+HB/2,'font-size':9,fill:'#667085'},'SDUs'));g.appendChild(svg('text',{x:2,y:JT+HJ/2,'font-size':9,fill:'#667085'},'jitter'));
                  g.appendChild(svg('line',{x1:L,x2:W-R,y1:T+HB+0.5,y2:T+HB+0.5,stroke:'#98a2b3'}));g.appendChild(svg('line',{x1:L,x2:W-R,y1:JT+HJ+0.5,y2:JT+HJ+0.5,stroke:'#98a2b3'}));
                  g.appendChild(svg('text',{x:L-4,y:JT+8,'text-anchor':'end','font-size':10,fill:'#667085'},jm+' µs'));
                  var bw=Math.max(1,x(r.t0_us+r.bucket_us)-x(r.t0_us)-0.5);
                  r.b.forEach(function(b,i){if(!b[0]&&!b[2])return;var t=r.t0_us+i*r.bucket_us,xb=x(t),y=T+HB,gb=svg('g',{'class':'la-bucket','data-i':i,'data-sdus':b[0],'data-lost':b[2]});
                    function bar(n,color){if(!n)return;var h=n/mx*HB;y-=h;gb.appendChild(svg('rect',{x:xb.toFixed(1),y:y.toFixed(1),width:bw.toFixed(1),height:h.toFixed(1),fill:color}));}
                    bar(b[0]-b[3]-b[4],'#32d583');bar(b[3],'#fdb022');bar(b[4],'#f04438');bar(b[2],'#7a271a');
                    if(b[5]!=null){var jy=JT+HJ-(jm?b[5]/jm*HJ:0);gb.appendChild(svg('circle',{cx:(xb+bw/2).toFixed(1),cy:jy.toFixed(1),r:2,fill:'#344054'}));}
                    gb.appendChild(svg('title',{},laTime(t)+' +'+fmtDur(r.bucket_us)+': '+b[0]+' SDUs ('+b[1]+' bytes)'+(b[2]?', '+b[2]+' missing by sequence':'')+(b[3]?', '+b[3]+' possibly invalid':'')+(b[4]?', '+b[4]+' flagged lost':'')+(b[5]!=null?', jitter max '+b[5]+' µs':'')));
                    g.appendChild(gb);});
                  card.appendChild(g);grid.appendChild(card);});
                sec.appendChild(grid);}

              // One row per broadcast source: what its advertising, BASE and BIGInfo said, and the BIGs on it.
              var SRC=S.le_audio_sources||[];
              if(SRC.length){sec.appendChild(el('h3',null,'Broadcast sources'));var t=el('table',{id:'le-audio-sources'}),h=el('tr');
                ['Broadcast_ID','name','advertiser','program','presentation delay','subgroups (codec, BIS, language, program)','encryption','BIGs','frames'].forEach(function(c){h.appendChild(el('th',null,c));});t.appendChild(h);
                SRC.forEach(function(s){var tr=el('tr',{'class':'la-source','data-broadcast-id':s.broadcast_id==null?'':s.broadcast_id});function td(v,cls){var d=el('td',{'class':cls||''},v==null?'':v);tr.appendChild(d);return d;}
                  td(s.broadcast_id!=null?'0x'+pad(s.broadcast_id.toString(16).toUpperCase(),6):'','mono');td(s.broadcast_name);
                  td(s.advertiser?s.advertiser+' SID '+s.advertising_sid:s.advertising_handle!=null?'own set '+s.advertising_handle:'','mono');
                  td((s.program_info||'')+(s.pbp_features&&s.pbp_features.length?' ('+s.pbp_features.join(', ').replace(/_/g,' ')+')':''));
                  td(s.presentation_delay_us!=null?s.presentation_delay_us+' µs':'','n');
                  var sg=td('');(s.subgroups||[]).forEach(function(g){sg.appendChild(el('div',{'class':'la-subgroup'},g.codec+' · BIS '+g.bis.map(function(b){return b.bis_index+(b.audio_channel_allocation_names?' '+b.audio_channel_allocation_names.join('+'):'');}).join(', ')+(g.language?' · '+g.language:'')+(g.program_info?' · '+g.program_info:'')));});
                  td(s.encrypted==null?'':s.encrypted?'encrypted':'not encrypted');
                  var bg=td('');s.bigs.forEach(function(b){var d=el('div',{'class':'la-big','data-big':b.big_handle});d.appendChild(document.createTextNode((b.role==='sink'?'synced BIG '+b.big_handle+' to BIS ':'created BIG '+b.big_handle+' with BIS ')+b.bis.join(',')+(b.bis_handles&&b.bis_handles.length?' ('+b.bis_handles.map(hex4).join(', ')+')':'')+(b.broadcast_code?' with a Broadcast_Code':'')+(b.status?' failed (0x'+pad(b.status.toString(16),2)+')':'')+(b.lost_frame!=null?' · lost at ':' · ')));
                    if(b.lost_frame!=null)d.appendChild(frameLink(b.lost_frame));else d.appendChild(frameLink(b.frame));bg.appendChild(d);});
                  var fr=td('','nw');fr.appendChild(frameLink(s.first_frame));fr.appendChild(document.createTextNode('–'));fr.appendChild(frameLink(s.last_frame));t.appendChild(tr);});
                sec.appendChild(t);}

              if(LA.bc.length){sec.appendChild(el('h3',null,'Broadcasts'));var t=el('table',{id:'le-audio-broadcasts'}),h=el('tr');
                ['frame','what','Broadcast_ID','name','value'].forEach(function(c){h.appendChild(el('th',null,c));});t.appendChild(h);
                LA.bc.forEach(function(b){var tr=el('tr',{'data-what':b.what,'data-frame':b.frame});function td(v,cls){var d=el('td',{'class':cls||''},v==null?'':v);tr.appendChild(d);return d;}
                  td('').appendChild(frameLink(b.frame));td(b.what.replace(/_/g,' '));td(b.broadcast_id!=null?'0x'+pad(b.broadcast_id.toString(16).toUpperCase(),6):'','mono');td(b.name);td(b.summary);t.appendChild(tr);});
                sec.appendChild(t);}
            });}
        """#
    }
}
