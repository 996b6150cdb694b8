#!/usr/bin/env node
// tests/kernel/ws_peer_node.js — the WebSocket server of tests/kernel/ws_node.sh:
// Node's `ws` module (Debian's node-ws: NODE_PATH=/usr/share/nodejs), run inside
// the test's network namespace. The same job as ws_peer.py with another
// implementation's framing:
//   - waits for the client's subscription (a text message; checked against
//     --expect-sub), then sends --count messages: first every boundary size
//     (0, 1, 125, 126, 127, 65535, 65536 bytes) as text and binary, whole and
//     fragmented, then a seeded mix (70 % 1..256 B, 20 % 257..4096 B,
//     8 % 4097..16384 B, 2 % 16385..65536 B; half text, half binary), a boundary
//     size again every 97th message;
//   - every --frag-every-th message fragmented by the server (send with
//     fin: false, then fin: true), 2..6 fragments cut at random BYTE offsets, so
//     text fragments split UTF-8 characters (the client validates UTF-8 across
//     fragments); a ping between two fragments of every third fragmented
//     message;
//   - a ping (unique payload, 4..125 bytes) every --ping-every messages; the
//     pongs are matched against the pings in order;
//   - then close(1000, "done"), and the client's close code is recorded.
// With --serve N the first N connections get that transfer each (the same
// messages); later connections (the client reconnects) are held open, idle.
// wss:// with --tls-cert / --tls-key: the ws server on an https server
// (https.createServer) with that certificate, TLS --tls-min .. --tls-max (1.2
// or 1.3; Node's session tickets on); --deflate 1: permessage-deflate accepted
// (ws's perMessageDeflate: true: every message compressed, one context for
// the connection); --deflate 2: with server_no_context_takeover, which makes
// ws compress only messages of 1 KiB and more (its threshold), so compressed
// and plain messages alternate; 0 (default): off.
// --result FILE: JSON with the same fields as ws_peer.py's (with --serve N, the
// SHA-256s and counts over all N transfers, the last close code; "conns": per
// connection Host, extensions offered / agreed, TLS version, cipher, SNI,
// ALPN protocol selected (https' default: http/1.1), resumed). Exit 0 when the transfers completed, 1 on an error, 2 when nothing
// connected within --timeout.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const https = require('https');
const { WebSocketServer } = require('ws');

const BOUNDARY = [0, 1, 125, 126, 127, 65535, 65536];

function parseArgs(argv) {
  const a = { port: 0, count: 1000, seed: 1, fragEvery: 10, pingEvery: 50, expectSub: null, result: null,
    readyFile: null, timeout: 60, serve: 1, tlsCert: null, tlsKey: null, tlsMin: '1.2', tlsMax: '1.3', deflate: 0 };
  const names = { '--port': 'port', '--count': 'count', '--seed': 'seed', '--frag-every': 'fragEvery',
    '--ping-every': 'pingEvery', '--expect-sub': 'expectSub', '--result': 'result', '--ready-file': 'readyFile',
    '--timeout': 'timeout', '--serve': 'serve', '--tls-cert': 'tlsCert', '--tls-key': 'tlsKey', '--tls-min': 'tlsMin',
    '--tls-max': 'tlsMax', '--deflate': 'deflate' };
  const strings = ['expectSub', 'result', 'readyFile', 'tlsCert', 'tlsKey', 'tlsMin', 'tlsMax'];
  for (let i = 2; i < argv.length; i += 2) {
    const k = names[argv[i]];
    if (k === undefined || i + 1 >= argv.length) {
      process.stderr.write('usage: ws_peer_node.js --port P --result FILE [--count N] [--seed S] ' +
        '[--frag-every K] [--ping-every K] [--expect-sub TEXT] [--ready-file F] [--timeout S] [--serve N] ' +
        '[--tls-cert PEM --tls-key PEM [--tls-min 1.2|1.3] [--tls-max 1.2|1.3]] [--deflate 0|1|2]\n');
      process.exit(64);
    }
    a[k] = strings.includes(k) ? argv[i + 1] : Number(argv[i + 1]);
  }
  if (!a.port || !a.result) {
    process.stderr.write('--port and --result are required\n');
    process.exit(64);
  }
  if (!a.tlsCert !== !a.tlsKey || !['1.2', '1.3'].includes(a.tlsMin) || !['1.2', '1.3'].includes(a.tlsMax)) {
    process.stderr.write('--tls-cert and --tls-key go together; --tls-min / --tls-max: 1.2 or 1.3\n');
    process.exit(64);
  }
  return a;
}

// mulberry32: a small seeded PRNG
function prng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { random: next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)) };
}

class Gen {
  constructor(seed, fragEvery) {
    this.r = prng(seed);
    this.fragEvery = fragEvery;
    const chars = [];
    for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}[]:,."') chars.push(c);
    for (const [c, w] of [['é', 3], ['ü', 2], ['ß', 2], ['€', 3], ['中', 2], ['₿', 1], ['😀', 2], ['🚀', 1]])
      for (let k = 0; k < w; k++) chars.push(c);
    const parts = [];
    for (let i = 0; i < 200000; i++) parts.push(chars[Math.floor(this.r.random() * chars.length)]);
    this.pool = Buffer.from(parts.join(''), 'utf8');
    this.first = [];
    for (const size of BOUNDARY)
      for (const op of [1, 2])
        for (const frag of [false, true]) this.first.push([size, op, frag]);
  }

  text(n) { // valid UTF-8 of exactly n bytes
    if (n === 0) return Buffer.alloc(0);
    const p = this.pool;
    let s = this.r.int(0, p.length - n - 9);
    while ((p[s] & 0xc0) === 0x80) s++;
    let b = Buffer.from(p.subarray(s, s + n));
    let j = b.length - 1;
    while (j >= 0 && (b[j] & 0xc0) === 0x80) j--;
    if (j >= 0) {
      const lead = b[j];
      const need = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
      if (j + need > b.length) b = b.subarray(0, j);
    }
    return Buffer.concat([b, Buffer.alloc(n - b.length, 'x')]);
  }

  size() {
    const x = this.r.random();
    if (x < 0.70) return this.r.int(1, 256);
    if (x < 0.90) return this.r.int(257, 4096);
    if (x < 0.98) return this.r.int(4097, 16384);
    return this.r.int(16385, 65536);
  }

  message(i) {
    let size, op, frag;
    if (i < this.first.length) {
      [size, op, frag] = this.first[i];
    } else if (i % 97 === 0) {
      size = BOUNDARY[this.r.int(0, BOUNDARY.length - 1)];
      op = this.r.int(1, 2);
      frag = this.r.random() < 0.3;
    } else {
      size = this.size();
      op = this.r.int(1, 2);
      frag = this.fragEvery > 0 && i % this.fragEvery === 0;
    }
    return [op, op === 1 ? this.text(size) : crypto.randomBytes(size), frag];
  }
}

function main() {
  const a = parseArgs(process.argv);
  const res = {
    connections: 0, served: false, subscription: null, path: null, sent: 0, bytes: 0, sha256: null,
    sha256_lens: null, text: 0, binary: 0, fragmented: 0, fragments: 0, pings: 0, pings_in_fragmented: 0,
    pongs: 0, pongs_sent: 0, pong_mismatch: 0, boundary_sent: {}, min_len: null, max_len: null, client_close_code: null,
    client_close_reason: null, send_s: null, error: null, split_utf8_fragments: 0, served_conns: 0, conns: [],
  };
  let finished = false;
  // over every transfer (--serve N), in order
  const sha = crypto.createHash('sha256');
  const shaLens = crypto.createHash('sha256');
  let sendNs = 0n;
  const wsOpts = { perMessageDeflate: a.deflate === 2 ? { serverNoContextTakeover: true } : a.deflate === 1,
    maxPayload: 1 << 20 };
  let httpsServer = null;
  let wss;
  if (a.tlsCert) {
    httpsServer = https.createServer({ cert: fs.readFileSync(a.tlsCert), key: fs.readFileSync(a.tlsKey),
      minVersion: 'TLSv' + a.tlsMin, maxVersion: 'TLSv' + a.tlsMax });
    wss = new WebSocketServer({ server: httpsServer, ...wsOpts });
  } else {
    wss = new WebSocketServer({ host: '0.0.0.0', port: a.port, ...wsOpts });
  }

  function finish(code) {
    if (finished) return;
    finished = true;
    const tmp = a.result + '.tmp';
    fs.writeFileSync(tmp, JSON.stringify(res, null, 1));
    fs.renameSync(tmp, a.result);
    for (const c of wss.clients) c.terminate();
    wss.close();
    if (httpsServer) httpsServer.close();
    process.exitCode = code;
    setTimeout(() => process.exit(code), 200).unref();
  }

  const timer = setTimeout(() => {
    res.error = res.error || 'timeout: ' + (res.connections === 0 ? 'no connection' : 'transfer not done') +
      ' after ' + a.timeout + ' s';
    finish(res.connections === 0 ? 2 : 1);
  }, a.timeout * 1000);

  const ready = () => {
    if (a.readyFile) fs.writeFileSync(a.readyFile, process.pid + '\n');
  };
  if (httpsServer) {
    httpsServer.on('error', (e) => { res.error = 'server: ' + e.message; finish(1); });
    httpsServer.listen(a.port, '0.0.0.0', ready);
  } else {
    wss.on('listening', ready);
  }
  wss.on('error', (e) => { res.error = 'server: ' + e.message; finish(1); });

  wss.on('connection', (ws, req) => {
    res.connections++;
    const sock = req.socket;
    const c = sock.getProtocol ? sock.getCipher() : null;
    res.conns.push({
      host: req.headers.host || null,
      offered_extensions: req.headers['sec-websocket-extensions'] ? [req.headers['sec-websocket-extensions']] : [],
      extensions: ws.extensions ? ws.extensions.split(',').map((e) => e.split(';')[0].trim()).filter((e) => e) : [],
      tls: sock.getProtocol ? { version: sock.getProtocol(), cipher: c ? c.standardName || c.name : null,
        resumed: sock.isSessionReused(), sni: sock.servername || null, alpn: sock.alpnProtocol || null } : null,
    });
    if (res.connections > a.serve || finished) return; // a reconnect: held open, idle
    let served = false;
    res.path = req.url;
    const pings = []; // payloads of the pings not yet answered, in order
    // ws answers a ping (before emitting 'ping') only while the connection is
    // OPEN: the client's pings that arrive after our close frame go unanswered.
    // The client must have received exactly this many pongs (they precede the
    // close frame on the wire).
    ws.on('ping', () => { if (ws.readyState === ws.OPEN) res.pongs_sent++; });
    ws.on('pong', (data) => {
      const want = pings.shift();
      if (want !== undefined && Buffer.compare(want, data) === 0) res.pongs++;
      else res.pong_mismatch++;
    });
    ws.on('error', (e) => { res.error = res.error || 'connection: ' + e.message; });
    ws.on('close', (code, reason) => {
      res.client_close_code = code;
      res.client_close_reason = reason.toString();
      if (!served && !res.error) res.error = 'the client closed before the transfer was done (' + code + ')';
      if (res.served || res.error) {
        clearTimeout(timer);
        finish(res.served && !res.error ? 0 : 1);
      }
    });
    const pr = prng(a.seed + 1);
    let pingNo = 0;
    function ping(inFragmented) {
      pingNo++;
      const n = pingNo === 1 ? 125 : pr.int(4, 125);
      const data = Buffer.alloc(n);
      data.writeUInt32BE(pingNo, 0);
      for (let k = 4; k < n; k++) data[k] = pr.int(0, 255);
      pings.push(data);
      ws.ping(data);
      res.pings++;
      if (inFragmented) res.pings_in_fragmented++;
    }
    ws.once('message', (sub, isBinary) => {
      res.subscription = isBinary ? '(binary)' : sub.toString();
      if (a.expectSub !== null && res.subscription !== a.expectSub) {
        res.error = 'subscription ' + JSON.stringify(res.subscription) + ', expected ' + JSON.stringify(a.expectSub);
        ws.close(1008, 'bad subscription');
        return;
      }
      run().catch((e) => { res.error = res.error || 'send: ' + e.message; ws.terminate(); });
    });

    async function run() {
      const gen = new Gen(a.seed, a.fragEvery);
      const fr = prng(a.seed + 2);
      const t0 = process.hrtime.bigint();
      let nFrag = 0;
      const sent = (cb) => new Promise((resolve, reject) => cb((e) => (e ? reject(e) : resolve())));
      for (let i = 0; i < a.count; i++) {
        const [op, payload, frag] = gen.message(i);
        const binary = op === 2;
        let last;
        if (frag) {
          nFrag++;
          const k = fr.int(2, 6);
          const cuts = [];
          for (let c = 0; c < k - 1; c++) cuts.push(fr.int(0, payload.length));
          cuts.sort((x, y) => x - y);
          cuts.push(payload.length);
          let prev = 0;
          for (let c = 0; c < cuts.length; c++) {
            if (nFrag % 3 === 0 && c === 1) ping(true);
            const piece = payload.subarray(prev, cuts[c]);
            if (!binary && cuts[c] < payload.length && (payload[cuts[c]] & 0xc0) === 0x80) res.split_utf8_fragments++;
            last = (cb) => ws.send(piece, { binary, fin: c === cuts.length - 1 }, cb);
            if (c < cuts.length - 1) ws.send(piece, { binary, fin: false });
            prev = cuts[c];
          }
          res.fragmented++;
          res.fragments += cuts.length;
        } else {
          last = (cb) => ws.send(payload, { binary, fin: true }, cb);
        }
        // pace on the socket: wait for the write of every 16th message, and
        // whenever more than 4 MiB are buffered
        if (i % 16 === 15 || ws.bufferedAmount > (4 << 20)) await sent(last);
        else last();
        sha.update(payload);
        const l = Buffer.alloc(5);
        l.writeUInt8(op, 0);
        l.writeUInt32LE(payload.length, 1);
        shaLens.update(l);
        res.sent++;
        res.bytes += payload.length;
        if (binary) res.binary++; else res.text++;
        if (BOUNDARY.includes(payload.length)) {
          const key = payload.length + '/' + (binary ? 'binary' : 'text') + (frag ? '/frag' : '');
          res.boundary_sent[key] = (res.boundary_sent[key] || 0) + 1;
        }
        res.min_len = res.min_len === null ? payload.length : Math.min(res.min_len, payload.length);
        res.max_len = res.max_len === null ? payload.length : Math.max(res.max_len, payload.length);
        if (a.pingEvery > 0 && i % a.pingEvery === a.pingEvery - 1) ping(false);
      }
      sendNs += process.hrtime.bigint() - t0;
      res.send_s = Number(sendNs) / 1e9;
      res.sha256 = sha.copy().digest('hex');
      res.sha256_lens = shaLens.copy().digest('hex');
      served = true;
      res.served_conns++;
      res.served = res.served_conns === a.serve;
      ws.close(1000, 'done'); // the 'close' event (the client's close frame) writes the result
    }
  });
}

main();
