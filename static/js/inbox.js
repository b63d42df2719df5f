/* Keyboard shortcuts for the reviewer inbox and proposal page (no framework, no build step).
 *
 *   j / k   next / previous proposal        o, Enter   open it (the proposal page: its inbox)
 *   a       approve — after a confirmation   r          reject (opens reason + comment)
 *
 * Clicking an inbox row's Approve or "Approve selected" asks the same confirmation.
 *   ?       help overlay                     Esc        close (the help, the reject form)
 *
 * No shortcut decides on its own: "a" opens a confirmation dialog (Enter confirms, Esc
 * cancels) and only its confirm button clicks the real Approve button. Shortcuts never fire
 * while typing in a field or with a modifier key, and can be switched off with the "Keyboard
 * shortcuts" checkbox; the choice is kept in localStorage. The toggle and help are shown to
 * reviewers only, and only once this file runs. Every action only clicks or focuses a real
 * control, so the page behaves exactly as it does without this file. It also adds the bulk
 * bar's "Select all on this page" checkbox and its "n selected" count.
 */
(function () {
  "use strict";
  var KEY = "steward.shortcuts";
  var selectedId = null;

  function enabled() {
    try { return window.localStorage.getItem(KEY) !== "off"; } catch (e) { return true; }
  }

  function setEnabled(on) {
    try { window.localStorage.setItem(KEY, on ? "on" : "off"); } catch (e) { /* private mode */ }
  }

  // A checkbox or radio takes no letters: after ticking a lost detail, "a" still approves.
  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    if (tag === "INPUT") return !/^(checkbox|radio|button|submit|reset)$/i.test(el.type);
    return tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  function items() { return Array.prototype.slice.call(document.querySelectorAll("[data-item]")); }

  function current() {
    return selectedId ? document.getElementById(selectedId) : null;
  }

  function select(el) {
    items().forEach(function (it) { it.classList.remove("selected"); it.removeAttribute("aria-current"); });
    if (!el) { selectedId = null; return; }
    selectedId = el.id;
    el.classList.add("selected");
    el.setAttribute("aria-current", "true");
    var title = el.querySelector(".item-title");
    if (title) title.focus({ preventScroll: true });
    el.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    var list = items();
    if (!list.length) {
      // The proposal page: the next / previous proposal of the queue it was opened from.
      var link = document.querySelector(step > 0 ? "[data-queue-next]" : "[data-queue-prev]");
      if (link) window.location.href = link.href;
      return;
    }
    var at = list.indexOf(current());
    var next = at < 0 ? (step > 0 ? 0 : list.length - 1) : Math.min(Math.max(at + step, 0), list.length - 1);
    select(list[next]);
  }

  function help() {
    var dialog = document.getElementById("shortcut-help");
    if (!dialog) return;
    if (dialog.open) dialog.close(); else if (dialog.showModal) dialog.showModal(); else dialog.setAttribute("open", "");
  }

  // --- Confirmation: the only way a key or a one-click button leads to a decision --------
  //
  // An inbox row's Approve and the bulk bar's "Approve selected" ask first too: a tap on a
  // phone used to approve at once. The dialog names what is approved (the inputs and the
  // result, or each selected proposal) and what it loses (the lost details the checks found;
  // in bulk, a proposal with lost details is refused and left for its own page). The submit
  // is caught before htmx sees it; only the dialog's confirm button lets it through.

  var confirmed = null; // the button the open confirmation would click

  function confirmDialog() { return document.getElementById("shortcut-confirm"); }

  function confirming() {
    var dialog = confirmDialog();
    return !!(dialog && dialog.open);
  }

  // What the confirmation names: "proposal #12 — consolidation" for an inbox row.
  function labelOf(button, row) {
    if (button.dataset.confirmLabel) return button.dataset.confirmLabel;
    var kind = row && row.querySelector(".item-title .kind");
    var id = row && row.id ? "#" + row.id.replace(/^proposal-/, "") : "";
    return ("proposal " + id + (kind ? " — " + kind.textContent.trim() : "")).trim();
  }

  function lostOf(row) {
    var badge = row && row.querySelector(".badge.lost");
    return badge ? (badge.getAttribute("title") || "").replace(/^Lost:\s*/, "") : "";
  }

  function para(text, cls) {
    var p = document.createElement("p");
    p.textContent = text;
    if (cls) p.className = cls;
    return p;
  }

  // The rows ticked in the bulk bar, in page order.
  function tickedRows() {
    return rowBoxes().filter(function (b) { return b.checked; }).map(function (b) {
      return document.getElementById("proposal-" + b.value);
    }).filter(Boolean);
  }

  function describe(button, row, detail) {
    detail.textContent = "";
    if (button.matches("[data-bulk-approve]")) {
      var rows = tickedRows();
      var list = document.createElement("ul");
      list.className = "confirm-list";
      rows.forEach(function (r) {
        var li = document.createElement("li");
        var lost = lostOf(r);
        li.textContent = labelOf({ dataset: {} }, r) + (lost
          ? " — not approved here: it loses " + lost + " (acknowledge on its page)"
          : " — loses no detail the checks found");
        if (lost) li.className = "refused";
        list.appendChild(li);
      });
      detail.appendChild(list);
      return "Approve " + rows.length + " selected proposal" + (rows.length === 1 ? "" : "s") + "?";
    }
    if (row) {
      var flow = row.querySelector(".flow");
      if (flow) {
        var copy = flow.cloneNode(true);
        copy.removeAttribute("id");
        detail.appendChild(copy);
      }
      var lost = lostOf(row);
      detail.appendChild(para(lost ? "It loses: " + lost + "." : "It loses no detail the checks found.", "small"));
    }
    return "Approve " + labelOf(button, row) + "?";
  }

  function askToApprove(button, row) {
    var dialog = confirmDialog();
    if (!dialog || !dialog.showModal) return; // no dialog (auditor, old browser): never decide
    confirmed = button;
    var what = dialog.querySelector("[data-confirm-what]");
    var detail = dialog.querySelector("[data-confirm-detail]");
    var question = detail ? describe(button, row, detail) : "Approve " + labelOf(button, row) + "?";
    if (what) what.textContent = question;
    dialog.returnValue = "";
    dialog.showModal();
    var ok = dialog.querySelector("[data-confirm-ok]");
    if (ok) ok.focus();
  }

  function settleConfirmation() {
    var dialog = confirmDialog();
    var button = confirmed;
    confirmed = null;
    if (dialog && dialog.returnValue === "confirm" && button && button.isConnected && !button.disabled) {
      if (button.form) button.form.dataset.confirmed = "yes";
      button.click();
    } else if (button && button.isConnected) {
      button.focus({ preventScroll: true });
    }
  }

  // A one-click approve (an inbox row's, the bulk bar's) asks before it submits.
  function asksFirst(button) {
    return !!button && (button.matches("[data-item] [data-approve]") || button.matches("[data-bulk-approve]"));
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var button = event.submitter;
    if (!asksFirst(button)) return;
    if (form.dataset.confirmed === "yes") { delete form.dataset.confirmed; return; }
    if (button.matches("[data-bulk-approve]") && !tickedRows().length) return; // the server says so
    var dialog = confirmDialog();
    if (!dialog || !dialog.showModal) return; // no dialog support: the form posts as without JS
    event.preventDefault();
    event.stopImmediatePropagation();
    askToApprove(button, button.closest("[data-item]"));
  }, true);

  function approve() {
    var row = current();
    if (row) {
      var button = row.querySelector("[data-approve]");
      var link = row.querySelector("[data-approve-link]");
      if (button && !button.disabled) askToApprove(button, row);
      else if (link) window.location.href = link.href; // the page, to acknowledge: no decision
      return;
    }
    var panel = document.getElementById("decision");
    if (!panel) return;
    var unticked = panel.querySelector("input[name=acknowledge]:not(:checked)");
    if (unticked) { unticked.focus(); unticked.scrollIntoView({ block: "center" }); return; }
    var approveButton = panel.querySelector("[data-approve]");
    if (approveButton && !approveButton.disabled) askToApprove(approveButton, null);
  }

  function openReject(details) {
    if (!details) return;
    details.open = true;
    var reason = details.querySelector("select");
    if (reason) { reason.focus(); reason.scrollIntoView({ block: "center" }); }
  }

  function reject() {
    var row = current();
    if (row) { openReject(row.querySelector("details.reject")); return; }
    var panel = document.getElementById("decision");
    openReject(panel && panel.querySelector("details.reject"));
  }

  /* Esc closes an open reject (or request-changes) form — also while typing in it — and puts
   * the focus back on its summary. Returns whether it closed one. */
  function closeForm(target) {
    var details = target && target.closest && target.closest("details.reject[open], details.changes[open]");
    if (!details) {
      var scope = current() || document.getElementById("decision");
      details = scope && scope.querySelector("details.reject[open], details.changes[open]");
    }
    if (!details) return false;
    details.open = false;
    var summary = details.querySelector("summary");
    if (summary) summary.focus();
    return true;
  }

  function open() {
    var row = current();
    if (row && row.dataset.href) { window.location.href = row.dataset.href; return; }
    // The proposal page: "o" opens the inbox view it came from.
    var back = !items().length && document.querySelector("[data-queue-inbox]");
    if (back) window.location.href = back.href;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (confirming()) {
      // The modal confirmation has the focus: Enter confirms (whatever button is focused, but
      // Cancel), Esc cancels (the dialog's own cancel); no other shortcut while it is open.
      var cancel = event.target.matches && event.target.matches("[data-confirm-cancel]");
      if (event.key === "Enter" && !cancel) {
        event.preventDefault();
        confirmDialog().close("confirm");
      }
      return;
    }
    // Esc closes an open reject form even while typing in it (closing decides nothing).
    var dialog = document.getElementById("shortcut-help");
    if (event.key === "Escape" && !(dialog && dialog.open) && closeForm(event.target)) {
      event.preventDefault();
      return;
    }
    if (typing(event.target) || !enabled()) return;
    if (dialog && dialog.open && event.key !== "?" && event.key !== "Escape") return;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "a": approve(); break;
      case "r": reject(); break;
      case "o": open(); break;
      case "Enter": if (current() && event.target === document.body) open(); else return; break;
      case "?": help(); break;
      default: return;
    }
    event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-help]");
    if (button) { event.preventDefault(); help(); return; }
    var amendLink = event.target.closest && event.target.closest("[data-open-amend]");
    if (amendLink) {
      var amend = document.querySelector("#amend details");
      if (amend) amend.open = true;
    }
    var item = event.target.closest && event.target.closest("[data-item]");
    if (item && !event.target.closest("a, button, summary, input, select, textarea, label")) select(item);
  });

  document.addEventListener("change", function (event) {
    if (event.target && event.target.matches && event.target.matches("[data-shortcuts-toggle]")) {
      setEnabled(event.target.checked);
    }
  });

  // --- Bulk selection: "Select all on this page" and the count (the bar works without it) ---

  function rowBoxes() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-select-row]"));
  }

  function updateSelection() {
    var boxes = rowBoxes();
    var ticked = boxes.filter(function (b) { return b.checked; }).length;
    var all = document.querySelector("[data-select-all]");
    if (all) {
      all.checked = boxes.length > 0 && ticked === boxes.length;
      all.indeterminate = ticked > 0 && ticked < boxes.length;
      all.disabled = boxes.length === 0;
    }
    var count = document.querySelector("[data-selected-count]");
    if (count) count.textContent = ticked ? ticked + " selected" : "None selected";
  }

  document.addEventListener("change", function (event) {
    var t = event.target;
    if (!t || !t.matches) return;
    if (t.matches("[data-select-all]")) {
      rowBoxes().forEach(function (b) { b.checked = t.checked; });
      updateSelection();
    } else if (t.matches("[data-select-row]")) {
      updateSelection();
    }
  });

  // An htmx swap replaces the selected row with a fresh one: keep it selected.
  document.addEventListener("htmx:afterSettle", function () {
    updateSelection();
    var el = current();
    if (el && !el.classList.contains("selected")) {
      el.classList.add("selected");
      el.setAttribute("aria-current", "true");
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-shortcuts-toggle]").forEach(function (box) { box.checked = enabled(); });
    document.querySelectorAll("[data-shortcut-tools]").forEach(function (el) { el.hidden = false; });
    document.querySelectorAll("[data-select-all-label]").forEach(function (el) { el.hidden = false; });
    if (document.querySelector("[data-select-all]")) updateSelection();
    var dialog = confirmDialog();
    if (dialog) dialog.addEventListener("close", settleConfirmation);
  });
})();
