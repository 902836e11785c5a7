"""The drawing canvas's own toolbar (undo, redo, reset), always in view and finger-sized.

streamlit-drawable-canvas shows its toolbar only while a mouse hovers over the canvas, so on a phone or tablet
it never appears, and its icons are 14 px. The component draws inside a shadow root, out of reach of the page's
styles, so a small script adds a style to that root once the canvas is there: the toolbar stays above the
canvas, its buttons 44 px (a finger's size), and its "send to the app" button (↥) is hidden: every stroke
reaches the app as it is drawn (update_streamlit=True)."""
from __future__ import annotations

import streamlit as st

__all__ = ["show_canvas_toolbar"]

_STYLE = (".dc-root{display:flex;flex-direction:column-reverse}"
          ".dc-toolbar,.dc-toolbar[data-pinned=false]{opacity:1!important;position:static!important;"
          "padding:0 0 .4rem 0!important}"
          ".dc-icon-button{min-width:44px;min-height:44px!important}"
          ".dc-icon-button svg{width:1.4rem!important;height:1.4rem!important}"
          # the page reads every stroke as it is drawn: "send this drawing" would do nothing a person could see
          ".dc-icon-button[aria-label='Update the app with this drawing']{display:none!important}")
_SCRIPT = """<script>
(() => {
  const css = %s;
  let tries = 0;
  const apply = () => {
    let done = false;
    for (const host of document.querySelectorAll('*')) {
      const root = host.shadowRoot;
      if (!root || !root.querySelector('.dc-toolbar')) continue;
      done = true;
      if (!root.querySelector('style[data-studio-toolbar]')) {
        const style = document.createElement('style');
        style.dataset.studioToolbar = '1';
        style.textContent = css;
        root.appendChild(style);
      }
    }
    if (!done && ++tries < 100) setTimeout(apply, 200);
  };
  apply();
})();
</script>"""


def show_canvas_toolbar() -> None:
    """Call after the canvas: its toolbar visible on every device."""
    st.html(_SCRIPT % repr(_STYLE), unsafe_allow_javascript=True)
