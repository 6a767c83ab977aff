// ragmeter labelling: keyboard shortcuts and saving with fetch. Every action also works
// without this script, as a plain form post.
(function () {
  "use strict";
  var main = document.querySelector("[data-labeler]");
  var statusBox = document.getElementById("status");
  var csrfMeta = document.querySelector('meta[name="csrf-token"]');
  var csrf = csrfMeta ? csrfMeta.content : "";
  var statusTimer = null;

  function say(text, bad) {
    if (!statusBox) return;
    statusBox.textContent = text;
    statusBox.className = "show" + (bad ? " bad" : "");
    clearTimeout(statusTimer);
    statusTimer = setTimeout(function () { statusBox.className = ""; }, bad ? 4000 : 1200);
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) throw new Error(data.error || ("HTTP " + response.status));
        return data;
      });
    });
  }

  if (!main) return;
  var kind = main.dataset.kind;
  var endpoint = main.dataset.endpoint;
  var queryId = main.dataset.query;
  var low = Number(main.dataset.min), high = Number(main.dataset.max);
  var items = Array.prototype.slice.call(main.querySelectorAll("[data-item]"));
  var current = -1;

  function focusItem(i) {
    if (!items.length) return;
    i = Math.max(0, Math.min(items.length - 1, i));
    if (current >= 0 && items[current]) items[current].classList.remove("current");
    current = i;
    var item = items[i];
    item.classList.add("current");
    item.focus({ preventScroll: true });
    item.scrollIntoView({ block: "nearest", behavior: "auto" });
  }

  function show(item, value) {
    item.dataset.value = value === null || value === undefined ? "" : String(value);
    var badge = item.querySelector("[data-badge]");
    if (badge) badge.textContent = item.dataset.value;
    item.querySelectorAll("button[value]").forEach(function (b) {
      b.setAttribute("aria-pressed", b.value === item.dataset.value ? "true" : "false");
    });
  }

  function showProgress(p) {
    if (!p) return;
    document.querySelectorAll("progress.progress").forEach(function (bar) { bar.max = p.total; bar.value = p.done; });
    document.querySelectorAll(".progress-text").forEach(function (t) { t.textContent = p.done + "/" + p.total + " labelled"; });
  }

  function bodyFor(item, value) {
    var body = { query_id: queryId, doc_id: item.dataset.doc };
    if (kind === "grade") { body.grade = value; } else { body.question = Number(item.dataset.question); body.rating = value; }
    return body;
  }

  // requests go out one after the other, in the order of the keys pressed, so that the
  // server sees the labels and undos in the person's order however fast they type
  var queue = Promise.resolve();
  function send(url, body) {
    var reply = queue.then(function () { return post(url, body); });
    queue = reply.catch(function () {});
    return reply;
  }

  function setValue(i, value) {
    var item = items[i];
    if (!item) return;
    var before = item.dataset.value;
    show(item, value);  // at once; taken back if the server refuses
    if (i === current && i < items.length - 1) focusItem(i + 1);
    send(endpoint, bodyFor(item, value)).then(function (data) {
      showProgress(data.progress);
      say("saved " + value);
    }).catch(function (err) {
      show(item, before === "" ? null : before);
      say(err.message, true);
    });
  }

  function undo() {
    send("/api/undo", { kind: kind }).then(function (data) {
      if (!data.undone) { say("nothing to undo"); return; }
      var u = data.undone;
      var found = -1;
      items.forEach(function (item, i) {
        if (u.query_id === queryId && item.dataset.doc === u.doc_id &&
            (kind === "grade" || Number(item.dataset.question) === u.question)) found = i;
      });
      if (found < 0) { window.location.href = data.url; return; }
      show(items[found], u.value);
      showProgress(data.progress);
      focusItem(found);
      say("undone");
    }).catch(function (err) { say(err.message, true); });
  }

  // evidence spans: text selected inside one passage is saved as characters [start, end)
  // of its stored text, counted in code points as Python indexes strings (not UTF-16
  // units). The server writes the text so that the DOM holds it character for character
  // (a CR as &#13;, which the HTML parser would otherwise turn into LF); the selected text
  // goes along, and the server refuses offsets that do not select it.
  function codePoints(text) { return Array.from(text).length; }

  function selectedSpan(ptext) {
    var sel = window.getSelection();
    if (!sel || sel.isCollapsed || sel.rangeCount !== 1) return null;
    var range = sel.getRangeAt(0);
    if (!ptext.contains(range.startContainer) || !ptext.contains(range.endContainer)) return null;
    var before = document.createRange();
    before.selectNodeContents(ptext);
    before.setEnd(range.startContainer, range.startOffset);
    var text = range.toString();
    var start = codePoints(before.toString());
    var end = start + codePoints(text);
    return end > start ? { start: start, end: end, text: text } : null;
  }

  // the passage's text with the saved spans marked, and their list, as the server drew them
  function showSpans(item, html) {
    if (!html) return;
    var ptext = item.querySelector(".ptext"), list = item.querySelector("[data-spans]");
    if (ptext) ptext.innerHTML = html.ptext;
    if (list) list.innerHTML = html.spans;
  }

  function saveSpan(ptext) {
    var span = selectedSpan(ptext);
    var item = ptext.closest("[data-item]");
    if (!span || !item) return;
    var body = { query_id: queryId, doc_id: item.dataset.doc, start: span.start, end: span.end, text: span.text };
    send("/api/span", body).then(function (data) {
      window.getSelection().removeAllRanges();
      showSpans(item, data.html);
      say("evidence saved");
    }).catch(function (err) { say(err.message, true); });
  }

  function removeSpan(form) {
    var item = form.closest("[data-item]");
    var id = Number(form.querySelector('input[name="id"]').value);
    send("/api/span/remove", { id: id }).then(function (data) {
      if (item) showSpans(item, data.html);
      say("evidence removed");
    }).catch(function (err) { say(err.message, true); });
  }

  if (kind === "grade") {
    main.addEventListener("mouseup", function (event) {
      var ptext = event.target.closest(".ptext");
      if (ptext) saveSpan(ptext);
    });
    main.addEventListener("submit", function (event) {
      var form = event.target.closest("form.span-remove");
      if (!form) return;
      event.preventDefault();
      removeSpan(form);
    });
  }

  function follow(rel) {
    var link = document.querySelector('a[rel="' + rel + '"]');
    if (link) window.location.href = link.href;
  }

  // clicks on the value buttons: save without leaving the page
  main.addEventListener("click", function (event) {
    var button = event.target.closest("button[value]");
    if (!button) return;
    var item = button.closest("[data-item]");
    if (!item) return;
    event.preventDefault();
    var i = items.indexOf(item);
    focusItem(i);
    setValue(i, Number(button.value));
  });
  main.addEventListener("focusin", function (event) {
    var item = event.target.closest("[data-item]");
    if (item && items.indexOf(item) !== current) focusItem(items.indexOf(item));
  });

  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || event.altKey || event.metaKey) return;
    var key = event.key;
    if ((key === "z" || key === "Z") && event.ctrlKey) { event.preventDefault(); undo(); return; }
    if (event.ctrlKey) return;
    if (/^[0-9]$/.test(key)) {
      var value = Number(key);
      if (value < low || value > high) { say("keys " + low + "–" + high, true); return; }
      event.preventDefault();
      if (current < 0) focusItem(0);
      setValue(current, value);
    } else if (key === "ArrowDown" || key === "j") {
      event.preventDefault(); focusItem(current + 1);
    } else if (key === "ArrowUp" || key === "k") {
      event.preventDefault(); focusItem(current - 1);
    } else if (key === "u") {
      event.preventDefault(); undo();
    } else if (key === "n") {
      follow("next");
    } else if (key === "p") {
      follow("prev");
    }
  });

  // start at the passage named in the URL, else at the first one not labelled yet
  var start = 0;
  if (window.location.hash) {
    var target = document.getElementById(window.location.hash.slice(1));
    var holder = target ? (target.matches("[data-item]") ? target : target.querySelector("[data-item]")) : null;
    if (holder) start = items.indexOf(holder);
  } else {
    var open = items.findIndex(function (item) { return item.dataset.value === ""; });
    start = open >= 0 ? open : 0;
  }
  focusItem(start);
})();
