/* Keyboard shortcuts for the reviewer inbox and proposal page (no framework, no build step).
 *
 *   j / k   next / previous proposal        o, Enter   open it
 *   a       approve                          r          reject (opens reason + comment)
 *   ?       help overlay                     Esc        close
 *
 * Shortcuts never fire while typing in a field or with a modifier key, and can be switched off
 * with the "Keyboard shortcuts" checkbox; the choice is kept in localStorage. Every action only
 * clicks or focuses a real control, so the page behaves exactly as it does without this file.
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

  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
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
    if (!list.length) return;
    var at = list.indexOf(current());
    var next = at < 0 ? (step > 0 ? 0 : list.length - 1) : Math.min(Math.max(at + step, 0), list.length - 1);
    select(list[next]);
  }

  function help() {
    var dialog = document.getElementById("shortcut-help");
    if (!dialog) return;
    if (dialog.open) dialog.close(); else if (dialog.showModal) dialog.showModal(); else dialog.setAttribute("open", "");
  }

  function approve() {
    var row = current();
    if (row) {
      var button = row.querySelector("[data-approve]");
      var link = row.querySelector("[data-approve-link]");
      if (button && !button.disabled) button.click();
      else if (link) window.location.href = link.href;
      return;
    }
    var panel = document.getElementById("decision");
    if (!panel) return;
    var unticked = panel.querySelector("input[name=acknowledge]:not(:checked)");
    if (unticked) { unticked.focus(); unticked.scrollIntoView({ block: "center" }); return; }
    var approveButton = panel.querySelector("[data-approve]");
    if (approveButton && !approveButton.disabled) approveButton.click();
  }

  function reject() {
    var row = current();
    if (row) {
      var details = row.querySelector("details.reject");
      if (!details) return;
      details.open = true;
      var reason = details.querySelector("select");
      if (reason) reason.focus();
      return;
    }
    var field = document.getElementById("reject-reason");
    if (field) { field.focus(); field.scrollIntoView({ block: "center" }); }
  }

  function open() {
    var row = current();
    if (row && row.dataset.href) window.location.href = row.dataset.href;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || !enabled()) return;
    var dialog = document.getElementById("shortcut-help");
    if (dialog && dialog.open && event.key !== "?" && event.key !== "Escape") return;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "a": approve(); break;
      case "r": reject(); break;
      case "o": open(); break;
      case "Enter": if (current() && event.target === document.body) open(); else return; break;
      case "?": help(); break;
      case "Escape":
        var row = current();
        var openReject = row && row.querySelector("details.reject[open]");
        if (openReject) openReject.open = false; else return;
        break;
      default: return;
    }
    event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-help]");
    if (button) { event.preventDefault(); help(); return; }
    var item = event.target.closest && event.target.closest("[data-item]");
    if (item && !event.target.closest("a, button, summary, input, select, textarea, label")) select(item);
  });

  document.addEventListener("change", function (event) {
    if (event.target && event.target.matches && event.target.matches("[data-shortcuts-toggle]")) {
      setEnabled(event.target.checked);
    }
  });

  // An htmx swap replaces the selected row with a fresh one: keep it selected.
  document.addEventListener("htmx:afterSettle", function () {
    var el = current();
    if (el && !el.classList.contains("selected")) {
      el.classList.add("selected");
      el.setAttribute("aria-current", "true");
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-shortcuts-toggle]").forEach(function (box) { box.checked = enabled(); });
  });
})();
