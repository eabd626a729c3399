// tether dashboard: the token, the pages, the forms, the live updates, and the responder's name
// remembered in this browser.
//
// The token never travels in a cookie: browsers send a cookie of 127.0.0.1 to every server on
// 127.0.0.1 whatever its port, an agent's dev server included. The URL tether printed carries it
// (?token=); this script keeps it in sessionStorage, which only this origin (port included) can
// read, takes it out of the address bar, and sends it as `Authorization: Bearer` with every
// request: the page itself (a navigation gets only a shell without it), each form, the live
// stream (read with fetch, since EventSource cannot send a header).
'use strict';
(function () {
  var NAME_KEY = 'tether.responder';
  var TOKEN_KEY = 'tether.token';
  var kept = null; // the token, when sessionStorage is not available
  var stream = null; // the AbortController of the open live stream

  // The token from the URL, kept for this tab and taken out of the address bar and history.
  function takeToken() {
    var url = new URL(window.location.href);
    var given = url.searchParams.get('token');
    if (given === null) { return; }
    kept = given;
    try { sessionStorage.setItem(TOKEN_KEY, given); } catch (e) { /* kept in memory */ }
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  }

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY) || kept; } catch (e) { return kept; }
  }

  function forget() {
    kept = null;
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* nothing kept */ }
  }

  // Options for a request to this server with the token (never sent elsewhere: every URL used
  // here is this page's own path).
  function withToken(init, headers) {
    headers = headers || {};
    headers.Authorization = 'Bearer ' + token();
    init.headers = headers;
    init.credentials = 'omit';
    init.cache = 'no-store';
    return init;
  }

  function samePath(url) {
    var u = new URL(url, window.location.href);
    return u.origin === window.location.origin ? u.pathname + u.search : null;
  }

  // Says what went wrong: in the shell's line, or else in the page's live-status line.
  function explain(text) {
    var status = document.getElementById('shell-status') || document.getElementById('live-status');
    if (status) { status.textContent = text; }
  }

  var NO_TOKEN = 'Open the dashboard with the URL tether printed: it carries the token, which ' +
    'this tab keeps (never in a cookie).';

  // Fetches a page (or a form's answer) with the token and shows it in place of this one.
  function load(url, init) {
    if (!token()) { explain(NO_TOKEN); return Promise.resolve(); }
    return fetch(url, init).then(function (r) {
      if (r.status === 401) {
        forget();
        explain(NO_TOKEN + ' The token this tab had is not accepted (was tether restarted?).');
        return null;
      }
      return r.text().then(function (html) { show(html, r.url); });
    }).catch(function () {
      explain('The dashboard cannot be reached; is tether still running?');
    });
  }

  function show(html, url) {
    var doc = new DOMParser().parseFromString(html, 'text/html');
    document.title = doc.title;
    document.body.replaceWith(document.adoptNode(doc.body));
    var path = url && samePath(url);
    if (path) { history.replaceState(null, '', path); }
    start();
  }

  function savedName() {
    try { return localStorage.getItem(NAME_KEY) || ''; } catch (e) { return ''; }
  }

  function fillNames(root) {
    var name = savedName();
    root.querySelectorAll('input.responder').forEach(function (input) {
      if (!input.value) { input.value = name; }
    });
  }

  // Forms that change something are sent with the token by fetch; the server answers with the
  // page to show next. A GET form (the runs filter) is a navigation like a link: the shell it
  // gets fetches the page with the token.
  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    var action = samePath(form.action);
    if (!action || form.method.toLowerCase() !== 'post') { return; }
    ev.preventDefault();
    var input = form.querySelector('input.responder:not([type=hidden])');
    if (input && input.value.trim()) {
      try { localStorage.setItem(NAME_KEY, input.value.trim()); } catch (e) { /* private mode */ }
    }
    var data = new FormData(form, ev.submitter || null);
    var buttons = form.querySelectorAll('button');
    buttons.forEach(function (b) { b.disabled = true; });
    load(action, withToken(
      { method: 'POST', body: new URLSearchParams(data) },
      { 'Content-Type': 'application/x-www-form-urlencoded' }
    )).then(function () {
      // Still here when it could not be sent: it may be sent again.
      buttons.forEach(function (b) { b.disabled = false; });
    });
  });

  function ago(ms) {
    var s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
    if (s < 60) { return s + ' s ago'; }
    if (s < 3600) { return Math.floor(s / 60) + ' min ago'; }
    if (s < 86400) { return Math.floor(s / 3600) + ' h ' + Math.floor(s % 3600 / 60) + ' min ago'; }
    return Math.floor(s / 86400) + ' d ago';
  }

  function refreshTimes(root) {
    root.querySelectorAll('time.rel[data-ms]').forEach(function (t) {
      t.textContent = ago(Number(t.getAttribute('data-ms')));
    });
  }

  // The server renders (and escapes) every fragment; here it is only placed.
  function fragment(html) {
    var t = document.createElement('template');
    t.innerHTML = html;
    fillNames(t.content);
    return t.content;
  }

  function apply(op) {
    var el;
    if (op.op === 'append') {
      el = document.getElementById(op.target);
      if (el && !document.getElementById(op.id)) { el.append(fragment(op.html)); }
    } else if (op.op === 'replace') {
      el = document.getElementById(op.target);
      if (el) { el.replaceWith(fragment(op.html)); }
    } else if (op.op === 'upsert') {
      // In place when it is in its list already; else moved (or put) first in that list.
      el = document.getElementById(op.id);
      var list = document.getElementById(op.target);
      if (el && el.parentNode === list) {
        el.replaceWith(fragment(op.html));
      } else {
        if (el) { el.remove(); }
        if (list) { list.prepend(fragment(op.html)); }
      }
    }
  }

  // One server-sent event (the lines between two blank lines).
  function dispatch(block, state) {
    var kind = 'message';
    var data = [];
    block.split('\n').forEach(function (line) {
      if (line === '' || line.charAt(0) === ':') { return; }
      var colon = line.indexOf(':');
      var field = colon < 0 ? line : line.slice(0, colon);
      var value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') { kind = value; }
      if (field === 'data') { data.push(value); }
      if (field === 'id') { state.last = value; }
    });
    if (kind === 'ops' && data.length) {
      JSON.parse(data.join('\n')).forEach(apply);
      document.body.setAttribute('data-seq', state.last);
    }
  }

  function connected(yes) {
    var status = document.getElementById('live-status');
    if (status) { status.textContent = yes ? 'live' : 'reconnecting…'; }
    document.body.setAttribute('data-connected', yes ? 'true' : 'false');
  }

  // The page's live stream, read with fetch (to send the token), resumed after the last event
  // seen (Last-Event-ID) when it drops.
  function live(url) {
    if (stream) { stream.abort(); }
    var control = new AbortController();
    stream = control;
    var state = { last: null, wait: 500 };
    function retry() {
      if (control.signal.aborted) { return; }
      connected(false);
      setTimeout(connect, state.wait);
      state.wait = Math.min(state.wait * 2, 10000);
    }
    function connect() {
      if (control.signal.aborted) { return; }
      var headers = { Accept: 'text/event-stream' };
      if (state.last !== null) { headers['Last-Event-ID'] = state.last; }
      var init = withToken({ signal: control.signal }, headers);
      fetch(url, init).then(function (r) {
        if (!r.ok || !r.body) { throw new Error('HTTP ' + r.status); }
        connected(true);
        state.wait = 500;
        var reader = r.body.getReader();
        var decoder = new TextDecoder();
        var buffer = '';
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) { throw new Error('the stream ended'); }
            buffer += decoder.decode(chunk.value, { stream: true });
            var end = buffer.indexOf('\n\n');
            while (end >= 0) {
              dispatch(buffer.slice(0, end), state);
              buffer = buffer.slice(end + 2);
              end = buffer.indexOf('\n\n');
            }
            return pump();
          });
        }
        return pump();
      }).catch(retry);
    }
    connect();
  }

  // What a page shown needs: the remembered name in its forms, its live stream.
  function start() {
    fillNames(document);
    var url = document.body.getAttribute('data-live');
    if (url) {
      live(url);
    } else if (stream) {
      stream.abort();
      stream = null;
    }
  }

  document.addEventListener('DOMContentLoaded', function () {
    takeToken();
    setInterval(function () { refreshTimes(document); }, 15000);
    if (document.body.hasAttribute('data-shell')) {
      var here = window.location.pathname + window.location.search;
      load(here, withToken({}));
    } else {
      start();
    }
  });
}());
