#!/usr/bin/env node
// Loads a Chrome trace into speedscope (an independent viewer, pinned in
// package.json) in headless Chromium and says whether it imported it whole.
//
//   node speedscope_check.js [--expect-broken] TRACE.json[.gz]
//
// speedscope fetches the profile named by `#profileURL=`; Chromium refuses
// fetch() from file:// pages, so a server on 127.0.0.1 (no network needed)
// serves speedscope's release folder and the trace (gunzipped). Chromium
// dumps the DOM once the page is idle and logs the page's console on stderr:
// - imported: the page title is "<trace name> - speedscope", no "Something
//   went wrong", and the console says it imported a Trace Event Format
//   profile;
// - whole: none of speedscope's complaints about slices that do not nest
//   ("Tried to end ... when ... was on the top of the stack", "was still
//   open at end of profile"), which is what a child ending after its parent
//   produces: speedscope then leaves the parent open to the end.
// --expect-broken inverts the verdict on the complaints, for the negative
// control (a trace that breaks the nesting rule must be caught).
//
// Exit: 0 as expected, 1 not, 77 Chromium is missing (ctest: skipped).
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const http = require('http');
const path = require('path');
const zlib = require('zlib');

function findChromium() {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    for (const dir of (process.env.PATH || '').split(':')) {
      const p = path.join(dir, name);
      try {
        fs.accessSync(p, fs.constants.X_OK);
        return p;
      } catch (e) {
        // not here
      }
    }
  }
  return null;
}

function main() {
  const args = process.argv.slice(2);
  const expectBroken = args[0] === '--expect-broken';
  if (expectBroken) args.shift();
  if (args.length !== 1) {
    console.error('usage: node speedscope_check.js [--expect-broken] TRACE.json[.gz]');
    process.exit(2);
  }
  const tracePath = args[0];
  const chromium = findChromium();
  if (chromium === null) {
    console.log('SKIP: no chromium on PATH (Debian: apt-get install chromium)');
    process.exit(77);
  }
  let release;
  try {
    release = path.join(path.dirname(require.resolve('speedscope/package.json',
                                                     { paths: [__dirname] })),
                        'dist', 'release');
  } catch (e) {
    console.log('FAIL: speedscope is not installed under ' + __dirname +
                '/node_modules: run `npm ci --prefix tests/viewers` (scripts/install_deps.sh does)');
    process.exit(1);
  }
  let body = fs.readFileSync(tracePath);
  if (tracePath.endsWith('.gz')) body = zlib.gunzipSync(body);
  const traceName = path.basename(tracePath).replace(/\.gz$/, '');
  const trace = JSON.parse(body.toString('utf8'));
  const processNames = (trace.traceEvents || [])
                           .filter((e) => e.ph === 'M' && e.name === 'process_name')
                           .map((e) => e.args.name);

  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split('?')[0]);
    if (url === '/trace/' + traceName) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(body);
      return;
    }
    const file = path.join(release, path.normalize(url).replace(/^(\.\.[/\\])+/, ''));
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404);
        res.end();
        return;
      }
      const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
                      '.wasm': 'application/wasm' };
      res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
      res.end(data);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const base = 'http://127.0.0.1:' + server.address().port;
    const page = base + '/index.html#profileURL=' + encodeURIComponent(base + '/trace/' + traceName);
    const profileDir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'speedscope_check_'));
    const browser = spawn(chromium, [
      '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--user-data-dir=' + profileDir, '--enable-logging=stderr', '--v=0',
      '--virtual-time-budget=20000', '--dump-dom', page,
    ]);
    let dom = '';
    let log = '';
    browser.stdout.on('data', (d) => { dom += d; });
    browser.stderr.on('data', (d) => { log += d; });
    const timer = setTimeout(() => browser.kill('SIGKILL'), 120000);
    browser.on('close', (code) => {
      clearTimeout(timer);
      server.close();
      fs.rmSync(profileDir, { recursive: true, force: true });
      process.exit(verdict(code, dom, log, traceName, processNames, expectBroken));
    });
  });
}

function verdict(code, dom, log, traceName, processNames, expectBroken) {
  const consoleLines = log.split('\n').filter((l) => l.includes(':CONSOLE'))
                           .map((l) => l.replace(/^.*?"(.*)", source:.*$/, '$1'));
  const complaints = consoleLines.filter((l) => /Tried to end|still open at end of profile/.test(l));
  const problems = [];
  if (code !== 0) problems.push('chromium exited ' + code);
  const title = (dom.match(/<title>(.*?)<\/title>/) || [])[1];
  if (title !== traceName + ' - speedscope') {
    problems.push('page title is ' + JSON.stringify(title) + ', not "' + traceName +
                  ' - speedscope": the profile was not loaded');
  }
  if (dom.includes('Something went wrong')) problems.push('speedscope shows "Something went wrong"');
  if (!consoleLines.some((l) => l.includes('Importing as Trace Event Format profile'))) {
    problems.push('speedscope did not import it as a Trace Event Format profile');
  }
  // The toolbar names the thread shown: "<process name> (pid p), <thread> (tid t)".
  if (processNames.length > 0 && !processNames.some((n) => dom.includes(n))) {
    problems.push('none of the process names ' + JSON.stringify(processNames) +
                  ' appears on the page');
  }
  console.log('speedscope: ' + traceName + ': title ' + JSON.stringify(title) + ', ' +
              complaints.length + ' complaint(s) about slices that do not nest');
  for (const c of complaints.slice(0, 10)) {
    console.log('  speedscope console: ' + (c.length > 240 ? c.slice(0, 120) + ' ... ' + c.slice(-120) : c));
  }
  if (expectBroken) {
    if (complaints.length === 0) problems.push('a trace that breaks the nesting rule drew no complaint');
  } else if (complaints.length > 0) {
    problems.push(complaints.length + ' complaint(s): slices that do not nest');
  }
  for (const p of problems) console.log('FAIL: ' + p);
  if (problems.length === 0) console.log('OK');
  return problems.length === 0 ? 0 : 1;
}

main();
