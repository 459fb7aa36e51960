import BluesiftProtocols

/// The page around the data: CSS and the hand-written script that renders the views from
/// the embedded JSON. No network, no fonts, no libraries: the file opens from a ticket.
enum ReportAssets {
    static func head(title: String) -> String {
        let t = title.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
            <title>\(t)</title>
            <style>\(css)</style></head>
            <body data-ready="0">
            <header><h1 id="title">\(t)</h1><div id="facts"></div><div id="counts"></div></header>
            <section id="quality"></section>
            <nav id="tabs"></nav>
            <main id="views"></main>
            <pre id="script-errors" hidden></pre>
            <script>window.__errors=[];window.addEventListener('error',function(e){window.__errors.push(String(e.message));var p=document.getElementById('script-errors');p.hidden=false;p.textContent=window.__errors.join('\\n');});</script>

            """
    }

    /// The script with the report views of the modules that have data in this capture
    /// (`ModuleStats.hasData`): a capture without LE Audio carries no LE Audio script.
    static func tail(views: [String]) -> String {
        "<script>\n" + jsBeforeViews + views.map { $0 + "\n\n" }.joined() + jsAfterViews + "\n</script>\n</body></html>\n"
    }

    static let css = """
        :root{--fg:#1d2330;--mut:#667085;--bg:#fff;--alt:#f5f7fa;--line:#d0d5dd;--host:#2f6fde;--peer:#0d8a6a;--err:#d92d20;--warn:#b54708;--vendor:#7a3fd1}
        *{box-sizing:border-box}body{margin:0;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
        header{padding:12px 18px 6px;border-bottom:1px solid var(--line)}h1{font-size:17px;margin:0 0 4px}
        #facts{color:var(--mut)}#counts{display:flex;gap:18px;margin-top:8px;flex-wrap:wrap}
        .count{background:var(--alt);border:1px solid var(--line);border-radius:6px;padding:4px 10px}.count b{font-size:16px;margin-right:4px}
        .count.bad b{color:var(--err)}
        #quality{padding:6px 18px}.advice{border-left:4px solid var(--warn);background:#fffaeb;padding:6px 10px;margin:6px 0;border-radius:4px}
        .advice.info{border-color:var(--host);background:#eff4ff}.advice .do{color:#344054;margin-top:2px}.advice .do:before{content:"→ "}
        .ok{color:#027a48}
        nav{display:flex;gap:2px;padding:0 18px;border-bottom:1px solid var(--line);position:sticky;top:0;background:var(--bg);z-index:5}
        nav a{padding:8px 14px;text-decoration:none;color:var(--mut);border-bottom:3px solid transparent}nav a.on{color:var(--fg);border-color:var(--host);font-weight:600}
        main{padding:10px 18px}section.view{display:none}section.view.on{display:block}
        table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eaecf0;vertical-align:top}th{background:var(--alt);position:sticky;top:37px}
        td.n{text-align:right;font-variant-numeric:tabular-nums}.mono{font-family:"DejaVu Sans Mono",ui-monospace,monospace;font-size:12px}
        .err{color:var(--err)}.nw{white-space:nowrap}.mut{color:var(--mut)}.controls{display:flex;gap:10px;align-items:center;flex-wrap:wrap;margin:6px 0}
        button{font:inherit;padding:2px 10px;border:1px solid var(--line);background:var(--alt);border-radius:4px;cursor:pointer}
        select{font:inherit;max-width:320px}
        #tl-wrap{border:1px solid var(--line);border-radius:6px;overflow:hidden;cursor:grab;user-select:none}#tl-wrap.drag{cursor:grabbing}
        #seq-viewport{height:68vh;overflow-y:auto;border:1px solid var(--line);border-radius:6px;position:relative}
        #seq-spacer{position:relative}#seq-rows{position:absolute;left:0;right:0;top:0}
        .row{height:24px;display:grid;grid-template-columns:70px 120px 150px 260px 1fr 90px;align-items:center;border-bottom:1px solid #f2f4f7;white-space:nowrap;overflow:hidden;padding:0 6px}
        .row:nth-child(odd){background:#fcfcfd}.row.target{background:#fef0c7 !important;outline:2px solid #f79009}
        .row.err .what{color:var(--err);font-weight:600}.row .val{overflow:hidden;text-overflow:ellipsis}.row.vendor .val{color:var(--vendor)}
        .lane{position:relative;height:18px;margin:0 6px}.lane:before,.lane:after{content:"";position:absolute;top:2px;bottom:2px;width:2px;background:#98a2b3}
        .lane:before{left:14%}.lane:after{right:14%}
        .arrow{position:absolute;top:8px;height:2px;left:14%;right:14%}.arrow.h2p{background:var(--host)}.arrow.p2h{background:var(--peer)}.arrow.unk{background:#98a2b3}
        .arrow.h2p:after,.arrow.p2h:before{content:"";position:absolute;top:-4px;border:5px solid transparent}
        .arrow.h2p:after{right:-2px;border-left:8px solid var(--host);border-right:0}.arrow.p2h:before{left:-2px;border-right:8px solid var(--peer);border-left:0}
        .row.err .arrow{background:var(--err)}.row.err .arrow.p2h:before{border-right-color:var(--err)}.row.err .arrow.h2p:after{border-left-color:var(--err)}
        .seqhead{display:grid;grid-template-columns:70px 120px 150px 260px 1fr 90px;padding:4px 6px;font-weight:600;background:var(--alt);border:1px solid var(--line);border-bottom:0;border-radius:6px 6px 0 0}
        .seqhead .cols{display:flex;justify-content:space-between;padding:0 6px}
        details{margin:2px 0 2px 14px}summary{cursor:pointer}.gatt-dev>summary{font-weight:600}
        .diff-del{background:#fee4e2;color:#912018}.diff-add{background:#d1fadf;color:#05603a}
        .status-match{color:#027a48}.status-mismatch,.status-missing,.status-unexpected{color:var(--err);font-weight:600}.status-refused,.status-interrupted{color:var(--warn)}
        .hist rect{fill:#84adff}.hist rect.slow{fill:#fda29b}
        #problems li{margin:3px 0}
        .sensor-dev h3{font-size:14px;margin:16px 0 6px}.sensor-grid{display:flex;flex-wrap:wrap;gap:12px}
        .sensor-card{border:1px solid var(--line);border-radius:6px;padding:6px 8px;position:relative}.sensor-title{font-weight:600}
        .sensor-chart{display:block;margin-top:4px}.sensor-chart .line{fill:none;stroke:var(--host);stroke-width:1.5;stroke-linejoin:round}
        .sensor-chart circle{fill:var(--host)}.sensor-chart .hover text{font-size:11px;fill:var(--fg)}
        """

    static let jsBeforeViews = #"""
        (function(){
        'use strict';
        function $(id){return document.getElementById(id);}
        function el(tag,attrs,text){var e=document.createElement(tag);if(attrs)for(var k in attrs){if(k==='class')e.className=attrs[k];else e.setAttribute(k,attrs[k]);}if(text!==undefined&&text!==null)e.textContent=String(text);return e;}
        function data(id){var s=$(id);return s?JSON.parse(s.textContent):null;}
        var SVGNS='http://www.w3.org/2000/svg';
        function svg(tag,attrs,text){var e=document.createElementNS(SVGNS,tag);for(var k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined){e.textContent=text;}return e;}
        var meta=data('meta')||{};
        var OFF=(meta.utc_offset_s||0)*1e6, ZONE=meta.zone||'UTC';
        function pad(n,w){n=String(n);while(n.length<w)n='0'+n;return n;}
        function fmtTime(us,withDate){var ms=Math.floor((us+OFF)/1000);var d=new Date(ms);var frac=pad(((us%1e6)+1e6)%1e6,6);
          var s=pad(d.getUTCHours(),2)+':'+pad(d.getUTCMinutes(),2)+':'+pad(d.getUTCSeconds(),2)+'.'+frac;
          if(withDate)s=d.getUTCFullYear()+'-'+pad(d.getUTCMonth()+1,2)+'-'+pad(d.getUTCDate(),2)+' '+s+' '+ZONE;return s;}
        function fmtDur(us){if(us<0)return '';if(us<1000)return us+' µs';if(us<1e6)return (us/1000).toFixed(us<1e4?2:1)+' ms';if(us<6e7)return (us/1e6).toFixed(2)+' s';
          var s=Math.round(us/1e6),h=Math.floor(s/3600),m=Math.floor(s%3600/60);return (h?h+' h ':'')+m+' min '+(s%60)+' s';}
        // Latencies as dump and stats print them: µs below 10 ms, whole ms above; "<1 ms" and
        // whole ms when the capture's clock has only milliseconds (stats' millisecond_clock).
        var MSCLOCK=false;
        function fmtLat(us,exact){if(us<0)return '';if(MSCLOCK&&!exact){var m=Math.floor((us+500)/1000);return m==0?'<1 ms':m+' ms';}
          return us<1e4?us+' µs':Math.floor(us/1000)+' ms';}
        function hex4(v){return '0x'+pad(v.toString(16),4);}
        var ATT={1:'Error Response',2:'Exchange MTU Request',3:'Exchange MTU Response',4:'Find Information Request',5:'Find Information Response',6:'Find By Type Value Request',7:'Find By Type Value Response',8:'Read By Type Request',9:'Read By Type Response',10:'Read Request',11:'Read Response',12:'Read Blob Request',13:'Read Blob Response',14:'Read Multiple Request',15:'Read Multiple Response',16:'Read By Group Type Request',17:'Read By Group Type Response',18:'Write Request',19:'Write Response',22:'Prepare Write Request',23:'Prepare Write Response',24:'Execute Write Request',25:'Execute Write Response',27:'Notification',29:'Indication',30:'Confirmation',32:'Read Multiple Variable Request',33:'Read Multiple Variable Response',35:'Multiple Handle Value Notification',82:'Write Command',210:'Signed Write Command'};
        var SMP={1:'Pairing Request',2:'Pairing Response',3:'Pairing Confirm',4:'Pairing Random',5:'Pairing Failed',6:'Encryption Information',7:'Central Identification',8:'Identity Information',9:'Identity Address Information',10:'Signing Information',11:'Security Request',12:'Pairing Public Key',13:'Pairing DHKey Check',14:'Keypress Notification'};
        function opName(op){if(op>=512)return 'Classic';if(op>=256)return 'SMP '+(SMP[op-256]||('0x'+(op-256).toString(16)));return ATT[op]||('ATT 0x'+op.toString(16));}
        function isError(r){return (r[4]===1&&!r[13])||r[4]===0x105;}

        var views=[],current=null;
        function addView(id,label,build){var sec=el('section',{id:'view-'+id,'class':'view'});$('views').appendChild(sec);
          var a=el('a',{href:'#view='+id,id:'tab-'+id},label);$('tabs').appendChild(a);views.push({id:id,sec:sec,tab:a,build:build,built:false});}
        // "#view=all": every view built and shown (printing, tests).
        function showAll(){views.forEach(function(x){if(!x.built){x.built=true;x.build(x.sec);}x.sec.classList.add('on');x.tab.classList.add('on');});}
        function show(id){if(id==='all'){showAll();return views[0];}var v=null;views.forEach(function(x){var on=x.id===id;x.sec.classList.toggle('on',on);x.tab.classList.toggle('on',on);if(on)v=x;});
          if(!v)return null;if(!v.built){v.built=true;v.build(v.sec);}current=v;if(v.onshow)v.onshow();return v;}

        // ---------- capture report ----------
        function captureReport(){
          var S=data('stats'),OPS=data('ops')||[],G=data('gatt')||{devices:[]};
          MSCLOCK=!!(S&&S.millisecond_clock);
          var base=meta.base_us||0;
          document.body.dataset.kind='capture';
          var facts=S.format+' · '+S.records.toLocaleString('en')+' records'+(S.truncated_records?' ('+S.truncated_records+' truncated)':'');
          if(S.first_us!=null)facts+=' · '+fmtTime(S.first_us,true)+' → '+fmtTime(S.last_us,false)+' ('+fmtDur(S.duration_us)+')';
          $('facts').textContent=facts;
          var nProblems=(S.problem_counts||[]).reduce(function(a,b){return a+b.count;},0);
          function count(id,n,label,bad){var d=el('span',{'class':'count'+(bad&&n?' bad':''),id:'n-'+id,'data-value':n});d.appendChild(el('b',null,n.toLocaleString('en')));d.appendChild(document.createTextNode(label));$('counts').appendChild(d);}
          count('devices',S.devices.length+S.devices_not_listed,'devices');
          count('connections',S.connections.length,'connections');
          // Only failures in red: hosts cancel pending creates as routine (iOS dozens of times).
          var nFailed=S.failed_connections.filter(function(f){return f.outcome==='failed';}).length;
          count('failed',nFailed,'failed attempts',true);
          if(S.failed_connections.length>nFailed)count('cancelled',S.failed_connections.length-nFailed,'cancelled or never completed');
          count('att',S.counts.att,'ATT PDUs');
          count('errors',S.counts.att_errors-S.counts.discovery_ends,'ATT errors',true);
          count('problems',nProblems,'problems',true);
          // Quality first: a capture that cannot answer the question should say so at once.
          var q=$('quality');
          if(!S.quality.length){q.appendChild(el('div',{'class':'ok',id:'quality-ok'},'✓ No problems found with the capture itself.'));}
          S.quality.forEach(function(a){var d=el('div',{'class':'advice '+a.severity,'data-code':a.code});
            var m=el('div',null,a.message);if(a.frame){m.appendChild(document.createTextNode(' '));m.appendChild(frameLink(a.frame));}
            d.appendChild(m);d.appendChild(el('div',{'class':'do'},a.advice));q.appendChild(d);});
          function connLabel(i){var c=S.connections[i];if(!c)return '';return '#'+i+' '+(c.peer_name?c.peer_name:(c.peer||hex4(c.handle)));}
          function charLabel(i){var c=S.characteristics[i];if(!c)return '';var p=[];
            if(c.characteristic_name||c.characteristic)p.push(c.characteristic_name||c.characteristic);else if(c.service_name||c.service)p.push(c.service_name||c.service);
            if(c.descriptor_name||c.descriptor)p.push(c.descriptor_name||c.descriptor);if(!p.length)p.push('handle '+hex4(c.handle));return p.join(' / ');}
          function frameLink(f){var a=el('a',{href:'#frame='+f,'class':'frame-link','data-frame':f},'frame '+f);return a;}

          // ---------- timeline ----------
          addView('timeline','Timeline',function(sec){
            var ctl=el('div',{'class':'controls'});['−','+','Reset'].forEach(function(l){var b=el('button',{'data-z':l},l);ctl.appendChild(b);});
            ctl.appendChild(el('span',{'class':'mut'},'Wheel to zoom, drag to pan. One lane per device: advertising (light), connections (solid), ▲ parameter/MTU/PHY updates, ◆ encryption, ✕ disconnection.'));
            sec.appendChild(ctl);var wrap=el('div',{id:'tl-wrap'});sec.appendChild(wrap);
            var lanes=[],byAddr={};
            function lane(key,label){if(byAddr[key]!==undefined)return lanes[byAddr[key]];var l={label:label,adv:null,conns:[]};byAddr[key]=lanes.length;lanes.push(l);return l;}
            S.connections.forEach(function(c,i){var k=c.peer||('conn'+i);var d=S.devices.find?S.devices.find(function(x){return x.address===c.peer;}):null;
              lane(k,(c.peer_name||(d&&d.names[0])||'')+' '+(c.peer||('connection '+hex4(c.handle)))).conns.push(c);});
            var advs=S.devices.slice().sort(function(a,b){return (b.connections.length-a.connections.length)||(b.advertising_reports-a.advertising_reports);});
            advs.forEach(function(d){if(lanes.length>=40&&byAddr[d.address]===undefined)return;var l=lane(d.address,(d.names[0]||'')+' '+d.address);l.adv=d;});
            var t0=S.first_us||0,t1=Math.max(S.last_us||0,t0+1),v0=t0,v1=t1;
            // Labels take the room the longest needs (~6.6 units a character at 11 px), 160 to 400;
            // one still longer loses the end of its name, whole in its tooltip.
            var CW=6.6,longest=lanes.reduce(function(m,l){return Math.max(m,l.label.trim().length);},0);
            var W=1200,LH=26,top=24,left=Math.max(160,Math.min(400,Math.ceil(longest*CW)+14)),H=top+lanes.length*LH+10;
            var fit=Math.floor((left-14)/CW);
            // The address identifies the device: a long name gives way first.
            function laneText(l){var lt=l.label.trim();if(lt.length<=fit)return lt;var sp=lt.lastIndexOf(' ');
              if(sp>0&&lt.length-sp<fit-4)return lt.slice(0,fit-(lt.length-sp)-1)+'…'+lt.slice(sp);return lt.slice(0,fit-1)+'…';}
            function x(t){return left+(t-v0)/(v1-v0)*(W-left-10);}
            function draw(){wrap.innerHTML='';var s=svg('svg',{viewBox:'0 0 '+W+' '+H,width:'100%',id:'timeline-svg'});
              var span=v1-v0,step=Math.pow(10,Math.floor(Math.log10(span/6)));if(span/step>12)step*=5;else if(span/step>6)step*=2;
              for(var t=Math.ceil(v0/step)*step;t<=v1;t+=step){var X=x(t);s.appendChild(svg('line',{x1:X,x2:X,y1:top-4,y2:H,stroke:'#eaecf0'}));
                s.appendChild(svg('text',{x:X+2,y:14,'font-size':10,fill:'#667085'},fmtTime(t,false).slice(0,step<1e6?12:8)));}
              lanes.forEach(function(l,i){var y=top+i*LH;var g=svg('g',{'class':'lane-g','data-lane':i});
                var label=svg('text',{x:4,y:y+15,'font-size':11,fill:'#1d2330','class':'lane-label'},laneText(l));
                label.appendChild(svg('title',{},l.label.trim()));g.appendChild(label);
                g.appendChild(svg('line',{x1:left,x2:W-10,y1:y+LH/2,y2:y+LH/2,stroke:'#f2f4f7'}));
                function clip(a){return Math.max(left,Math.min(W-10,a));}
                if(l.adv&&l.adv.advertising_reports){var a=clip(x(l.adv.first_us)),b=clip(x(l.adv.last_us));var r=svg('rect',{x:a,y:y+8,width:Math.max(2,b-a),height:10,fill:'#d1e0ff',rx:2});
                  r.appendChild(svg('title',{},'advertising: '+l.adv.advertising_reports+' reports, '+fmtTime(l.adv.first_us)+' → '+fmtTime(l.adv.last_us)));g.appendChild(r);}
                l.conns.forEach(function(c){var s0=c.start_us!=null?c.start_us:c.first_us,e0=c.end_us!=null?c.end_us:c.last_us;var a=clip(x(s0)),b=clip(x(e0));
                  var r=svg('rect',{x:a,y:y+5,width:Math.max(2,b-a),height:16,fill:c.disconnect_reason!=null&&c.disconnect_reason!==0x13&&c.disconnect_reason!==0x16?'#fda29b':'#32d583',rx:3,'class':'conn-bar','data-conn':c.index});
                  r.appendChild(svg('title',{},'connection #'+c.index+' '+fmtTime(s0)+' → '+fmtTime(e0)+' ('+fmtDur(e0-s0)+')'+(c.disconnect_reason_name?' — ended: '+c.disconnect_reason_name:'')));g.appendChild(r);
                  function mark(t,sym,title,color){var X=x(t);if(X<left||X>W-10)return;var m=svg('text',{x:X-4,y:y+17,'font-size':11,fill:color||'#1d2330'},sym);m.appendChild(svg('title',{},title));g.appendChild(m);}
                  c.parameters.forEach(function(p,k){if(k>0)mark(p.us,'▲','frame '+p.frame+': interval '+(p.interval*1.25)+' ms, latency '+p.latency+', timeout '+p.timeout*10+' ms','#344054');});
                  if(c.mtu_frame){mark(opTime(c.mtu_frame),'M','frame '+c.mtu_frame+': MTU '+c.mtu,'#344054');}
                  if(c.phy_frame)mark(opTime(c.phy_frame,c),'P','PHY '+c.tx_phy+'/'+c.rx_phy,'#344054');
                  c.encryption.forEach(function(e){if(e.enabled)mark(e.us,'◆','frame '+e.frame+': encryption on'+(e.key_size?', key '+e.key_size+' bytes':''));});
                  if(c.end_frame!=null)mark(c.end_us,'✕','frame '+c.end_frame+': disconnected'+(c.disconnect_reason_name?' — '+c.disconnect_reason_name:''),'#d92d20');});
                s.appendChild(g);});
              wrap.appendChild(s);}
            function opTime(f,c){var i=rowIndexOfFrame(f);if(i>=0&&OPS[i][0]===f)return base+OPS[i][1];return c?(c.start_us||c.first_us):t0;}
            function zoom(f,at){var span=(v1-v0)*f;if(span<1000)span=1000;var c=at!==undefined?at:(v0+v1)/2;var r=(c-v0)/(v1-v0);v0=c-r*span;v1=v0+span;clampView();draw();}
            function clampView(){var span=Math.min(v1-v0,t1-t0);if(v0<t0){v0=t0;}v1=v0+span;if(v1>t1){v1=t1;v0=v1-span;}}
            ctl.addEventListener('click',function(e){var z=e.target.getAttribute('data-z');if(!z)return;if(z==='+')zoom(0.5);else if(z==='−')zoom(2);else{v0=t0;v1=t1;draw();}});
            wrap.addEventListener('wheel',function(e){e.preventDefault();var rect=wrap.getBoundingClientRect();var px=(e.clientX-rect.left)/rect.width*W;
              var at=v0+(px-left)/(W-left-10)*(v1-v0);zoom(e.deltaY>0?1.25:0.8,at);},{passive:false});
            var drag=null;wrap.addEventListener('mousedown',function(e){drag={x:e.clientX,v0:v0,v1:v1};wrap.classList.add('drag');});
            window.addEventListener('mouseup',function(){drag=null;wrap.classList.remove('drag');});
            window.addEventListener('mousemove',function(e){if(!drag)return;var rect=wrap.getBoundingClientRect();var dt=(e.clientX-drag.x)/rect.width*W/(W-left-10)*(drag.v1-drag.v0);
              v0=drag.v0-dt;v1=drag.v1-dt;clampView();draw();});
            draw();
            if(!lanes.length)sec.appendChild(el('p',{'class':'mut'},'No devices or connections in this capture.'));
          });

          // ---------- sequence ----------
          function rowIndexOfFrame(f){var lo=0,hi=OPS.length-1,ans=-1;while(lo<=hi){var m=(lo+hi)>>1;if(OPS[m][0]>=f){ans=m;hi=m-1;}else lo=m+1;}return ans;}
          var seq={};
          addView('sequence','Sequence',function(sec){
            var ctl=el('div',{'class':'controls'});
            var devSel=el('select',{id:'f-device'});devSel.appendChild(el('option',{value:''},'all connections'));
            S.connections.forEach(function(c,i){if(c.att_operations||(S.classic||[]).some(function(x){return x.connection===i;}))devSel.appendChild(el('option',{value:i},connLabel(i)));});
            var chSel=el('select',{id:'f-char'});chSel.appendChild(el('option',{value:''},'all characteristics'));
            S.characteristics.forEach(function(c,i){chSel.appendChild(el('option',{value:i},'#'+c.connection+' '+hex4(c.handle)+' '+charLabel(i)));});
            var errCb=el('input',{type:'checkbox',id:'f-errors'}),venCb=el('input',{type:'checkbox',id:'f-vendor'});
            ctl.appendChild(devSel);ctl.appendChild(chSel);
            var l1=el('label');l1.appendChild(errCb);l1.appendChild(document.createTextNode(' errors only'));ctl.appendChild(l1);
            var l2=el('label');l2.appendChild(venCb);l2.appendChild(document.createTextNode(' vendor messages only'));ctl.appendChild(l2);
            var status=el('span',{id:'seq-status','class':'mut'});ctl.appendChild(status);sec.appendChild(ctl);
            if(meta.left_out){sec.appendChild(el('div',{'class':'advice',id:'seq-left-out'},meta.left_out.toLocaleString('en')+' ATT operations from frame '+meta.left_out_from+' on were left out of this page (it keeps the first '+meta.max_operations.toLocaleString('en')+', then only errors, vendor messages and SMP). `bluesift dump --frames '+meta.left_out_from+'-` shows them all.'));}
            var head=el('div',{'class':'seqhead'});['frame','time','connection'].forEach(function(h){head.appendChild(el('div',null,h));});
            var cols=el('div',{'class':'cols'});cols.appendChild(el('span',{style:'color:var(--host)'},'host'));cols.appendChild(el('span',{style:'color:var(--peer)'},'peer'));head.appendChild(cols);
            head.appendChild(el('div',null,'operation · characteristic · value'));head.appendChild(el('div',null,'latency'));sec.appendChild(head);
            var vp=el('div',{id:'seq-viewport'}),sp=el('div',{id:'seq-spacer'}),rows=el('div',{id:'seq-rows'});sp.appendChild(rows);vp.appendChild(sp);sec.appendChild(vp);
            var RH=24,index=[],target=-1;
            function filter(){var d=devSel.value===''?-1:+devSel.value,c=chSel.value===''?-1:+chSel.value,eo=errCb.checked,vo=venCb.checked;index=[];
              for(var i=0;i<OPS.length;i++){var r=OPS[i];if(d>=0&&r[2]!==d)continue;if(c>=0&&r[6]!==c)continue;if(eo&&!isError(r))continue;if(vo&&!r[12])continue;index.push(i);}
              sp.style.height=(index.length*RH)+'px';status.textContent='showing '+index.length.toLocaleString('en')+' of '+OPS.length.toLocaleString('en')+' operations';render();}
            function render(){var first=Math.max(0,Math.floor(vp.scrollTop/RH)-5),n=Math.ceil(vp.clientHeight/RH)+10;rows.style.transform='translateY('+(first*RH)+'px)';rows.innerHTML='';
              for(var k=first;k<Math.min(index.length,first+n);k++){rows.appendChild(rowEl(index[k]));}}
            function rowEl(i){var r=OPS[i];var e=el('div',{'class':'row'+(isError(r)?' err':'')+(r[12]?' vendor':'')+(i===target?' target':''),'data-frame':r[0],'data-i':i,id:'row-'+r[0]});
              e.appendChild(el('div',{'class':'mono'},'#'+r[0]));e.appendChild(el('div',{'class':'mono'},fmtTime(base+r[1])));e.appendChild(el('div',null,connLabel(r[2])));
              var ln=el('div',{'class':'lane'});ln.appendChild(el('div',{'class':'arrow '+(r[3]===0?'h2p':r[3]===1?'p2h':'unk')}));e.appendChild(ln);
              var classic=r[4]>=512,what=classic?r[11]:opName(r[4]);var ch=r[6]>=0?charLabel(r[6]):(r[5]>=0?'handle '+hex4(r[5]):'');
              var v=el('div',{'class':'val'});v.appendChild(el('span',{'class':'what'},what));if(ch)v.appendChild(document.createTextNode(' · '+ch));
              if(classic){}else if(r[11])v.appendChild(el('b',null,' '+r[11]));else if(r[10])v.appendChild(el('span',{'class':'mono mut'},' '+r[10]));
              if(r[8])v.appendChild(el('span',{'class':'mut'},' (reply to #'+r[8]+')'));e.title=what+(ch?' · '+ch:'')+(r[11]?' · '+r[11]:'')+(r[10]?' · '+r[10]:'');e.appendChild(v);
              e.appendChild(el('div',{'class':'n mono'},r[7]>=0?fmtLat(r[7]):''));return e;}
            vp.addEventListener('scroll',render);[devSel,chSel,errCb,venCb].forEach(function(x){x.addEventListener('change',filter);});
            seq.go=function(f){var i=rowIndexOfFrame(f);if(i<0)i=OPS.length-1;if(i<0)return;
              if(index.indexOf(i)<0){devSel.value='';chSel.value='';errCb.checked=false;venCb.checked=false;filter();}
              target=i;var k=index.indexOf(i);vp.scrollTop=Math.max(0,k*RH-vp.clientHeight/2);render();
              document.body.dataset.target=String(OPS[i][0]);document.body.dataset.targetWanted=String(f);};
            filter();
            if(!OPS.length)sec.appendChild(el('p',{'class':'mut'},'No ATT, SMP or Classic operations in this capture.'));
          });

          // ---------- GATT ----------
          addView('gatt','GATT',function(sec){
            var named={};S.characteristics.forEach(function(c){var p=(S.connections[c.connection]||{}).peer||'';var k=p+'/'+c.handle;(named[k]=named[k]||{})[c.named_by||'handle only (seen before its discovery)']=1;});
            sec.appendChild(el('p',{'class':'mut'},'Databases rebuilt from the GATT discovery in the capture (or imported with --gatt). "named by" says how the handles seen in operations got their names: discovery, imported, or plugin.'));
            if(!G.devices.length)sec.appendChild(el('p',{id:'gatt-none'},'No GATT discovery in this capture: handles are shown by number. Import a database with --gatt FILE.'));
            G.devices.forEach(function(d){var dd=el('details',{'class':'gatt-dev',open:''});dd.appendChild(el('summary',null,d.address+' — '+d.services.length+' services'));
              d.services.forEach(function(s){var sd=el('details',{open:''});sd.appendChild(el('summary',null,hex4(s.start)+'–'+hex4(s.end)+'  '+(s.name||s.uuid)+(s.name?' ('+s.uuid+')':'')+(s.primary?'':' [secondary]')));
                s.characteristics.forEach(function(c){var cd=el('details');var nk=named[d.address+'/'+c.value_handle];var how=nk?'named by '+Object.keys(nk).join(', '):'not used in operations';
                  cd.appendChild(el('summary',null,hex4(c.value_handle)+'  '+(c.name||c.uuid)+(c.name?' ('+c.uuid+')':'')+'  ['+c.properties.join(', ')+']  — '+how));
                  c.descriptors.forEach(function(x){cd.appendChild(el('div',{'class':'mono',style:'margin-left:18px'},hex4(x.handle)+'  '+(x.name||x.uuid)));});sd.appendChild(cd);});
                dd.appendChild(sd);});sec.appendChild(dd);});
          });

          // ---------- characteristics ----------
          addView('characteristics','Characteristics',function(sec){
            var bounds=[0,100,200,500,1e3,2e3,5e3,1e4,2e4,5e4,1e5,2e5,5e5,1e6,2e6,5e6,1e7];
            var t=el('table',{id:'char-table'});var h=el('tr');['conn','handle','service / characteristic','named by','reads','writes req','writes cmd','notif.','indic.','errors','bytes → server','bytes ← server','latency min / median / p95 / max','latency histogram'].forEach(function(x){h.appendChild(el('th',null,x));});t.appendChild(h);
            S.characteristics.forEach(function(c,i){var tr=el('tr',{'data-char':i,'data-conn':c.connection,'data-handle':c.handle});
              function td(v,cls){tr.appendChild(el('td',{'class':cls||''},v));}
              td(connLabel(c.connection),'nw');td(hex4(c.handle),'mono');td([c.service_name||c.service,charLabel(i)].filter(Boolean).join(' / '));td(c.named_by||'—','mut');
              td(c.reads,'n reads');td(c.write_requests,'n wreq');td(c.write_commands,'n wcmd');td(c.notifications,'n notif');td(c.indications,'n ind');td(c.errors,'n errs'+(c.errors?' err':''));
              td(c.bytes_to_server,'n');td(c.bytes_from_server,'n');
              var L=c.latency;td(L?fmtLat(L.min_us)+' / '+fmtLat(L.median_us)+' / '+fmtLat(L.p95_us)+' / '+fmtLat(L.max_us)+' ('+L.count+')':'','n');
              var cell=el('td');if(L){var mx=Math.max.apply(null,L.histogram),s=svg('svg',{width:170,height:38,'class':'hist'});
                [[4,'1ms'],[7,'10ms'],[10,'100ms'],[13,'1s']].forEach(function(t){s.appendChild(svg('text',{x:t[0]*10,y:37,'font-size':8,fill:'#667085'},t[1]));});
                L.histogram.forEach(function(n,k){var bh=n?Math.max(2,n/mx*24):0;var r=svg('rect',{x:k*10,y:26-bh,width:8,height:bh,'class':bounds[k]>=1e5?'slow':''});
                  r.appendChild(svg('title',{},n+' between '+fmtLat(bounds[k],true)+' and '+(k+1<bounds.length?fmtLat(bounds[k+1],true):'∞')));s.appendChild(r);});
                s.appendChild(svg('line',{x1:0,x2:170,y1:26.5,y2:26.5,stroke:'#98a2b3'}));cell.appendChild(s);}tr.appendChild(cell);t.appendChild(tr);});
            sec.appendChild(t);if(!S.characteristics.length)sec.appendChild(el('p',{'class':'mut'},'No characteristic was read, written or notified.'));
          });

          // ---------- sensors ----------
          // Numeric fields plugins decoded from advertising data (stats' sensor table), per
          // device, each charted over the capture's span. The page holds at most 512 buckets a
          // field (first, min, max, last of each): a column's range is drawn, so a long capture
          // stays small and a spike stays visible.
          var SEN=S.sensors||[],SER=data('sensors')||[];
          if(SEN.length){var sdev={};SEN.forEach(function(x){sdev[x.address]=1;});var nSenDev=Object.keys(sdev).length;
            count('sensors',nSenDev,'sensor devices');
            addView('sensors','Sensors ('+nSenDev+')',function(sec){
              var t0=S.first_us||0,t1=Math.max(S.last_us||0,t0+1),names={};S.devices.forEach(function(d){names[d.address]=d.names;});
              sec.appendChild(el('p',{'class':'mut',id:'sensors-note'},SEN.length+' numeric field'+(SEN.length===1?'':'s')+' of '+nSenDev+' device'+(nSenDev===1?'':'s')+', decoded by plugins from advertising data. Each chart spans the capture; a column shows the range of its readings (min to max).'));
              function fmtV(v,s){if(v==null)return 'n/a';return s.decimals!=null?v.toFixed(s.decimals):String(+v.toPrecision(8));}
              function fmtTick(v){return String(+v.toPrecision(6));}
              function ticks(a,b,n){var st=Math.pow(10,Math.floor(Math.log10((b-a)/n))),e=(b-a)/n/st;st*=e>=5?5:e>=2?2:1;var out=[];
                for(var v=Math.ceil(a/st)*st;v<=b+st*1e-9;v+=st)out.push(+v.toPrecision(12));return out;}
              function chart(i){var s=SEN[i],ser=SER[i]||{t0_us:t0,b:[]},P=ser.b,base=ser.t0_us;
                var card=el('div',{'class':'sensor-card','data-field':s.field,'data-i':i,'data-count':s.count,'data-points':P.length});
                card.appendChild(el('div',{'class':'sensor-title'},s.field+(s.unit?' ('+s.unit+')':'')));
                card.appendChild(el('div',{'class':'mut sensor-sum'},s.count.toLocaleString('en')+' reading'+(s.count===1?'':'s')+(s.count?' · min '+fmtV(s.min,s)+' · max '+fmtV(s.max,s)+' · last '+fmtV(s.last,s):'')+(s.na?' · '+s.na+' n/a':'')));
                if(s.count&&!P.length)card.appendChild(el('div',{'class':'mut'},'Not charted: the page charts the first 256 fields a capture gives.'));
                if(!s.count||!P.length)return card;
                var W=380,H=140,L=50,R=12,T=10,B=22,lo=s.min,hi=s.max;if(hi===lo){lo-=Math.abs(lo)*0.05||1;hi+=Math.abs(hi)*0.05||1;}var pd=(hi-lo)*0.08;lo-=pd;hi+=pd;
                function x(t){return L+(t-t0)/(t1-t0)*(W-L-R);}function y(v){return T+(hi-v)/(hi-lo)*(H-T-B);}
                var g=svg('svg',{viewBox:'0 0 '+W+' '+H,width:W,height:H,'class':'sensor-chart'});
                ticks(lo,hi,4).forEach(function(v){g.appendChild(svg('line',{x1:L,x2:W-R,y1:y(v),y2:y(v),stroke:'#eaecf0'}));
                  g.appendChild(svg('text',{x:L-5,y:y(v)+3.5,'text-anchor':'end','font-size':10,fill:'#667085'},fmtTick(v)));});
                g.appendChild(svg('line',{x1:L,x2:L,y1:T,y2:H-B,stroke:'#98a2b3'}));g.appendChild(svg('line',{x1:L,x2:W-R,y1:H-B+0.5,y2:H-B+0.5,stroke:'#98a2b3'}));
                // Time ticks at round times of day (µs steps from 1 ms to a day), 3 to 6 of them.
                var steps=[1e3,2e3,5e3,1e4,2e4,5e4,1e5,2e5,5e5,1e6,2e6,5e6,1e7,15e6,3e7,6e7,12e7,3e8,6e8,9e8,18e8,36e8,72e8,108e8,216e8,432e8,864e8,1728e8,6048e8,2592e9],st=steps[steps.length-1];
                for(var k=0;k<steps.length;k++){if((t1-t0)/steps[k]<=6){st=steps[k];break;}}
                var cut=st<1e6?12:st<6e7?8:5;
                var right=-1e9;   // labels that would touch the one before are left out (the tick stays)
                for(var t=Math.ceil((t0+OFF)/st)*st-OFF;t<=t1;t+=st){var xt=x(t);g.appendChild(svg('line',{x1:xt,x2:xt,y1:H-B,y2:H-B+3,stroke:'#98a2b3'}));
                  var lab=st>=216e8?fmtTime(t,true).slice(5,16):fmtTime(t).slice(0,cut),lw=lab.length*5.6,an=xt<L+20?'start':xt>W-R-20?'end':'middle';
                  var lx=an==='start'?xt:an==='end'?xt-lw:xt-lw/2;if(lx<right+6)continue;right=lx+lw;
                  g.appendChild(svg('text',{x:xt,y:H-7,'text-anchor':an,'font-size':10,fill:'#667085'},lab));}
                // A silence longer than a 25th of the capture breaks the line (bursts stay apart).
                var d='',gap=(t1-t0)/25;P.forEach(function(p,k){var xf=x(base+p[0]),xl=x(base+p[5]),xm=(xf+xl)/2;
                  d+=(k&&p[0]-P[k-1][5]<=gap?'L':'M')+xf.toFixed(1)+' '+y(p[1]).toFixed(1);
                  if(p[6]>1)d+='L'+xm.toFixed(1)+' '+y(p[2]).toFixed(1)+'L'+xm.toFixed(1)+' '+y(p[3]).toFixed(1)+'L'+xl.toFixed(1)+' '+y(p[4]).toFixed(1);});
                g.appendChild(svg('path',{d:d,'class':'line'}));
                if(P.length<=150)P.forEach(function(p){if(p[6]!==1)return;var c=svg('circle',{cx:x(base+p[0]).toFixed(1),cy:y(p[1]).toFixed(1),r:2.5});
                  c.appendChild(svg('title',{},fmtV(p[1],s)+(s.unit?' '+s.unit:'')+' at '+fmtTime(base+p[0])));g.appendChild(c);});
                // Hover: the bucket under the pointer, its value (or range) and time.
                var hv=svg('g',{'class':'hover',visibility:'hidden'}),hl=svg('line',{y1:T,y2:H-B,stroke:'#98a2b3','stroke-dasharray':'3 3'}),ht=svg('text',{y:T+10});
                hv.appendChild(hl);hv.appendChild(ht);g.appendChild(hv);
                g.addEventListener('mousemove',function(ev){var r=g.getBoundingClientRect(),px=(ev.clientX-r.left)*W/r.width,best=-1,bd=1e9;
                  P.forEach(function(p,k){var dd=Math.abs(x(base+(p[0]+p[5])/2)-px);if(dd<bd){bd=dd;best=k;}});if(best<0)return;var p=P[best],xm=x(base+(p[0]+p[5])/2);
                  hl.setAttribute('x1',xm);hl.setAttribute('x2',xm);ht.setAttribute('x',xm<W/2?xm+4:xm-4);ht.setAttribute('text-anchor',xm<W/2?'start':'end');
                  ht.textContent=(p[6]>1?fmtV(p[2],s)+'…'+fmtV(p[3],s)+' ('+p[6]+' readings)':fmtV(p[1],s))+(s.unit?' '+s.unit:'')+' at '+fmtTime(base+p[0]).slice(0,12);hv.setAttribute('visibility','visible');});
                g.addEventListener('mouseleave',function(){hv.setAttribute('visibility','hidden');});
                card.appendChild(g);return card;}
              var groups=[],byAddr={};
              SEN.forEach(function(s,i){if(byAddr[s.address]===undefined){byAddr[s.address]=groups.length;groups.push({address:s.address,rows:[]});}groups[byAddr[s.address]].rows.push(i);});
              groups.forEach(function(gr){var box=el('div',{'class':'sensor-dev','data-address':gr.address});var nm=names[gr.address]||[],msgs={};
                gr.rows.forEach(function(i){msgs[SEN[i].plugin+' '+SEN[i].message]=1;});
                box.appendChild(el('h3',null,gr.address+(nm.length?' “'+nm.join('”, “')+'”':'')+' — '+Object.keys(msgs).join(', ')));
                var grid=el('div',{'class':'sensor-grid'});gr.rows.forEach(function(i){grid.appendChild(chart(i));});box.appendChild(grid);sec.appendChild(box);});
            });}


        """#

    /// The Fuzz view (`report CAPTURE --fuzz DIR`), embedded only then: each finding of
    /// `bluesift fuzz` (its findings.json, FuzzSummary) with the device's reaction, the
    /// reproduction rate, the mutations with their fields by name, and the minimised steps.
    static let fuzzView = #"""
          // ---------- Fuzz ----------
          var FZ=data('fuzz'),FZDIR=(data('fuzz-meta')||{}).dir||'';
          if(FZ){var FF=FZ.findings||[];
            count('fuzz-findings',FF.length,'fuzz findings',true);
            function fzTarget(t){return t.characteristic?t.characteristic+(t.descriptor?'/'+t.descriptor:''):hex4(t.handle);}
            function fzAction(a){var s=a.kind;if(a.op)s+=' ('+a.op+')';if(a.opcode!=null)s+=' opcode 0x'+pad(a.opcode.toString(16),2);s+=' '+fzTarget(a.target);if(a.count!=null)s+=' ×'+a.count;if(a.value)s+=' '+a.value;return s;}
            function fzReaction(r){var s=r.kind.replace(/_/g,' ');if(r.code!=null)s+=': '+(r.code_name||'code')+' (0x'+pad(r.code.toString(16),2)+')';if(r.detail)s+=(r.code==null?': ':', ')+r.detail;return s;}
            addView('fuzz','Fuzz ('+FF.length+')',function(sec){
              var head=el('p',{'class':'mut',id:'fuzz-run'},(FZ.capture?FZ.capture+' · ':'')+(FZ.seed!=null?'seed '+FZ.seed+' · ':'')+(FZ.blind?'blind (bytes, not fields) · ':'')+
                (FZ.variants!=null?FZ.variants+' variants (first round '+FZ.planned+') · '+FZ.connections+' connections · ':'')+(FZ.interrupted?'interrupted (Ctrl-C): what was found so far · ':'')+FF.length+' finding'+(FF.length===1?'':'s')+(FZDIR?' in '+FZDIR:''));
              sec.appendChild(head);
              if(FZ.baseline&&FZ.baseline.length)sec.appendChild(el('p',{'class':'mut',id:'fuzz-baseline'},'The recording itself shows (not findings): '+FZ.baseline.join('; ')));
              if(!FF.length)sec.appendChild(el('p',{'class':'ok'},'No finding: the device answered every variant as it answered the recording.'));
              FF.forEach(function(f){var rate=f.runs?f.reproduced/f.runs:0;
                var box=el('div',{'class':'sensor-card fuzz-finding',id:'fuzz-finding-'+f.id,'data-kind':f.reaction.kind,'data-code':f.reaction.code!=null?f.reaction.code:'','data-reproduced':f.reproduced,'data-runs':f.runs,'data-steps':f.steps.length,style:'margin:10px 0;padding:8px 12px'});
                var h=el('h3',{style:'margin:0 0 4px'},'Finding '+f.id+': ');h.appendChild(el('span',{'class':'err fuzz-reaction'},fzReaction(f.reaction)));box.appendChild(h);
                // Reproduction rate: the minimised steps run again --reruns times.
                var rr=el('div',{'class':'fuzz-rate'});var bar=el('span',{style:'display:inline-block;vertical-align:middle;width:120px;height:10px;border-radius:2px;background:#eaecf0;margin-right:8px;position:relative'});
                bar.appendChild(el('span',{style:'position:absolute;left:0;top:0;bottom:0;border-radius:2px;background:'+(rate>=0.9?'#32d583':rate>=0.5?'#fdb022':'#f97066')+';width:'+Math.round(rate*120)+'px'}));rr.appendChild(bar);
                rr.appendChild(document.createTextNode(f.runs?'reproduced in '+f.reproduced+' of '+f.runs+' runs ('+Math.round(rate*100)+' %)':'not re-run (the device could no longer be reached)'));box.appendChild(rr);
                box.appendChild(el('div',{'class':'mut'},'found by variant '+f.variant+' (seed '+f.seed+'); the reaction came at its step '+f.at+' of '+f.original_steps+'; minimised to '+f.steps.length+' step'+(f.steps.length===1?'':'s')+' after the recorded set-up'));
                // The mutations, with the plugin fields by name and the values sent.
                var mt=el('table',{'class':'fuzz-mutations',style:'margin-top:6px'}),mh=el('tr');['layer','mutation','message','fields sent'].forEach(function(c){mh.appendChild(el('th',null,c));});mt.appendChild(mh);
                (f.mutations||[]).forEach(function(m){var tr=el('tr',{'data-layer':m.layer});tr.appendChild(el('td',null,m.layer));tr.appendChild(el('td',{style:'word-break:break-all'},m.summary));tr.appendChild(el('td',null,m.message||''));
                  var fd=el('td',{'class':'mono',style:'word-break:break-all'});Object.keys(m.fields||{}).sort().forEach(function(k,i){fd.appendChild(el('span',{'class':'fuzz-field','data-field':k,'data-value':m.fields[k]},(i?', ':'')+(m.message?m.message+'.':'')+k+' = '+m.fields[k]));});tr.appendChild(fd);mt.appendChild(tr);});
                box.appendChild(mt);
                var st=el('table',{'class':'fuzz-steps',style:'margin-top:6px'}),sh=el('tr');['step','sent','recorded step','changed'].forEach(function(c){sh.appendChild(el('th',null,c));});st.appendChild(sh);
                f.steps.forEach(function(a,i){var tr=el('tr',{'data-step':i+1,'class':a.mutation?'fuzz-mutated':''});tr.appendChild(el('td',{'class':'n'},i+1));tr.appendChild(el('td',{'class':'mono',style:'word-break:break-all'},fzAction(a)));
                  tr.appendChild(el('td',{'class':'n'},a.step!=null?a.step:'—'));tr.appendChild(el('td',{'class':a.mutation?'err':'mut',style:'word-break:break-all'},a.mutation||'as recorded'));st.appendChild(tr);});
                box.appendChild(st);
                var files=el('div',{'class':'mono fuzz-files',style:'margin-top:6px'});
                if(f.reproducer)files.appendChild(el('div',null,'bluesift replay '+(FZDIR?FZDIR+'/':'')+f.reproducer+' --transport …   (the reproducer capture)'));
                if(f.json)files.appendChild(el('div',{'class':'mut'},(FZDIR?FZDIR+'/':'')+f.json));
                box.appendChild(files);sec.appendChild(box);});
            });}
        """#

    static let jsAfterViews = #"""
          // ---------- problems ----------
          addView('problems','Problems ('+nProblems+')',function(sec){
            var p=el('p',null,(S.problem_counts||[]).map(function(k){return k.kind.replace(/_/g,' ')+': '+k.count;}).join(' · ')||'No problems found.');sec.appendChild(p);
            if(S.problems_not_listed)sec.appendChild(el('p',{'class':'mut'},S.problems_not_listed+' more problems are not listed (cap).'));
            var ul=el('ul',{id:'problems'});
            S.problems.forEach(function(x){var li=el('li',{'data-kind':x.kind,'data-frame':x.frame});li.appendChild(frameLink(x.frame));
              li.appendChild(el('span',{'class':x.kind==='att_error'||x.kind==='smp_pairing_failed'?'err':''},' '+x.kind.replace(/_/g,' ')+': '+x.message));
              if(x.connection!=null)li.appendChild(el('span',{'class':'mut'},' — '+connLabel(x.connection)));ul.appendChild(li);});
            sec.appendChild(ul);
            if(S.failed_connections.length){sec.appendChild(el('h3',null,'Failed or cancelled connection attempts'));var u2=el('ul',{id:'failed-connections'});
              S.failed_connections.forEach(function(f){var li=el('li');li.appendChild(frameLink(f.frame));li.appendChild(document.createTextNode(' '+(f.peer||'')+' '+f.outcome.replace(/_/g,' ')+(f.status_name?' ('+f.status_name+')':'')));u2.appendChild(li);});sec.appendChild(u2);}
          });

          function route(){var h=location.hash.replace(/^#/,'');var m=/^frame=(\d+)/.exec(h);
            if(m){show('sequence');seq.go(+m[1]);return;}var v=/^view=(\w+)/.exec(h);show(v?v[1]:'timeline')||show('timeline');}
          window.addEventListener('hashchange',route);route();
        }

        // ---------- replay report ----------
        function replayReport(){
          var R=data('replay');document.body.dataset.kind='replay';
          var sm=R.summary||{};$('facts').textContent=(meta.file||'')+(R.device?' · device '+R.device:'')+(R.complete?'':' · run ended early');
          function count(id,n,label,bad){var d=el('span',{'class':'count'+(bad&&n?' bad':''),id:'n-'+id,'data-value':n});d.appendChild(el('b',null,n));d.appendChild(document.createTextNode(label));$('counts').appendChild(d);}
          count('steps',sm.steps||0,'steps');count('matched',sm.matched||0,'matched');count('mismatched',sm.mismatched||0,'mismatched',true);count('missing',sm.missing||0,'missing',true);count('unexpected',sm.unexpected||0,'unexpected',true);
          if(R.fault){$('quality').appendChild(el('div',{'class':'advice'},'Run stopped: '+R.fault.message+(R.fault.step!=null?' (step '+R.fault.step+')':'')));}
          // Character-level difference: common prefix and suffix plain, the middle highlighted.
          function diff(a,b,cell){a=a||'';b=b||'';var p=0;while(p<a.length&&p<b.length&&a[p]===b[p])p++;var s=0;while(s<a.length-p&&s<b.length-p&&a[a.length-1-s]===b[b.length-1-s])s++;
            function part(str,cls){var d=el('div',{'class':'mono'});d.appendChild(document.createTextNode(str.slice(0,p)));d.appendChild(el('span',{'class':cls},str.slice(p,str.length-s)));d.appendChild(document.createTextNode(str.slice(str.length-s)));return d;}
            var e=part(a,'diff-del');e.insertBefore(document.createTextNode('expected '),e.firstChild);var g=part(b,'diff-add');g.insertBefore(document.createTextNode('got      '),g.firstChild);cell.appendChild(e);cell.appendChild(g);}
          addView('steps','Steps',function(sec){var t=el('table',{id:'replay-steps'});var h=el('tr');['step','frame','kind','handle','characteristic','sent','status','expected vs got','ms'].forEach(function(x){h.appendChild(el('th',null,x));});t.appendChild(h);
            (R.steps||[]).forEach(function(s){var tr=el('tr',{'data-step':s.index,'data-status':s.status});function td(v,c){var d=el('td',{'class':c||''},v);tr.appendChild(d);return d;}
              td(s.index,'n');td(s.frame,'n');td(s.kind+(s.op?' ('+s.op+')':''));td(s.handle!=null?hex4(s.handle)+(s.live_handle!=null&&s.live_handle!==s.handle?' → '+hex4(s.live_handle):''):'','mono');
              td(s.characteristic||s.service||'');var sent=td(s.vendor||s.sent||'','mono');td(s.status+(s.reason?': '+s.reason:''),'status-'+s.status);
              var dc=td('');(s.differences||[]).forEach(function(d){var w=el('div',{'class':'mut'},d.status+' '+d.what+(d.message?' '+d.message:'')+(d.field?'.'+d.field:'')+(d.handle!=null?' '+hex4(d.handle):''));dc.appendChild(w);diff(d.expected,d.got,dc);});
              if(!(s.differences||[]).length&&s.answers&&s.answers.length)dc.appendChild(el('div',{'class':'mono mut'},s.answers.join(' | ')));
              td(s.elapsed_ms!=null?s.elapsed_ms.toFixed(1):'','n');t.appendChild(tr);});sec.appendChild(t);});
          addView('remapping','Remapping ('+(R.remapped||[]).length+')',function(sec){var t=el('table',{id:'replay-remap'});var h=el('tr');['capture handle','live handle','service / characteristic / descriptor'].forEach(function(x){h.appendChild(el('th',null,x));});t.appendChild(h);
            (R.remapped||[]).forEach(function(m){var tr=el('tr');tr.appendChild(el('td',{'class':'mono'},hex4(m.from)));tr.appendChild(el('td',{'class':'mono'},hex4(m.to)));tr.appendChild(el('td',null,[m.service,m.characteristic,m.descriptor].filter(Boolean).join(' / ')));t.appendChild(tr);});
            sec.appendChild(t);if(!(R.remapped||[]).length)sec.appendChild(el('p',{'class':'mut'},'No handle moved: the live device has the capture\'s handles.'));});
          function route(){var v=/^#view=(\w+)/.exec(location.hash);show(v?v[1]:'steps')||show('steps');}
          window.addEventListener('hashchange',route);route();
        }

        if(meta.kind==='replay')replayReport();else captureReport();
        document.body.dataset.ready='1';
        // Time from navigation start to a rendered page (scripts/bench.sh reads it).
        document.body.dataset.renderMs=String(Math.round(performance.now()));
        })();
        """#
}
