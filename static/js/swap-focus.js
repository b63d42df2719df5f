/* What a keyboard and screen-reader user is told after an htmx swap, and where their focus goes.
 *
 * Focus. Approving a row of the inbox, posting a comment or a decision, "Load more": the swap
 * removes the focused button or field with the rest of the old fragment, and the focus fell back
 * to <body> — a keyboard user lost their place, a screen reader announced nothing (or htmx gave
 * it back to the control of the same id, and the outcome went unread). When (and only when) the
 * focus was inside the swapped target, it is moved into the new fragment, to the first of:
 *
 *   1. a field the server marked invalid (aria-invalid="true"), whose error it describes;
 *   2. the outcome notice (role="status" or "alert"), so it is read out;
 *   3. an element marked data-swap-focus (the comment just posted);
 *   4. the control with the id of the one that had the focus;
 *   5. the new fragment itself.
 *
 * Announcement. A filter form swaps its results while the focus stays on the filter: a result
 * region carrying data-announce ("12 events shown, more to load") has that text put in the
 * page's status region (#swap-status in base.html), which is read out politely.
 *
 * A swap the user did not start (a poll of a badge) never moves the focus.
 */
(function () {
  "use strict";

  document.addEventListener("htmx:beforeRequest", function (event) {
    var detail = event.detail || {};
    var target = detail.target;
    if (!detail.xhr || !target) return;
    var active = document.activeElement;
    var hadFocus = !!active && active !== document.body && target.contains(active);
    detail.xhr.stewardSwap = {
      target: target,
      targetId: target.id || null,
      parent: target.parentNode,
      before: target.previousElementSibling,
      focusedId: hadFocus ? active.id || null : null,
      hadFocus: hadFocus,
    };
  });

  function focusOn(el) {
    if (!el.matches("a[href], button, input, select, textarea, summary, [tabindex]")) {
      el.setAttribute("tabindex", "-1");
    }
    el.focus();
  }

  // The new fragment: the target itself when the swap went inside it, else what replaced it.
  function region(p) {
    if (p.target.isConnected) return p.target;
    if (p.before && p.before.isConnected) return p.before.nextElementSibling;
    if (p.parent && p.parent.isConnected) return p.parent.firstElementChild;
    return p.targetId ? document.getElementById(p.targetId) : null;
  }

  function restoreFocus(p, where) {
    if (!p.hadFocus) return;
    var byId = p.focusedId && document.getElementById(p.focusedId);
    focusOn(
      where.querySelector('[aria-invalid="true"]') ||
        where.querySelector('[role="status"], [role="alert"]') ||
        where.querySelector("[data-swap-focus]") ||
        (byId && where.contains(byId) ? byId : null) ||
        where
    );
  }

  function announce(where) {
    var status = document.getElementById("swap-status");
    var text = where.getAttribute("data-announce");
    if (!status || !text) return;
    status.textContent = ""; // the same text again is still news: clear, then set
    window.setTimeout(function () { status.textContent = text; }, 100);
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    var xhr = event.detail && event.detail.xhr;
    var p = xhr && xhr.stewardSwap;
    if (!p) return;
    xhr.stewardSwap = null; // once, though an out-of-band swap settles too
    var where = region(p);
    if (!where) return;
    restoreFocus(p, where);
    announce(where);
  });
})();
