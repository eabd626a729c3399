// tether dashboard: live updates over server-sent events, and the responder's name remembered
// in this browser. The pages work without it; it only adds.
'use strict';
(function () {
  var NAME_KEY = 'tether.responder';

  function savedName() {
    try { return localStorage.getItem(NAME_KEY) || ''; } catch (e) { return ''; }
  }

  function fillNames(root) {
    var name = savedName();
    root.querySelectorAll('input.responder').forEach(function (input) {
      if (!input.value) { input.value = name; }
    });
  }

  document.addEventListener('submit', function (ev) {
    var input = ev.target.querySelector('input.responder:not([type=hidden])');
    if (input && input.value.trim()) {
      try { localStorage.setItem(NAME_KEY, input.value.trim()); } catch (e) { /* private mode */ }
    }
    fillNames(ev.target);
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
      el = document.getElementById(op.id);
      if (el) {
        el.replaceWith(fragment(op.html));
      } else {
        el = document.getElementById(op.target);
        if (el) { el.prepend(fragment(op.html)); }
      }
    }
  }

  function live(url) {
    var status = document.getElementById('live-status');
    var source = new EventSource(url);
    source.addEventListener('open', function () {
      status.textContent = 'live';
      document.body.setAttribute('data-connected', 'true');
    });
    source.addEventListener('error', function () {
      status.textContent = 'reconnecting…';
      document.body.setAttribute('data-connected', 'false');
    });
    source.addEventListener('ops', function (ev) {
      JSON.parse(ev.data).forEach(apply);
      document.body.setAttribute('data-seq', ev.lastEventId);
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    fillNames(document);
    var url = document.body.getAttribute('data-live');
    if (url && window.EventSource) { live(url); }
    setInterval(function () { refreshTimes(document); }, 15000);
  });
}());
